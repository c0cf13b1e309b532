package domain

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// arch and emulator round-trip through the model (an import writes them); only an arch
// that differs from a known one in state replaces (removing it keeps the domain's, and a
// state without one is planArch's); acpi on aarch64 without UEFI is refused at plan time
// naming the domain.
func TestDomainArch(t *testing.T) {
	m := fromSpec(domainxml.Spec{Name: "a", Arch: "aarch64", Emulator: "/usr/bin/qemu-system-aarch64"}, nil)
	if m.OS.Arch.ValueString() != "aarch64" || m.OS.Emulator.ValueString() != "/usr/bin/qemu-system-aarch64" {
		t.Errorf("fromSpec: %v %v", m.OS.Arch, m.OS.Emulator)
	}
	if s := specFromModel(m); s.Arch != "aarch64" || s.Emulator != "/usr/bin/qemu-system-aarch64" {
		t.Errorf("toSpec: %q %q", s.Arch, s.Emulator)
	}
	if s := specFromModel(&Model{groupsModel: groupsModel{OS: &domainOSGroup{domainArchModel: domainArchModel{Arch: types.StringUnknown(), Emulator: types.StringNull()}}}}); s.Arch != "" || s.Emulator != "" {
		t.Errorf("unknown reads as empty: %q %q", s.Arch, s.Emulator)
	}

	for _, c := range []struct {
		state, plan types.String
		want        bool
	}{
		{types.StringValue("x86_64"), types.StringValue("aarch64"), true},
		{types.StringValue("x86_64"), types.StringValue("x86_64"), false},
		{types.StringNull(), types.StringValue("x86_64"), false},
		{types.StringValue("x86_64"), types.StringUnknown(), true},
		{types.StringValue("aarch64"), types.StringNull(), false},
	} {
		var resp stringplanmodifier.RequiresReplaceIfFuncResponse
		archReplace(context.Background(), planmodifier.StringRequest{StateValue: c.state, PlanValue: c.plan}, &resp)
		if resp.RequiresReplace != c.want {
			t.Errorf("%v -> %v: replace %v", c.state, c.plan, resp.RequiresReplace)
		}
	}

	features := func(acpi bool) types.Object {
		return types.ObjectValueMust(featuresAttrTypes, map[string]attr.Value{"acpi": types.BoolValue(acpi), "apic": types.BoolNull(),
			"pae": types.BoolNull(), "smm": types.BoolNull(), "hap": types.BoolNull(), "kvm_hidden": types.BoolNull(),
			"hyperv": types.SetNull(types.StringType),
			"vmport": types.StringNull(), "ioapic": types.StringNull(), "gic_version": types.StringNull()})
	}
	for _, c := range []struct {
		arch, firmware string
		acpi, bad      bool
	}{
		{"aarch64", "bios", true, true},
		{"aarch64", "uefi", true, false},
		{"aarch64", "bios", false, false},
		{"x86_64", "bios", true, false},
	} {
		m := withGroups(&Model{Name: types.StringValue("arm-1")})
		m.OS.Arch, m.Firmware, m.Features = types.StringValue(c.arch), types.StringValue(c.firmware), features(c.acpi)
		var diags diag.Diagnostics
		domainArch.validate(m, &diags)
		if diags.HasError() != c.bad || c.bad && !strings.Contains(diags.Errors()[0].Detail(), `libvirt_domain arm-1: features.acpi = true with os.arch = "aarch64" needs firmware = "uefi"`) {
			t.Errorf("%+v: %v", c, diags)
		}
	}
}

// The v3 rule for os: a value the configuration leaves null reads back null whatever
// libvirt has where null keeps the domain's (arch, emulator, machine) or is what the
// domain has (boot, menu, mode, enrolled keys); one it writes reads back as written
// while libvirt means the same, and libvirt's value where not (drift); an import writes
// what the domain has beyond those defaults.
func TestDomainOSFromSpec(t *testing.T) {
	on, ms := true, uint(3000)
	s := domainxml.Spec{Name: "a", Arch: "x86_64", Emulator: "/usr/bin/qemu-system-x86_64", Machine: "pc-q35-7.2",
		Boot:       domainxml.BootOS{Menu: &on, MenuTimeout: &ms},
		SMBIOS:     &domainxml.SMBIOS{Mode: "sysinfo", System: map[string]string{"product": "P"}},
		SecureBoot: &domainxml.SecureBoot{Enabled: true, EnrolledKeys: true}}
	named := func(os *domainOSGroup) *Model {
		return &Model{Name: types.StringValue("a"), groupsModel: groupsModel{OS: os}}
	}

	// Not written: the group stays null.
	if m := fromSpec(s, named(nil)); m.OS != nil {
		t.Errorf("null os read back as %+v", m.OS)
	}
	// Written with machine alone: arch, emulator null; the alias kept; boot menu, smbios
	// and secure boot as the domain has them, null where that is what null asks for.
	m := fromSpec(s, named(&domainOSGroup{domainMachineModel: domainMachineModel{Machine: types.StringValue("q35")}}))
	if m.OS == nil || m.OS.Machine.ValueString() != "q35" || !m.OS.Arch.IsNull() || !m.OS.Emulator.IsNull() {
		t.Fatalf("os: %+v", m.OS)
	}
	if b := m.OS.BootMenu; b == nil || b.Enabled.ValueBool() != true || b.TimeoutMS.ValueInt64() != 3000 {
		t.Errorf("boot menu the domain has (drift from null): %+v", b)
	}
	if sm := m.OS.SMBIOS; sm == nil || !sm.Mode.IsNull() || sm.System.Elements()["product"].(types.String).ValueString() != "P" {
		t.Errorf("smbios: %+v", sm)
	}
	if sb := m.OS.SecureBoot; sb == nil || !sb.EnrolledKeys.IsNull() {
		t.Errorf("secure boot: %+v", sb)
	}
	// Another machine than the one written is drift.
	m = fromSpec(s, named(&domainOSGroup{domainMachineModel: domainMachineModel{Machine: types.StringValue("pc")}}))
	if m.OS.Machine.ValueString() != "pc-q35-7.2" {
		t.Errorf("machine drift: %v", m.OS.Machine)
	}
	// Boot menu written { enabled = null }: stays null while the menu is on.
	g := &domainOSGroup{domainBootModel: domainBootModel{BootMenu: &bootMenuModel{Enabled: types.BoolNull(), TimeoutMS: types.Int64Value(3000)}}}
	if b := fromSpec(s, named(g)).OS.BootMenu; !b.Enabled.IsNull() || b.TimeoutMS.ValueInt64() != 3000 {
		t.Errorf("boot menu as written: %+v", b)
	}
	if got := specFromModel(named(g)).Boot; got.Menu == nil || !*got.Menu || got.MenuTimeout == nil || *got.MenuTimeout != 3000 {
		t.Errorf("boot menu to spec: %+v", got)
	}
	// Import (no prior): what importOSDefaults left of arch, emulator, machine.
	imp := fromSpec(domainxml.Spec{Name: "a", Arch: "aarch64"}, nil)
	if imp.OS == nil || imp.OS.Arch.ValueString() != "aarch64" || !imp.OS.Machine.IsNull() || imp.OS.BootMenu != nil {
		t.Errorf("import: %+v", imp.OS)
	}
	if imp := fromSpec(domainxml.Spec{Name: "a"}, nil); imp.OS != nil {
		t.Errorf("import of a domain with the defaults: %+v", imp.OS)
	}
}

// A boot menu timeout with the menu off is refused at plan time, on its path.
func TestDomainBootMenuValidate(t *testing.T) {
	m := withGroups(&Model{Name: types.StringValue("b")})
	m.OS.BootMenu = &bootMenuModel{Enabled: types.BoolValue(false), TimeoutMS: types.Int64Value(5)}
	var diags diag.Diagnostics
	validateBootDevices(m, &diags)
	if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), "os.boot_menu.timeout_ms needs enabled = true") {
		t.Errorf("%v", diags)
	}
}
