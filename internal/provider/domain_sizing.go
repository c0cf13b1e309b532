package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainSizingModel: vcpu, memory_mib and their hot-add headroom, and the I/O threads.
type domainSizingModel struct {
	VCPU         types.Int64 `tfsdk:"vcpu"`
	MaxVCPU      types.Int64 `tfsdk:"max_vcpu"`
	MemoryMiB    types.Int64 `tfsdk:"memory_mib"`
	MaxMemoryMiB types.Int64 `tfsdk:"max_memory_mib"`
	IOThreads    types.Int64 `tfsdk:"iothreads"`
}

var domainSizing = domainFamily{
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
		"iothreads": defaultedInt("Number of I/O threads (`<iothreads>`) that disks can be bound to with their `iothread` "+
			"(1 to this number). Default: what the domain has (none for a domain made here); `0` removes them. Changing it "+
			"restarts a running domain.", int64validator.Between(0, 1024)),
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		s.VCPU, s.MaxVCPU = uint(m.VCPU.ValueInt64()), uint(m.MaxVCPU.ValueInt64())
		s.MemoryMiB, s.MaxMemoryMiB = uint64(m.MemoryMiB.ValueInt64()), uint64(m.MaxMemoryMiB.ValueInt64())
		s.IOThreads = nil // unknown: keep the domain's
		if known(m.IOThreads) {
			n := uint(m.IOThreads.ValueInt64())
			s.IOThreads = &n
		}
	},
	validate: validateIOThreads,
	// An unset maximum stays unset (libvirt writes the ceiling either way).
	fromSpec: func(s domainxml.Spec, prior, m *domainModel) {
		m.VCPU, m.MemoryMiB = types.Int64Value(int64(s.VCPU)), types.Int64Value(int64(s.MemoryMiB))
		m.MaxVCPU, m.MaxMemoryMiB = types.Int64Null(), types.Int64Null()
		if s.MaxVCPU != 0 || known(prior.MaxVCPU) {
			m.MaxVCPU = types.Int64Value(int64(s.EffectiveMaxVCPU()))
		}
		if s.MaxMemoryMiB != 0 || known(prior.MaxMemoryMiB) {
			m.MaxMemoryMiB = types.Int64Value(int64(s.EffectiveMaxMemoryMiB()))
		}
		m.IOThreads = types.Int64Value(int64(s.IOThreadCount()))
	},
	fillUnknowns: func(m *domainModel) {
		if m.IOThreads.IsUnknown() {
			m.IOThreads = types.Int64Value(0)
		}
	},
}

// validateIOThreads: a disk's iothread must be one of the domain's I/O threads when the
// configuration sets their number (libvirt would refuse the definition at apply).
func validateIOThreads(m *domainModel, diags *diag.Diagnostics) {
	if !known(m.IOThreads) {
		return
	}
	n := m.IOThreads.ValueInt64()
	for i, d := range m.Disks {
		if known(d.IOThread) && d.IOThread.ValueInt64() > n {
			diags.AddAttributeError(path.Root("disk").AtListIndex(i).AtName("iothread"), "Disk iothread beyond iothreads",
				fmt.Sprintf("libvirt_domain %s, disk %d: iothread = %d, but iothreads = %d. Set iothreads to %d or more, or bind the disk to a thread from 1 to %d.",
					m.Name.ValueString(), i, d.IOThread.ValueInt64(), n, d.IOThread.ValueInt64(), n))
		}
	}
}
