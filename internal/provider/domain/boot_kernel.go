package domain

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// absPath: a file on the host, by absolute path.
var absPath = []validator.String{stringvalidator.RegexMatches(validators.AbsPathRegexp, "must be an absolute path on the host")}

// domainKernelModel: direct kernel boot (domainxml's kernel family).
type domainKernelModel struct {
	Kernel *kernelModel `tfsdk:"kernel"`
}

type kernelModel struct {
	Path    types.String `tfsdk:"path"`
	Initrd  types.String `tfsdk:"initrd"`
	Cmdline types.String `tfsdk:"cmdline"`
	DTB     types.String `tfsdk:"dtb"`
}

var domainKernel = family{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"kernel": schema.SingleNestedAttribute{
			MarkdownDescription: "Direct kernel boot: QEMU loads the kernel (and initrd, command line, device tree) from the host " +
				"instead of booting a disk. The files must be readable by libvirt's QEMU user. A change rewrites the definition " +
				"and restarts a running domain; removing it boots from disks again.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"path":    schema.StringAttribute{MarkdownDescription: "Absolute path of the kernel image on the host.", Required: true, Validators: absPath},
				"initrd":  tfkit.OptionalString("Absolute path of the initrd / initramfs on the host.", absPath...),
				"cmdline": tfkit.OptionalString("The kernel command line, e.g. `console=ttyS0`."),
				"dtb":     tfkit.OptionalString("Absolute path of a device tree blob (ARM guests).", absPath...),
			},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.Kernel = &domainxml.Kernel{} // unset: none
		if k := m.OS.Kernel; k != nil {
			s.Kernel = &domainxml.Kernel{Path: tfkit.StringOf(k.Path), Initrd: tfkit.StringOf(k.Initrd), Cmdline: tfkit.StringOf(k.Cmdline), DTB: tfkit.StringOf(k.DTB)}
		}
	},
	// What the domain has: null asks for none, so a kernel there is drift (and what an
	// import writes).
	fromSpec: func(s domainxml.Spec, _, m *Model) {
		m.OS.Kernel = nil
		if k := s.Kernel; k != nil {
			m.OS.Kernel = &kernelModel{Path: types.StringValue(k.Path), Initrd: tfkit.StringOrNull(k.Initrd), Cmdline: tfkit.StringOrNull(k.Cmdline), DTB: tfkit.StringOrNull(k.DTB)}
		}
	},
	fillUnknowns: func(m *Model) {
		if k := m.OS.Kernel; k != nil {
			tfkit.NullIfUnknown(&k.Path, &k.Initrd, &k.Cmdline, &k.DTB)
		}
	},
}
