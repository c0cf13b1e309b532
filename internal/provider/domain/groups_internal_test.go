package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// The v3 rule for memory_backing, features, events and qemu: null unless written,
// written as the domain has it, on import written only where the domain differs from
// what the provider creates.

// written is a prior that is no import (it has a name), with its groups.
func written() *Model {
	return withGroups(&Model{Name: types.StringValue("d")})
}

// TestMemoryFromSpec: what a virtiofs share implies (memfd, shared) stays unset as
// written; a field left out stays null; on import it reads as libvirt has it, its
// defaults (false, none) null; virtiofs' own memory is no memory_backing.
func TestMemoryFromSpec(t *testing.T) {
	fss := []domainxml.Filesystem{{Source: "/srv", Target: "a"}}
	s := domainxml.Spec{Filesystems: fss, MemoryBacking: &domainxml.MemoryBacking{Locked: true, Source: "memfd", Access: "shared"}}
	prior := written()
	prior.MemoryBacking = emptyBackingPtr()
	prior.MemoryBacking.Locked = types.BoolValue(true)
	m := withGroups(&Model{})
	domainMemory.fromSpec(s, prior, m)
	if m.MemoryBacking != prior.MemoryBacking {
		t.Errorf("as written: %+v", m.MemoryBacking)
	}
	// The domain lost the lock: the written field shows it, the others stay null.
	domainMemory.fromSpec(domainxml.Spec{Filesystems: fss}, prior, m)
	if b := m.MemoryBacking; b == nil || b.Locked.IsNull() || b.Locked.ValueBool() || !b.Source.IsNull() || !b.HugePages.IsNull() {
		t.Errorf("drift: %+v", m.MemoryBacking)
	}
	domainMemory.fromSpec(domainxml.Spec{Filesystems: fss}, written(), m)
	if m.MemoryBacking != nil {
		t.Errorf("not written, virtiofs' own memory: %+v", m.MemoryBacking)
	}
	// Not written, but the domain was given a lock outside Terraform: drift (left out is
	// none, and the next update takes it away).
	domainMemory.fromSpec(s, written(), m)
	if b := m.MemoryBacking; b == nil || !b.Locked.ValueBool() || !b.Source.IsNull() {
		t.Errorf("not written, locked outside: %+v", m.MemoryBacking)
	}
	// Import: memfd and shared are what the share brings.
	domainMemory.fromSpec(s, withGroups(&Model{}), m)
	if b := m.MemoryBacking; b == nil || !b.Source.IsNull() || !b.Access.IsNull() || !b.Locked.ValueBool() || !b.HugePageSizeKiB.IsNull() ||
		!b.HugePages.IsNull() || !b.Discard.IsNull() {
		t.Errorf("imported: %+v", m.MemoryBacking)
	}
	domainMemory.fromSpec(domainxml.Spec{MemoryBacking: &domainxml.MemoryBacking{HugePages: true, HugePageSizeKiB: 2048, Source: "memfd"}}, withGroups(&Model{}), m)
	if b := m.MemoryBacking; b == nil || b.Source.ValueString() != "memfd" || b.HugePageSizeKiB.ValueInt64() != 2048 || !b.HugePages.ValueBool() || !b.Locked.IsNull() {
		t.Errorf("imported without a share: %+v", m.MemoryBacking)
	}
	domainMemory.fromSpec(domainxml.Spec{MemoryBacking: &domainxml.MemoryBacking{}}, withGroups(&Model{}), m)
	if m.MemoryBacking != nil {
		t.Errorf("imported, nothing this schema names: %+v", m.MemoryBacking)
	}
	domainMemory.fromSpec(domainxml.Spec{Filesystems: fss}, withGroups(&Model{}), m)
	if m.MemoryBacking != nil {
		t.Errorf("virtiofs' own memory is no memory_backing: %+v", m.MemoryBacking)
	}
}

func emptyBackingPtr() *memoryBackingModel { b := emptyBacking(); return &b }

func featuresOf(t *testing.T, m *Model) map[string]attr.Value {
	t.Helper()
	if m.Features.IsNull() {
		return nil
	}
	return m.Features.Attributes()
}

// TestFeaturesFromSpec: null unless written; what was written, member by member, as the
// domain has it; an import writes the members that differ from a new definition's (acpi
// and apic on x86, acpi with UEFI on aarch64, smm with Secure Boot).
func TestFeaturesFromSpec(t *testing.T) {
	tr, fa := true, false
	winx := domainxml.Spec{Features: &domainxml.Features{ACPI: &tr, APIC: &tr, PAE: &fa, SMM: &tr, HAP: &fa, KVMHidden: &fa, HyperV: []string{"relaxed"}}}
	m := withGroups(&Model{})
	domainFeatures.fromSpec(winx, written(), m)
	if !m.Features.IsNull() {
		t.Errorf("not written: %v", m.Features)
	}
	prior := written()
	prior.Features = types.ObjectValueMust(featuresAttrTypes, map[string]attr.Value{"acpi": types.BoolNull(), "apic": types.BoolNull(),
		"pae": types.BoolNull(), "smm": types.BoolValue(false), "hap": types.BoolNull(), "kvm_hidden": types.BoolNull(), "hyperv": types.SetNull(types.StringType),
		"vmport": types.StringNull(), "ioapic": types.StringNull(), "gic_version": types.StringNull()})
	domainFeatures.fromSpec(winx, prior, m)
	if f := featuresOf(t, m); f == nil || !f["smm"].Equal(types.BoolValue(true)) || !f["acpi"].IsNull() || !f["hyperv"].IsNull() {
		t.Errorf("written smm: %v", m.Features)
	}
	// Import: smm and hyperv differ from x86's defaults.
	domainFeatures.fromSpec(winx, withGroups(&Model{}), m)
	if f := featuresOf(t, m); f == nil || !f["smm"].Equal(types.BoolValue(true)) || !f["acpi"].IsNull() || !f["pae"].IsNull() ||
		len(f["hyperv"].(types.Set).Elements()) != 1 {
		t.Errorf("imported: %v", m.Features)
	}
	// With Secure Boot smm is what the provider gives; x86 without features (parse: nil) is the default.
	sb := winx
	sb.Features = &domainxml.Features{ACPI: &tr, APIC: &tr, PAE: &fa, SMM: &tr, HAP: &fa, KVMHidden: &fa}
	sb.SecureBoot = &domainxml.SecureBoot{Enabled: true}
	for _, s := range []domainxml.Spec{sb, {}, {Arch: "aarch64", Firmware: "uefi", Features: &domainxml.Features{ACPI: &tr, APIC: &fa, PAE: &fa, SMM: &fa, HAP: &fa, KVMHidden: &fa}}} {
		domainFeatures.fromSpec(s, withGroups(&Model{}), m)
		if !m.Features.IsNull() {
			t.Errorf("imported %+v: %v, want null", s, m.Features)
		}
	}
	// aarch64 without UEFI but with acpi: differs.
	domainFeatures.fromSpec(domainxml.Spec{Arch: "aarch64", Features: &domainxml.Features{ACPI: &tr, APIC: &fa, PAE: &fa, SMM: &fa, HAP: &fa, KVMHidden: &fa}}, withGroups(&Model{}), m)
	if f := featuresOf(t, m); f == nil || !f["acpi"].Equal(types.BoolValue(true)) || !f["apic"].IsNull() {
		t.Errorf("imported aarch64: %v", m.Features)
	}
}

// TestEventsFromSpec: null unless written; an import writes the actions that differ from
// libvirt's destroy, restart, destroy.
func TestEventsFromSpec(t *testing.T) {
	s := domainxml.Spec{Lifecycle: domainxml.Lifecycle{OnPoweroff: "destroy", OnReboot: "destroy", OnCrash: "preserve"}}
	m := withGroups(&Model{})
	domainEvents.fromSpec(s, written(), m)
	if e := m.Events; !e.OnPoweroff.IsNull() || !e.OnReboot.IsNull() || !e.OnCrash.IsNull() {
		t.Errorf("not written: %+v", e)
	}
	prior := written()
	prior.Events.OnPoweroff, prior.Events.OnReboot, prior.Events.OnCrash = types.StringValue("destroy"), types.StringNull(), types.StringValue("destroy")
	domainEvents.fromSpec(s, prior, m)
	if e := m.Events; e.OnPoweroff.ValueString() != "destroy" || !e.OnReboot.IsNull() || e.OnCrash.ValueString() != "preserve" {
		t.Errorf("written: %+v", e)
	}
	domainEvents.fromSpec(s, withGroups(&Model{}), m)
	if e := m.Events; !e.OnPoweroff.IsNull() || e.OnReboot.ValueString() != "destroy" || e.OnCrash.ValueString() != "preserve" {
		t.Errorf("imported: %+v", e)
	}
	imp := fromSpec(domainxml.Spec{Name: "d", Lifecycle: domainxml.Lifecycle{OnPoweroff: "destroy", OnReboot: "restart", OnCrash: "destroy"}}, nil)
	if imp.Events != nil {
		t.Errorf("imported defaults: %+v", imp.Events)
	}
}

// TestQEMUFromSpec: what the domain has (left out is none: anything else is drift); the
// group itself is null unless written, or on import of a domain with a command line.
func TestQEMUFromSpec(t *testing.T) {
	s := domainxml.Spec{QEMU: &domainxml.QEMUCommandline{Args: []string{"-a"}, Env: map[string]string{"X": "1"}}}
	m := withGroups(&Model{})
	prior := written()
	prior.QEMU.QEMUArgs, prior.QEMU.QEMUEnv = tfkit.StringList([]string{"-b"}), types.MapNull(types.StringType)
	// env given outside Terraform: drift (left out is none).
	domainQEMU.fromSpec(s, prior, m)
	if q := m.QEMU; len(q.QEMUArgs.Elements()) != 1 || len(q.QEMUEnv.Elements()) != 1 {
		t.Errorf("written args: %+v", q)
	}
	domainQEMU.fromSpec(domainxml.Spec{QEMU: &domainxml.QEMUCommandline{Args: []string{"-a"}}}, prior, m)
	if q := m.QEMU; len(q.QEMUArgs.Elements()) != 1 || !q.QEMUEnv.IsNull() {
		t.Errorf("args only: %+v", q)
	}
	domainQEMU.fromSpec(s, withGroups(&Model{}), m)
	if q := m.QEMU; q.QEMUArgs.IsNull() || q.QEMUEnv.IsNull() {
		t.Errorf("imported: %+v", q)
	}
	if imp := fromSpec(domainxml.Spec{Name: "d"}, nil); imp.QEMU != nil || !imp.Features.IsNull() || imp.MemoryBacking != nil {
		t.Errorf("a domain as made here imports without qemu, features, memory_backing: %+v %v %+v", imp.QEMU, imp.Features, imp.MemoryBacking)
	}
}
