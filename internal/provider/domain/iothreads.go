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

// domainIOThreadsModel: cpu.iothreads (domainxml's iothreads family).
type domainIOThreadsModel struct {
	IOThreads types.Int64 `tfsdk:"iothreads"`
}

var domainIOThreads = family{
	group: groupCPU,
	attributes: map[string]schema.Attribute{
		"iothreads": schema.Int64Attribute{MarkdownDescription: "Number of I/O threads (`<iothreads>`) that disks can be bound to " +
			"with their `iothread` (1 to this number). Null (the default): what the domain has (none for a domain made here); `0` " +
			"removes them. Changing it restarts a running domain.", Optional: true, Validators: []validator.Int64{int64validator.Between(0, 1024)}},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.IOThreads = nil // null: keep the domain's
		if tfkit.Known(m.CPU.IOThreads) {
			n := uint(m.CPU.IOThreads.ValueInt64())
			s.IOThreads = &n
		}
	},
	validate: validateIOThreads,
	// On import the domain's count where it has I/O threads (a domain made here has
	// none); otherwise libvirt's count where the prior model wrote one.
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.CPU.IOThreads = types.Int64Null()
		if n := s.IOThreadCount(); (isImport(prior) && n > 0) || tfkit.Known(prior.CPU.IOThreads) {
			m.CPU.IOThreads = types.Int64Value(int64(n))
		}
	},
	fillUnknowns: func(m *Model) {
		if m.CPU.IOThreads.IsUnknown() {
			m.CPU.IOThreads = types.Int64Null()
		}
	},
}

// validateIOThreads: a disk's iothread must be one of the domain's I/O threads when the
// configuration sets their number (libvirt would refuse the definition at apply).
func validateIOThreads(m *Model, diags *diag.Diagnostics) {
	if !tfkit.Known(m.CPU.IOThreads) {
		return
	}
	n := m.CPU.IOThreads.ValueInt64()
	for i, d := range m.Disks {
		if tfkit.Known(d.IOThread) && d.IOThread.ValueInt64() > n {
			diags.AddAttributeError(path.Root("disk").AtListIndex(i).AtName("iothread"), "Disk iothread beyond cpu.iothreads",
				fmt.Sprintf("libvirt_domain %s, disk %d: iothread = %d, but cpu.iothreads = %d. Set cpu.iothreads to %d or more, or bind the disk to a thread from 1 to %d.",
					m.Name.ValueString(), i, d.IOThread.ValueInt64(), n, d.IOThread.ValueInt64(), n))
		}
	}
}
