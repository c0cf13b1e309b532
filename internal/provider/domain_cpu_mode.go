package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainCPUModeModel: cpu.mode and cpu.model (domainxml's cpu family).
type domainCPUModeModel struct {
	CPUMode  types.String `tfsdk:"mode"`
	CPUModel types.String `tfsdk:"model"`
}

var domainCPUMode = domainFamily{
	group: groupCPU,
	attributes: map[string]schema.Attribute{
		"mode": schema.StringAttribute{
			MarkdownDescription: "CPU mode: `host-passthrough`, `host-model` or `custom` (with `cpu_model`). Default: libvirt's " +
				"(for `qemu` domains that is `custom` with `qemu64`, shown here once created).",
			Optional:      true,
			Computed:      true,
			Validators:    []validator.String{stringvalidator.OneOf("host-passthrough", "host-model", "custom")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"model": schema.StringAttribute{
			MarkdownDescription: "CPU model for `cpu_mode = \"custom\"`, e.g. `Haswell-noTSX`.",
			Optional:            true,
			Computed:            true,
			// Kept from state by ModifyPlan while cpu_mode stays the same.
		},
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		s.CPUMode, s.CPUModel = m.CPU.CPUMode.ValueString(), m.CPU.CPUModel.ValueString()
	},
	fromSpec: func(s domainxml.Spec, _, m *domainModel) {
		m.CPU.CPUMode, m.CPU.CPUModel = optString(s.CPUMode), optString(s.CPUModel)
	},
	fillUnknowns: func(m *domainModel) { nullIfUnknown(&m.CPU.CPUMode, &m.CPU.CPUModel) },
	validate:     validateCPUMode,
}

// validateCPUMode: a model goes with the custom mode only, and the custom mode needs one.
func validateCPUMode(m *domainModel, diags *diag.Diagnostics) {
	if known(m.CPU.CPUModel) && known(m.CPU.CPUMode) && m.CPU.CPUMode.ValueString() != "custom" {
		diags.AddAttributeError(path.Root("cpu_model"), "cpu_model needs cpu_mode = \"custom\"",
			fmt.Sprintf("cpu_model names a CPU model, which only cpu_mode = \"custom\" uses; cpu_mode is %q. Remove cpu_model or set cpu_mode = \"custom\".", m.CPU.CPUMode.ValueString()))
	}
	if known(m.CPU.CPUMode) && m.CPU.CPUMode.ValueString() == "custom" && m.CPU.CPUModel.IsNull() {
		diags.AddAttributeError(path.Root("cpu_model"), "cpu_mode \"custom\" needs cpu_model",
			"Set cpu_model to a CPU model the host knows, e.g. \"qemu64\" or \"Haswell-noTSX\".")
	}
}
