package domain

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainPlatformModel: the firmware (domainxml's os family), at the top level.
type domainPlatformModel struct {
	Firmware types.String `tfsdk:"firmware"`
}

// domainMachineModel: os.machine (domainxml's os family).
type domainMachineModel struct {
	Machine types.String `tfsdk:"machine"`
}

var domainPlatform = family{
	attributes: map[string]schema.Attribute{
		"firmware": schema.StringAttribute{
			MarkdownDescription: "`bios` (default) or `uefi`. UEFI uses libvirt's firmware auto-selection (`<os firmware=\"efi\">`); " +
				"the domain gets its own nvram varstore, removed when the domain is destroyed. With firmware chosen by hand " +
				"(`os.loader`) it says what that loader is: `uefi` for a `pflash` one, `bios` for a `rom` one.",
			Optional:   true,
			Computed:   true,
			Default:    stringdefault.StaticString(domainxml.FirmwareBIOS),
			Validators: []validator.String{stringvalidator.OneOf(domainxml.FirmwareBIOS, domainxml.FirmwareUEFI)},
		},
	},
	toSpec:   func(m *Model, s *domainxml.Spec) { s.Firmware = m.Firmware.ValueString() },
	fromSpec: func(s domainxml.Spec, _, m *Model) { m.Firmware = types.StringValue(s.Firmware) },
}

var domainMachine = family{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"machine": schema.StringAttribute{
			MarkdownDescription: "Machine type, e.g. `q35` or `pc`. Default: libvirt's default for the architecture (`virt` for ARM `os.arch`). libvirt " +
				"expands aliases (`q35` becomes `pc-q35-7.2`, `virt` `virt-7.2`); that is not drift. Checked at plan time against the " +
				"machine types the host offers. A change rewrites the definition and restarts a running domain; removing it keeps the domain's.",
			Optional: true,
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) { s.Machine = tfkit.StringOf(m.OS.Machine) },
	// Written: what libvirt has, but a machine alias the user wrote (q35) stays as written
	// while libvirt's expansion (pc-q35-7.2) names the same machine. Not written: null. An
	// import writes what importOSDefaults left (what is not the host's default).
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.OS.Machine = types.StringNull()
		switch {
		case isImport(prior):
			m.OS.Machine = tfkit.StringOrNull(s.Machine)
		case prior.OS.Machine.IsNull():
		case tfkit.Known(prior.OS.Machine) && domainxml.SameMachine(prior.OS.Machine.ValueString(), s.Machine):
			m.OS.Machine = prior.OS.Machine
		default:
			m.OS.Machine = tfkit.StringOrNull(s.Machine)
		}
	},
	fillUnknowns: func(m *Model) { tfkit.NullIfUnknown(&m.OS.Machine) },
}
