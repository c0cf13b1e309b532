package domain

import (
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainBootModel: os.boot and os.boot_menu (domainxml's boot family). Null means
// libvirt's default (hd; no menu).
type domainBootModel struct {
	BootDevices types.List     `tfsdk:"boot"`
	BootMenu    *bootMenuModel `tfsdk:"boot_menu"`
}

// bootMenuModel is os.boot_menu (v2's boot_menu bool, now with the menu's timeout).
type bootMenuModel struct {
	Enabled   types.Bool  `tfsdk:"enabled"`
	TimeoutMS types.Int64 `tfsdk:"timeout_ms"`
}

var domainBoot = family{
	group: groupOS,
	attributes: map[string]schema.Attribute{
		"boot": schema.ListAttribute{
			MarkdownDescription: "OS-level boot order (`<os><boot dev>`): `hd`, `cdrom`, `network`, `fd`, first to try first. " +
				"Default: `hd` (or nothing, when a disk, network_interface or hostdev has `boot_order`). Excludes `boot_order` on " +
				"devices. A change rewrites the definition and restarts a running domain; removing it takes the domain back to the default.",
			ElementType: types.StringType, Optional: true,
			Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues(),
				listvalidator.ValueStringsAre(stringvalidator.OneOf(domainxml.BootDeviceNames...))},
		},
		"boot_menu": schema.SingleNestedAttribute{
			MarkdownDescription: "The firmware's boot menu (`<bootmenu enable=\"yes\" timeout=\"...\"/>`), e.g. `{ enabled = true, " +
				"timeout_ms = 3000 }`. Default: no menu. A change rewrites the definition and restarts a running domain; removing " +
				"it takes the menu away.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"enabled": schema.BoolAttribute{MarkdownDescription: "Show the menu (`true`, what null means) or not (`false`).", Optional: true},
				"timeout_ms": schema.Int64Attribute{
					MarkdownDescription: "How long the menu waits for a key, in milliseconds (0 to 65535). Default: the firmware's " +
						"own wait. Only with the menu enabled (libvirt ignores it otherwise).",
					Optional: true, Validators: []validator.Int64{int64validator.Between(0, domainxml.MaxBootMenuTimeout)},
				},
			},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.Boot = domainxml.BootOS{Devices: []string{}, Menu: new(bool)} // null: the defaults
		if tfkit.Known(m.OS.BootDevices) {
			s.Boot.Devices = listStrings(m.OS.BootDevices)
		}
		if b := m.OS.BootMenu; b != nil {
			*s.Boot.Menu = !tfkit.Known(b.Enabled) || b.Enabled.ValueBool()
			if tfkit.Known(b.TimeoutMS) {
				t := uint(b.TimeoutMS.ValueInt64())
				s.Boot.MenuTimeout = &t
			}
		}
	},
	validate: validateBootDevices,
	// What the user wrote stays as written while it is what the domain has; null stays
	// null while the domain has the defaults (hd, no menu), which null asks for: another
	// boot order or a menu is drift (and what an import writes).
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		eff := domainxml.EffectiveBootDevices(s)
		switch {
		case tfkit.Known(prior.OS.BootDevices) && slices.Equal(listStrings(prior.OS.BootDevices), eff):
			m.OS.BootDevices = prior.OS.BootDevices
		case s.Boot.Devices == nil:
			m.OS.BootDevices = types.ListNull(types.StringType)
		default:
			m.OS.BootDevices = tfkit.StringList(s.Boot.Devices)
		}
		m.OS.BootMenu = bootMenuFromSpec(s.Boot, prior.OS.BootMenu)
	},
	fillUnknowns: func(m *Model) {
		if m.OS.BootDevices.IsUnknown() {
			m.OS.BootDevices = types.ListNull(types.StringType)
		}
		if b := m.OS.BootMenu; b != nil {
			if b.Enabled.IsUnknown() {
				b.Enabled = types.BoolNull()
			}
			if b.TimeoutMS.IsUnknown() {
				b.TimeoutMS = types.Int64Null()
			}
		}
	},
}

// bootMenuFromSpec is os.boot_menu from what the domain has (b), field by field against
// what the user wrote (prior; nil: not written, which asks for no menu).
func bootMenuFromSpec(b domainxml.BootOS, prior *bootMenuModel) *bootMenuModel {
	on := b.Menu != nil && *b.Menu
	timeout := types.Int64Null()
	if on && b.MenuTimeout != nil {
		timeout = types.Int64Value(int64(*b.MenuTimeout))
	}
	switch {
	case prior == nil && !on:
		return nil
	case prior == nil:
		return &bootMenuModel{Enabled: types.BoolValue(true), TimeoutMS: timeout}
	}
	out := &bootMenuModel{Enabled: types.BoolValue(on), TimeoutMS: timeout}
	if prior.Enabled.IsNull() && on {
		out.Enabled = types.BoolNull() // null means enabled
	}
	return out
}

// validateBootDevices: os.boot and a device's boot_order exclude each other; a boot menu
// timeout needs the menu.
func validateBootDevices(m *Model, diags *diag.Diagnostics) {
	if b := m.OS.BootMenu; b != nil && tfkit.Known(b.Enabled) && !b.Enabled.ValueBool() && tfkit.Known(b.TimeoutMS) {
		diags.AddAttributeError(path.Root("os").AtName("boot_menu").AtName("timeout_ms"), "Boot menu timeout without the menu",
			fmt.Sprintf("libvirt_domain %s: os.boot_menu.timeout_ms needs enabled = true (libvirt ignores the timeout of a menu "+
				"that is off). Remove timeout_ms, or enable the menu.", m.Name.ValueString()))
	}
	if !tfkit.Known(m.OS.BootDevices) {
		return
	}
	var with []string
	for i, d := range m.Disks {
		if tfkit.Known(d.BootOrder) {
			with = append(with, fmt.Sprintf("disk %d", i))
		}
	}
	for i, n := range m.Interfaces {
		if tfkit.Known(n.BootOrder) {
			with = append(with, fmt.Sprintf("network_interface %d", i))
		}
	}
	for i, h := range m.Hostdevs {
		if tfkit.Known(h.BootOrder) {
			with = append(with, fmt.Sprintf("hostdev %d", i))
		}
	}
	if len(with) > 0 {
		diags.AddAttributeError(path.Root("os").AtName("boot"), "os.boot with boot_order",
			fmt.Sprintf("libvirt_domain %s: os.boot and the boot_order of %v exclude each other (libvirt takes one or the "+
				"other). Remove os.boot, or the boot_order of every device.", m.Name.ValueString(), with))
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
