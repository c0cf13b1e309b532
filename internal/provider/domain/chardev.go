package domain

import (
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainChardevModel: devices.serial, console and channel (domainxml's chardev family).
// A kind left null keeps the default — one pty serial port, which libvirt also shows as
// the first console, and the guest-agent channel when qemu_agent is true — and nothing
// of it enters state (an import writes what is not that default); removing every entry
// of a kind takes it back to the default (DroppedChardevs, in Update). serial = [] is no
// serial port at all (what an import of a domain without one writes).
type domainChardevModel struct {
	Serials  []chardevModel `tfsdk:"serial"`
	Consoles []chardevModel `tfsdk:"console"`
	Channels []chardevModel `tfsdk:"channel"`
}

type chardevModel struct {
	Type       types.String `tfsdk:"type"`
	Path       types.String `tfsdk:"path"`
	Host       types.String `tfsdk:"host"`
	Port       types.Int64  `tfsdk:"port"`
	Mode       types.String `tfsdk:"mode"`
	LogFile    types.String `tfsdk:"log_file"`
	TargetType types.String `tfsdk:"target_type"`
	TargetName types.String `tfsdk:"target_name"`
}

var domainChardevs = family{
	group: groupDevices,
	attributes: map[string]schema.Attribute{
		"serial": chardevList("Serial ports, in port order (the first is the guest's ttyS0, which libvirt also shows as the "+
			"domain's first console). Given, they replace the default pty serial port; null, the domain has that one "+
			"(libvirt's console stream reads it); `[]`, the domain has no serial port (and no console mirroring one). An "+
			"import writes `[]` for a domain without serial ports.", "`isa-serial` (x86; libvirt's default when null), `usb-serial`, `pci-serial`, "+
			"`spapr-vio-serial`, `system-serial`, `sclp-serial` or `isa-debug`.", domainxml.SerialTargetTypes),
		"console": chardevList("Further consoles, e.g. a `virtio` one (the guest's hvc0). The first console, which mirrors "+
			"serial port 0, is libvirt's and follows `serial`.", "`virtio` (null: this), `sclp` or `sclplm` (s390).",
			domainxml.ConsoleTargetTypes),
		"channel": chardevList("virtio-serial channels beside the guest-agent one (`qemu_agent`): a named port the guest sees "+
			"under /dev/virtio-ports/<target_name>.", "`virtio` (null: this; the only one).", domainxml.ChannelTargetTypes),
	},
	toSpec:       chardevsToSpec,
	fromSpec:     chardevsFromSpec,
	validate:     validateChardevs,
	fillUnknowns: func(m *Model) { nullUnknowns(&m.Devices.domainChardevModel) },
}

func chardevList(desc, targetDesc string, targets []string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: desc + " Null (the default): the kind is not managed and nothing of it enters state; removing " +
			"every entry of a kind takes it back to the default." + restartNote,
		Optional: true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"type": requiredEnum("The host side: `pty` (a pseudo-terminal libvirt opens), `tcp` (`host`, `port`, `mode`), `unix` "+
				"(a socket at `path`), `file` (output appended to `path`), `null` (discarded) or `spicevmc` (needs spice `graphics`).",
				domainxml.ChardevTypes...),
			"path": tfkit.OptionalString("Absolute path of the socket (`unix`) or the output file (`file`)." + restartNote),
			"host": tfkit.OptionalString("The address to listen on or connect to (`tcp`), e.g. `127.0.0.1`." + restartNote),
			"port": schema.Int64Attribute{MarkdownDescription: "The TCP port (`tcp`)." + restartNote, Optional: true,
				Validators: []validator.Int64{int64validator.Between(1, 65535)}},
			"mode": tfkit.OptionalString("`bind` (listen) or `connect` (dial): required for `tcp`; for `unix`, null means `bind`."+restartNote,
				stringvalidator.OneOf(domainxml.ChardevModes...)),
			"log_file": tfkit.OptionalString("Absolute path of a file on the host where libvirt also writes everything the guest sends " +
				"(virtlogd)." + restartNote),
			"target_type": tfkit.OptionalString("The guest side: "+targetDesc+restartNote, stringvalidator.OneOf(targets...)),
			"target_name": tfkit.OptionalString("The channel's port name (channels only; required there), e.g. `org.example.port.0`. " +
				"`org.qemu.guest_agent.0` is `qemu_agent`'s." + restartNote),
		}},
	}
}

func chardevsToSpec(m *Model, s *domainxml.Spec) {
	s.Chardevs.Serials = specChardevs(m.Devices.Serials)
	if m.Devices.Serials != nil && s.Chardevs.Serials == nil {
		s.Chardevs.Serials = []domainxml.Chardev{} // serial = []: no serial port
	}
	s.Chardevs.Consoles = specChardevs(m.Devices.Consoles)
	s.Chardevs.Channels = specChardevs(m.Devices.Channels)
}

func specChardevs(ms []chardevModel) []domainxml.Chardev {
	var out []domainxml.Chardev
	for _, c := range ms {
		d := domainxml.Chardev{Type: c.Type.ValueString(), Path: c.Path.ValueString(), Host: c.Host.ValueString(), Mode: c.Mode.ValueString(),
			LogFile: c.LogFile.ValueString(), TargetType: c.TargetType.ValueString(), TargetName: c.TargetName.ValueString()}
		if p := specUint(c.Port); p != nil {
			d.Port = *p
		}
		out = append(out, d)
	}
	return out
}

// chardevsFromSpec shows the kinds the configuration manages (prior has them), or on
// import every kind the definition has apart from the default (serial = [] for a domain
// without serial ports). What libvirt fills in (a serial's target type, a unix socket's
// bind mode) stays null where the entry at the same place in prior left it null, and on
// import where it is libvirt's default.
func chardevsFromSpec(s domainxml.Spec, prior, m *Model) {
	importing := isImport(prior)
	c, p := s.Chardevs, prior.Devices
	// libvirt's target for the architecture (isa-serial, system-serial) is what a null
	// serial target_type means; virtio what a console's or channel's does.
	serialDefault := func(t string) bool { return t == "" || t == "isa-serial" || t == "system-serial" }
	virtio := func(t string) bool { return t == "" || t == "virtio" }
	m.Devices.domainChardevModel = domainChardevModel{
		Serials:  serialEntries(c.Serials, p.Serials, importing, serialDefault),
		Consoles: entries(c.Consoles, p.Consoles, importing, func(g domainxml.Chardev, pc *chardevModel) chardevModel { return modelChardev(g, pc, virtio) }),
		Channels: entries(c.Channels, p.Channels, importing, func(g domainxml.Chardev, pc *chardevModel) chardevModel { return modelChardev(g, pc, virtio) }),
	}
}

// serialEntries is devices.serial as state shows it: got is what the domain has (nil:
// the default pty serial port; empty: none), prior what the configuration wrote (nil:
// serial left out, shown null whatever the domain has).
func serialEntries(got []domainxml.Chardev, prior []chardevModel, importing bool, defaultTarget func(string) bool) []chardevModel {
	switch {
	case importing && got == nil, !importing && prior == nil:
		return nil
	case !importing && got == nil: // the default pty serial: as the configuration wrote it, if it did
		got = []domainxml.Chardev{{Type: "pty"}}
		if w := specChardevs(prior); domainxml.DefaultSerials(w) {
			got = w
		}
	}
	out := make([]chardevModel, 0, len(got))
	for i, g := range got {
		var pc *chardevModel
		if i < len(prior) {
			pc = &prior[i]
		}
		out = append(out, modelChardev(g, pc, defaultTarget))
	}
	return out
}

// modelChardev is g as state shows it, given p (the entry at its place in prior; nil on
// import and past prior's end); defaultTarget says which target types null means.
func modelChardev(g domainxml.Chardev, p *chardevModel, defaultTarget func(string) bool) chardevModel {
	cm := chardevModel{Type: types.StringValue(g.Type), Path: tfkit.StringOrNull(g.Path), Host: tfkit.StringOrNull(g.Host), Port: types.Int64Null(),
		Mode: tfkit.StringOrNull(g.Mode), LogFile: tfkit.StringOrNull(g.LogFile), TargetType: tfkit.StringOrNull(g.TargetType), TargetName: tfkit.StringOrNull(g.TargetName)}
	if g.Port > 0 {
		cm.Port = types.Int64Value(int64(g.Port))
	}
	var pt, pm types.String
	if p != nil {
		pt, pm = p.TargetType, p.Mode
	}
	if pt.IsNull() && (p != nil || defaultTarget(g.TargetType)) {
		cm.TargetType = types.StringNull() // libvirt's choice where none was written (v2: whatever it is)
	}
	if pm.IsNull() && g.Type == "unix" && g.Mode == "bind" {
		cm.Mode = types.StringNull()
	}
	return cm
}

// validateChardevs runs domainxml's checks on the entries whose values are all known.
func validateChardevs(m *Model, diags *diag.Diagnostics) {
	known := func(ms []chardevModel) []chardevModel {
		for _, c := range ms {
			for _, v := range []interface{ IsUnknown() bool }{c.Type, c.Path, c.Host, c.Port, c.Mode, c.LogFile, c.TargetType, c.TargetName} {
				if v.IsUnknown() {
					return nil
				}
			}
		}
		return ms
	}
	if m.QemuAgent.IsUnknown() {
		return
	}
	agent := m.QemuAgent.IsNull() || m.QemuAgent.ValueBool() // null: the default, true
	c := domainxml.Chardevs{Serials: specChardevs(known(m.Devices.Serials)), Consoles: specChardevs(known(m.Devices.Consoles)), Channels: specChardevs(known(m.Devices.Channels))}
	if err := domainxml.ValidateChardevs(c, agent); err != nil {
		lines := strings.Split(err.Error(), "\n")
		for i := range lines {
			lines[i] = "devices." + lines[i] // domainxml names serial[0], console[1], ...
		}
		diags.AddAttributeError(path.Root(groupDevices), "Invalid devices.serial, console or channel", strings.Join(lines, "\n"))
	}
}
