package provider

import (
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainBootModel: boot_devices and boot_menu (domainxml's boot family). Unset means
// libvirt's default (hd; no menu), and reads back unset.
type domainBootModel struct {
	BootDevices types.List `tfsdk:"boot"`
	BootMenu    types.Bool `tfsdk:"boot_menu"`
}

var domainBoot = domainFamily{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"boot": schema.ListAttribute{
			MarkdownDescription: "OS-level boot order (`<os><boot dev>`): `hd`, `cdrom`, `network`, `fd`, first to try first. " +
				"Default: `hd` (or nothing, when a disk, network_interface or hostdev has `boot_order`). Excludes `boot_order` on " +
				"devices. A change rewrites the definition and restarts a running domain.",
			ElementType: types.StringType, Optional: true,
			Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
				listvalidator.ValueStringsAre(stringvalidator.OneOf(domainxml.BootDeviceNames...))},
		},
		"boot_menu": schema.BoolAttribute{
			MarkdownDescription: "Show the firmware's boot menu (`<bootmenu enable=\"yes\"/>`). Default: no menu. A change rewrites " +
				"the definition and restarts a running domain.",
			Optional: true,
		},
	},
	toSpec: func(m *domainModel, s *domainxml.Spec) {
		s.Boot = domainxml.BootOS{Devices: []string{}, Menu: new(bool)} // unset: the defaults
		if known(m.OS.BootDevices) {
			s.Boot.Devices = listStrings(m.OS.BootDevices)
		}
		if known(m.OS.BootMenu) {
			*s.Boot.Menu = m.OS.BootMenu.ValueBool()
		}
	},
	validate: validateBootDevices,
	// Unset stays unset while the domain has the defaults; what the user wrote stays as
	// written while it is what the domain has.
	fromSpec: func(s domainxml.Spec, prior, m *domainModel) {
		eff := domainxml.EffectiveBootDevices(s)
		switch {
		case known(prior.OS.BootDevices) && slices.Equal(listStrings(prior.OS.BootDevices), eff):
			m.OS.BootDevices = prior.OS.BootDevices
		case s.Boot.Devices == nil:
			m.OS.BootDevices = types.ListNull(types.StringType)
		default:
			m.OS.BootDevices = stringList(s.Boot.Devices)
		}
		on := s.Boot.Menu != nil && *s.Boot.Menu
		m.OS.BootMenu = types.BoolNull()
		if on || known(prior.OS.BootMenu) {
			m.OS.BootMenu = types.BoolValue(on)
		}
	},
}

// validateBootDevices: boot_devices and a device's boot_order exclude each other.
func validateBootDevices(m *domainModel, diags *diag.Diagnostics) {
	if !known(m.OS.BootDevices) {
		return
	}
	var with []string
	for i, d := range m.Disks {
		if known(d.BootOrder) {
			with = append(with, fmt.Sprintf("disk %d", i))
		}
	}
	for i, n := range m.Interfaces {
		if known(n.BootOrder) {
			with = append(with, fmt.Sprintf("network_interface %d", i))
		}
	}
	for i, h := range m.Hostdevs {
		if known(h.BootOrder) {
			with = append(with, fmt.Sprintf("hostdev %d", i))
		}
	}
	if len(with) > 0 {
		diags.AddAttributeError(path.Root("boot"), "boot_devices with boot_order",
			fmt.Sprintf("libvirt_domain %s: boot_devices and the boot_order of %v exclude each other (libvirt takes one or the "+
				"other). Remove boot_devices, or the boot_order of every device.", m.Name.ValueString(), with))
	}
}

func listStrings(l types.List) []string {
	out := []string{}
	for _, v := range l.Elements() {
		if s, ok := v.(types.String); ok {
			out = append(out, s.ValueString())
		}
	}
	return out
}
