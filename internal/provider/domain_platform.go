package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainPlatformModel: machine type, firmware and CPU (domainxml's os and cpu families).
type domainPlatformModel struct {
	Machine  types.String `tfsdk:"machine"`
	CPUMode  types.String `tfsdk:"cpu_mode"`
	CPUModel types.String `tfsdk:"cpu_model"`
	Firmware types.String `tfsdk:"firmware"`
}

var domainPlatform = domainFamily{
	attributes: map[string]schema.Attribute{
		"machine": schema.StringAttribute{
			MarkdownDescription: "Machine type, e.g. `q35` or `pc`. Default: libvirt's default for the architecture (`virt` for ARM `arch`). libvirt expands " +
				"aliases (`q35` becomes `pc-q35-7.2`, `virt` `virt-7.2`); that is not drift.",
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"cpu_mode": schema.StringAttribute{
			MarkdownDescription: "CPU mode: `host-passthrough`, `host-model` or `custom` (with `cpu_model`). Default: libvirt's " +
				"(for `qemu` domains that is `custom` with `qemu64`, shown here once created).",
			Optional:      true,
			Computed:      true,
			Validators:    []validator.String{stringvalidator.OneOf("host-passthrough", "host-model", "custom")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"cpu_model": schema.StringAttribute{
			MarkdownDescription: "CPU model for `cpu_mode = \"custom\"`, e.g. `Haswell-noTSX`.",
			Optional:            true,
			Computed:            true,
			// Kept from state by ModifyPlan while cpu_mode stays the same.
		},
		"firmware": schema.StringAttribute{
			MarkdownDescription: "`bios` (default) or `uefi`. UEFI uses libvirt's firmware auto-selection (`<os firmware=\"efi\">`); " +
				"the domain gets its own nvram varstore, removed when the domain is destroyed.",
			Optional:   true,
			Computed:   true,
			Default:    stringdefault.StaticString(domainxml.FirmwareBIOS),
			Validators: []validator.String{stringvalidator.OneOf(domainxml.FirmwareBIOS, domainxml.FirmwareUEFI)},
		},
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		s.Machine, s.Firmware = m.Machine.ValueString(), m.Firmware.ValueString()
		s.CPUMode, s.CPUModel = m.CPUMode.ValueString(), m.CPUModel.ValueString()
	},
	// A machine alias the user wrote (q35) stays as written while libvirt's expansion
	// (pc-q35-7.2) names the same machine.
	fromSpec: func(s domainxml.Spec, prior, m *domainModel) {
		m.Machine, m.Firmware = types.StringValue(s.Machine), types.StringValue(s.Firmware)
		m.CPUMode, m.CPUModel = optString(s.CPUMode), optString(s.CPUModel)
		if known(prior.Machine) && domainxml.SameMachine(prior.Machine.ValueString(), s.Machine) {
			m.Machine = prior.Machine
		}
	},
	fillUnknowns: func(m *domainModel) { nullIfUnknown(&m.Machine, &m.CPUMode, &m.CPUModel) },
}
