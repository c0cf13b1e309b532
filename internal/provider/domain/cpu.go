package domain

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainCPUModeModel: cpu.mode, cpu.model, cpu.fallback and cpu.check (domainxml's cpu
// family, cpu.go).
type domainCPUModeModel struct {
	CPUMode     types.String `tfsdk:"mode"`
	CPUModel    types.String `tfsdk:"model"`
	CPUFallback types.String `tfsdk:"fallback"`
	CPUCheck    types.String `tfsdk:"check"`
}

var domainCPUMode = family{
	group: groupCPU,
	attributes: map[string]schema.Attribute{
		"mode": tfkit.OptionalString("CPU mode: `host-passthrough`, `host-model`, `custom` (with `cpu.model`) or `maximum`. "+
			"Null (the default): what the domain has; a domain made here gets libvirt's CPU for its type (under `qemu`: `custom` "+
			"with `qemu64`), which stays out of state.", stringvalidator.OneOf("host-passthrough", "host-model", "custom", "maximum")),
		"model": tfkit.OptionalString("CPU model for `cpu.mode = \"custom\"`, e.g. `Haswell-noTSX`."),
		"fallback": tfkit.OptionalString("What libvirt does when the host cannot give the guest `cpu.model` exactly: `allow` a close "+
			"model, or `forbid` it (the domain then fails to start). Needs `cpu.mode = \"custom\"` with `cpu.model`. Null: what the "+
			"domain has while mode and model stay, `allow` for a new model.", stringvalidator.OneOf(domainxml.CPUFallbacks...)),
		"check": tfkit.OptionalString("How libvirt checks the guest CPU against what the host gives it (`<cpu check>`): `none`, "+
			"`partial` (before the start) or `full` (also against what QEMU made). Needs `cpu.mode`. Null: what the domain has "+
			"while the mode stays, libvirt's default for a new mode (`none` for host-passthrough and for custom under `qemu`, "+
			"`partial` otherwise).", stringvalidator.OneOf(domainxml.CPUChecks...)),
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.CPUMode, s.CPUModel = m.CPU.CPUMode.ValueString(), m.CPU.CPUModel.ValueString()
		s.CPUFallback, s.CPUCheck = m.CPU.CPUFallback.ValueString(), m.CPU.CPUCheck.ValueString()
	},
	fromSpec: cpuModeFromSpec,
	fillUnknowns: func(m *Model) {
		tfkit.NullIfUnknown(&m.CPU.CPUMode, &m.CPU.CPUModel, &m.CPU.CPUFallback, &m.CPU.CPUCheck)
	},
	validate: validateCPUMode,
}

// cpuModeFromSpec: on import, the mode, model, fallback and check the domain has where
// they differ from what a domain made here without them gets (libvirt's CPU for the
// type and arch, libvirt's check for the mode, fallback allow for a model); features
// need a mode, so a domain with features keeps its mode. Otherwise each value the prior
// model wrote is libvirt's, and one it left null stays null.
func cpuModeFromSpec(s domainxml.Spec, prior, m *Model) {
	c := &m.CPU.domainCPUModeModel
	if isImport(prior) {
		// A custom <cpu> without a model (topology only, where libvirt adds none) says
		// nothing a mode would keep.
		if (!domainxml.IsDefaultCPU(s) || len(s.CPUFeatures) > 0) && (s.CPUMode != "custom" || s.CPUModel != "") {
			c.CPUMode, c.CPUModel = tfkit.StringOrNull(s.CPUMode), tfkit.StringOrNull(s.CPUModel)
			if s.CPUFallback != "allow" || archDefaultFallback(s) == "forbid" {
				c.CPUFallback = tfkit.StringOrNull(s.CPUFallback)
			}
			if s.CPUCheck != domainxml.DefaultCPUCheck(s.CPUMode, s.Type) {
				c.CPUCheck = tfkit.StringOrNull(s.CPUCheck)
			}
		}
		return
	}
	p := prior.CPU.domainCPUModeModel
	c.CPUMode, c.CPUModel = cpuKeptString(p.CPUMode, s.CPUMode), cpuKeptString(p.CPUModel, s.CPUModel)
	c.CPUFallback, c.CPUCheck = cpuKeptString(p.CPUFallback, s.CPUFallback), cpuKeptString(p.CPUCheck, s.CPUCheck)
}

// archDefaultFallback is the fallback of the arch's default CPU (ARM under TCG:
// cortex-a57, forbid) when s names that model: a fresh definition gets it, so an import
// of allow must say so.
func archDefaultFallback(s domainxml.Spec) string {
	d := domainxml.DefaultCPU(s.Arch, s.Type)
	if d == nil || d.Model == nil || d.Model.Value != s.CPUModel {
		return ""
	}
	return d.Model.Fallback
}

// cpuKeptString is libvirt's value v where the prior model wrote one, else null.
func cpuKeptString(prior types.String, v string) types.String {
	if !tfkit.Known(prior) {
		return types.StringNull()
	}
	return tfkit.StringOrNull(v)
}

// validateCPUMode: a model goes with the custom mode only, and the custom mode needs one;
// a fallback needs a model, a check a mode (libvirt would drop either).
func validateCPUMode(m *Model, diags *diag.Diagnostics) {
	c := m.CPU.domainCPUModeModel
	at := func(name string) path.Path { return path.Root(groupCPU).AtName(name) }
	mode := c.CPUMode.ValueString()
	switch {
	case tfkit.Known(c.CPUModel) && tfkit.Known(c.CPUMode) && mode != "custom":
		diags.AddAttributeError(at("model"), "cpu.model needs cpu.mode = \"custom\"",
			fmt.Sprintf("cpu.model names a CPU model, which only cpu.mode = \"custom\" uses; cpu.mode is %q. Remove cpu.model or set cpu.mode = \"custom\".", mode))
	case tfkit.Known(c.CPUModel) && c.CPUMode.IsNull():
		diags.AddAttributeError(at("model"), "cpu.model needs cpu.mode = \"custom\"",
			"cpu.model names a CPU model, which only cpu.mode = \"custom\" uses, and cpu.mode is not set. Set cpu.mode = \"custom\".")
	case tfkit.Known(c.CPUMode) && mode == "custom" && c.CPUModel.IsNull():
		diags.AddAttributeError(at("model"), "cpu.mode \"custom\" needs cpu.model",
			"Set cpu.model to a CPU model the host knows, e.g. \"qemu64\" or \"Haswell-noTSX\".")
	}
	if tfkit.Known(c.CPUFallback) && (c.CPUModel.IsNull() || (tfkit.Known(c.CPUMode) && mode != "custom") || c.CPUMode.IsNull()) {
		diags.AddAttributeError(at("fallback"), "cpu.fallback needs cpu.model",
			"cpu.fallback says what libvirt does when the host cannot give the guest cpu.model exactly; set cpu.mode = \"custom\" "+
				"and cpu.model, or remove cpu.fallback.")
	}
	if tfkit.Known(c.CPUCheck) && c.CPUMode.IsNull() {
		diags.AddAttributeError(at("check"), "cpu.check needs cpu.mode",
			"Without cpu.mode the domain keeps the CPU libvirt gave it, and libvirt's check with it. Set cpu.mode (e.g. "+
				"\"host-model\", or \"custom\" with cpu.model), or remove cpu.check.")
	}
}
