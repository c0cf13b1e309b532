package domain

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainSizingModel: vcpu, memory_mib and their hot-add headroom.
type domainSizingModel struct {
	VCPU         types.Int64 `tfsdk:"vcpu"`
	MaxVCPU      types.Int64 `tfsdk:"max_vcpu"`
	MemoryMiB    types.Int64 `tfsdk:"memory_mib"`
	MaxMemoryMiB types.Int64 `tfsdk:"max_memory_mib"`
}

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
			MarkdownDescription: "Memory in MiB (the current allocation, `<currentMemory>`). Changes up to `max_memory_mib` on a " +
				"running domain are applied live through the balloon.",
			Required:   true,
			Validators: []validator.Int64{int64validator.AtLeast(16)},
		},
		"max_memory_mib": schema.Int64Attribute{
			MarkdownDescription: "Memory headroom in MiB: the domain's maximum (`<memory>`). Default: `memory_mib` (no headroom). " +
				"Changing it restarts a running domain.",
			Optional:   true,
			Validators: []validator.Int64{int64validator.AtLeast(16)}, // >= memory_mib: ValidateConfig
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.VCPU, s.MaxVCPU = uint(m.VCPU.ValueInt64()), uint(m.MaxVCPU.ValueInt64())
		s.MemoryMiB, s.MaxMemoryMiB = uint64(m.MemoryMiB.ValueInt64()), uint64(m.MaxMemoryMiB.ValueInt64())
	},
	// An unset maximum stays unset (libvirt writes the ceiling either way).
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.VCPU, m.MemoryMiB = types.Int64Value(int64(s.VCPU)), types.Int64Value(int64(s.MemoryMiB))
		m.MaxVCPU, m.MaxMemoryMiB = types.Int64Null(), types.Int64Null()
		if s.MaxVCPU != 0 || tfkit.Known(prior.MaxVCPU) {
			m.MaxVCPU = types.Int64Value(int64(s.EffectiveMaxVCPU()))
		}
		if s.MaxMemoryMiB != 0 || tfkit.Known(prior.MaxMemoryMiB) {
			m.MaxMemoryMiB = types.Int64Value(int64(s.EffectiveMaxMemoryMiB()))
		}
	},
}
