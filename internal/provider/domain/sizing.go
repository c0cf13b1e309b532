package domain

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainSizingModel: vcpu, the memory and their hot-add headroom. Memory has two forms,
// MiB and KiB (libvirt's unit): the configuration writes one of them, state holds that
// one and leaves the other null (memoryForm).
type domainSizingModel struct {
	VCPU         types.Int64 `tfsdk:"vcpu"`
	MaxVCPU      types.Int64 `tfsdk:"max_vcpu"`
	MemoryMiB    types.Int64 `tfsdk:"memory_mib"`
	MemoryKiB    types.Int64 `tfsdk:"memory_kib"`
	MaxMemoryMiB types.Int64 `tfsdk:"max_memory_mib"`
	MaxMemoryKiB types.Int64 `tfsdk:"max_memory_kib"`
}

const exactKiB = " Import writes `%s` when the domain's value is a whole number of MiB, else `%s`."

var domainSizing = family{
	attributes: map[string]schema.Attribute{
		"vcpu": schema.Int64Attribute{
			MarkdownDescription: "Number of virtual CPUs. Growing it up to `max_vcpu` on a running domain is done live (CPU hot-add); " +
				"shrinking it restarts a running domain.",
			Required:   true,
			Validators: []validator.Int64{int64validator.Between(1, 4096)},
		},
		"max_vcpu": schema.Int64Attribute{
			MarkdownDescription: "Hot-add headroom: the maximum vCPU count (`<vcpu current=\"vcpu\">max_vcpu</vcpu>`). Default: `vcpu` " +
				"(no headroom). Changing it restarts a running domain.",
			Optional:   true,
			Validators: []validator.Int64{int64validator.Between(1, 4096)}, // >= vcpu: ValidateConfig
		},
		"memory_mib": schema.Int64Attribute{
			MarkdownDescription: "Memory in MiB (the current allocation, `<currentMemory>`). Set exactly one of `memory_mib` and " +
				"`memory_kib`. Changes up to the maximum memory (`max_memory_mib` / `max_memory_kib`) on a running domain are " +
				"applied live through the balloon." + fmt.Sprintf(exactKiB, "memory_mib", "memory_kib"),
			Optional:   true,
			Validators: []validator.Int64{int64validator.AtLeast(16)},
		},
		"memory_kib": schema.Int64Attribute{
			MarkdownDescription: "Memory in KiB, libvirt's own unit, exactly (`memory_mib` in KiB, for a size that is no whole " +
				"number of MiB). Set exactly one of `memory_mib` and `memory_kib`.",
			Optional:   true,
			Validators: []validator.Int64{int64validator.AtLeast(1)},
		},
		"max_memory_mib": schema.Int64Attribute{
			MarkdownDescription: "Memory headroom in MiB: the domain's maximum (`<memory>`). Default: the memory (no headroom). " +
				"At most one of `max_memory_mib` and `max_memory_kib`; either is compared with the memory in KiB. Changing it " +
				"restarts a running domain." + fmt.Sprintf(exactKiB, "max_memory_mib", "max_memory_kib"),
			Optional:   true,
			Validators: []validator.Int64{int64validator.AtLeast(16)}, // >= the memory: ValidateConfig
		},
		"max_memory_kib": schema.Int64Attribute{
			MarkdownDescription: "Memory headroom in KiB, exactly (`max_memory_mib` in KiB). At most one of `max_memory_mib` and " +
				"`max_memory_kib`.",
			Optional:   true,
			Validators: []validator.Int64{int64validator.AtLeast(1)},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.VCPU, s.MaxVCPU = uint(m.VCPU.ValueInt64()), uint(m.MaxVCPU.ValueInt64())
		s.MemoryKiB, s.MaxMemoryKiB = kibOf(m.MemoryMiB, m.MemoryKiB), kibOf(m.MaxMemoryMiB, m.MaxMemoryKiB)
	},
	// Each memory value in the form the prior model wrote; an unset maximum stays unset
	// (libvirt writes the ceiling either way).
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		importing := isImport(prior)
		m.VCPU = types.Int64Value(int64(s.VCPU))
		m.MemoryMiB, m.MemoryKiB = memoryForm(s.MemoryKiB, !importing && !prior.MemoryKiB.IsNull())
		m.MaxVCPU, m.MaxMemoryMiB, m.MaxMemoryKiB = types.Int64Null(), types.Int64Null(), types.Int64Null()
		if s.MaxVCPU != 0 || tfkit.Known(prior.MaxVCPU) {
			m.MaxVCPU = types.Int64Value(int64(s.EffectiveMaxVCPU()))
		}
		if s.MaxMemoryKiB != 0 || tfkit.Known(prior.MaxMemoryMiB) || tfkit.Known(prior.MaxMemoryKiB) {
			m.MaxMemoryMiB, m.MaxMemoryKiB = memoryForm(s.EffectiveMaxMemoryKiB(), !importing && !prior.MaxMemoryKiB.IsNull())
		}
	},
	validate: validateSizing,
}

// memoryFormsOK: the memory, the maximum and every NUMA cell are written in one form
// each (known), the maximum in at most one.
func memoryFormsOK(m *Model) bool {
	one := func(mib, kib types.Int64) bool { return tfkit.Known(mib) != tfkit.Known(kib) }
	ok := one(m.MemoryMiB, m.MemoryKiB) && !(tfkit.Known(m.MaxMemoryMiB) && tfkit.Known(m.MaxMemoryKiB))
	for _, c := range m.CPU.NUMACells {
		ok = ok && one(c.MemoryMiB, c.MemoryKiB)
	}
	return ok
}

// kibOf is a memory value written in either form, in KiB (0: neither is known).
func kibOf(mib, kib types.Int64) uint64 {
	if tfkit.Known(kib) {
		return uint64(kib.ValueInt64())
	}
	return uint64(mib.ValueInt64()) * domainxml.KiBPerMiB
}

// memoryForm is kib as the pair (mib, kib) of attributes: in KiB when asked for or when
// it is no whole number of MiB (a MiB value would round it), else in MiB; the other null.
func memoryForm(kib uint64, inKiB bool) (types.Int64, types.Int64) {
	if inKiB || kib%domainxml.KiBPerMiB != 0 {
		return types.Int64Null(), types.Int64Value(int64(kib))
	}
	return types.Int64Value(int64(kib / domainxml.KiBPerMiB)), types.Int64Null()
}

// memoryPair is one memory value's two attributes, by name.
type memoryPair struct {
	at                path.Path
	mibName, kibName  string
	mib, kib          types.Int64
	required, written bool
}

// check reports both forms written, or (required) neither; written says one is (or may be).
func (p *memoryPair) check(who string, diags *diag.Diagnostics) {
	unknown := p.mib.IsUnknown() || p.kib.IsUnknown()
	p.written = !p.mib.IsNull() || !p.kib.IsNull()
	switch {
	case tfkit.Known(p.mib) && tfkit.Known(p.kib):
		diags.AddAttributeError(p.at.AtName(p.kibName), fmt.Sprintf("Both %s and %s are set", p.mibName, p.kibName),
			fmt.Sprintf("%s: %s = %d and %s = %d are the same setting in MiB and in KiB: keep one of them.", who,
				p.mibName, p.mib.ValueInt64(), p.kibName, p.kib.ValueInt64()))
	case p.required && !p.written && !unknown:
		diags.AddAttributeError(p.at.AtName(p.mibName), fmt.Sprintf("Neither %s nor %s is set", p.mibName, p.kibName),
			fmt.Sprintf("%s: set the memory with %s (MiB) or %s (KiB, exact).", who, p.mibName, p.kibName))
	}
}

// attr is the attribute written (the KiB one when it is known, else the MiB one).
func (p *memoryPair) attr() string {
	if tfkit.Known(p.kib) {
		return p.kibName
	}
	return p.mibName
}

// name is the attribute written with its value ("memory_mib = 1024").
func (p *memoryPair) name() string {
	if tfkit.Known(p.kib) {
		return fmt.Sprintf("%s = %d", p.kibName, p.kib.ValueInt64())
	}
	return fmt.Sprintf("%s = %d", p.mibName, p.mib.ValueInt64())
}

// validateSizing: exactly one form of the memory, at most one of the maximum, the
// maximum not below the memory (in KiB), exactly one form of every NUMA cell's memory.
func validateSizing(m *Model, diags *diag.Diagnostics) {
	who := "libvirt_domain " + m.Name.ValueString()
	mem := memoryPair{at: path.Empty(), mibName: "memory_mib", kibName: "memory_kib", mib: m.MemoryMiB, kib: m.MemoryKiB, required: true}
	maxMem := memoryPair{at: path.Empty(), mibName: "max_memory_mib", kibName: "max_memory_kib", mib: m.MaxMemoryMiB, kib: m.MaxMemoryKiB}
	mem.check(who, diags)
	maxMem.check(who, diags)
	for i, c := range m.CPU.NUMACells {
		cell := memoryPair{at: path.Root("cpu").AtName("numa_cell").AtListIndex(i), mibName: "memory_mib", kibName: "memory_kib",
			mib: c.MemoryMiB, kib: c.MemoryKiB, required: true}
		cell.check(fmt.Sprintf("%s, cpu.numa_cell %d", who, i), diags)
	}
	if diags.HasError() || !mem.written || !maxMem.written || m.MemoryMiB.IsUnknown() || m.MemoryKiB.IsUnknown() ||
		m.MaxMemoryMiB.IsUnknown() || m.MaxMemoryKiB.IsUnknown() {
		return
	}
	memKiB, maxKiB := kibOf(m.MemoryMiB, m.MemoryKiB), kibOf(m.MaxMemoryMiB, m.MaxMemoryKiB)
	if maxKiB >= memKiB {
		return
	}
	maxAttr, least := maxMem.attr(), (memKiB+domainxml.KiBPerMiB-1)/domainxml.KiBPerMiB
	if tfkit.Known(maxMem.kib) {
		least = memKiB
	}
	memText, maxText := mem.name(), maxMem.name()
	switch { // mixed forms: the MiB one in KiB too
	case tfkit.Known(maxMem.kib) && !tfkit.Known(mem.kib):
		memText += fmt.Sprintf(" (%d KiB)", memKiB)
	case tfkit.Known(mem.kib) && !tfkit.Known(maxMem.kib):
		maxText += fmt.Sprintf(" (%d KiB)", maxKiB)
	}
	diags.AddAttributeError(path.Root(maxAttr), maxAttr+" below "+mem.attr(),
		fmt.Sprintf("%s: %s is below %s. %s is the memory ceiling: set it to %d or more, or remove it (default: the memory, no headroom).",
			who, maxText, memText, maxAttr, least))
}
