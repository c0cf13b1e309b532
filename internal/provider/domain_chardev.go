package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// domainChardevModel: the serial, console and channel blocks (domainxml's chardev
// family). A kind left out keeps the default — one pty serial port, which libvirt also
// shows as the first console, and the guest-agent channel when qemu_agent is true — and
// is not read into state (an import reads what is not that default); removing a kind's
// blocks takes it back to the default (DroppedChardevs, in Update).
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

var domainChardevs = domainFamily{
	group: groupDevices,
	blocks: map[string]schema.Block{
		"serial": chardevBlock("Serial ports, in port order (the first is the guest's ttyS0, which libvirt also shows as the "+
			"domain's first console). Given, they replace the default pty serial port; left out, the domain has that one "+
			"(libvirt's console stream reads it).", "`isa-serial` (x86; libvirt's default when left out), `usb-serial`, `pci-serial`, "+
			"`spapr-vio-serial`, `system-serial`, `sclp-serial` or `isa-debug`.", domainxml.SerialTargetTypes),
		"console": chardevBlock("Further consoles, e.g. a `virtio` one (the guest's hvc0). The first console, which mirrors "+
			"serial port 0, is libvirt's and follows the `serial` blocks.", "`virtio` (default), `sclp` or `sclplm` (s390).",
			domainxml.ConsoleTargetTypes),
		"channel": chardevBlock("virtio-serial channels beside the guest-agent one (`qemu_agent`): a named port the guest sees "+
			"under /dev/virtio-ports/<target_name>.", "`virtio` (default; the only one).", domainxml.ChannelTargetTypes),
	},
	toSpec:   chardevsToSpec,
	fromSpec: chardevsFromSpec,
	validate: validateChardevs,
}

func chardevBlock(desc, targetDesc string, targets []string) schema.ListNestedBlock {
	return schema.ListNestedBlock{
		MarkdownDescription: desc + " Left out, the kind is not managed; removing every block of a kind takes it back to the default." + restartNote,
		NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
			"type": requiredEnum("The host side: `pty` (a pseudo-terminal libvirt opens), `tcp` (`host`, `port`, `mode`), `unix` "+
				"(a socket at `path`), `file` (output appended to `path`), `null` (discarded) or `spicevmc` (needs spice `graphics`).",
				domainxml.ChardevTypes...),
			"path": optionalString("Absolute path of the socket (`unix`) or the output file (`file`)." + restartNote),
			"host": optionalString("The address to listen on or connect to (`tcp`), e.g. `127.0.0.1`." + restartNote),
			"port": schema.Int64Attribute{MarkdownDescription: "The TCP port (`tcp`)." + restartNote, Optional: true,
				Validators: []validator.Int64{int64validator.Between(1, 65535)}},
			"mode": optionalString("`bind` (listen) or `connect` (dial): required for `tcp`; for `unix`, default `bind`."+restartNote,
				stringvalidator.OneOf(domainxml.ChardevModes...)),
			"log_file": optionalString("Absolute path of a file on the host where libvirt also writes everything the guest sends " +
				"(virtlogd)." + restartNote),
			"target_type": optionalString("The guest side: "+targetDesc+restartNote, stringvalidator.OneOf(targets...)),
			"target_name": optionalString("The channel's port name (channels only; required there), e.g. `org.example.port.0`. " +
				"`org.qemu.guest_agent.0` is `qemu_agent`'s." + restartNote),
		}},
	}
}

func chardevsToSpec(m *domainModel, s *domainxml.Spec) {
	s.Chardevs.Serials = specChardevs(m.Devices.Serials)
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

// chardevsFromSpec shows the kinds the configuration manages (prior has them), or with no
// prior configuration (an import) every kind the definition has apart from the default.
// What libvirt fills in (a serial's target type, a unix socket's bind mode) stays null
// where the configuration left it out.
func chardevsFromSpec(s domainxml.Spec, prior, m *domainModel) {
	imported := prior.Name.IsNull()
	c := s.Chardevs
	if len(c.Serials) == 0 && len(prior.Devices.Serials) > 0 && domainxml.DefaultSerials(specChardevs(prior.Devices.Serials)) {
		c.Serials = specChardevs(prior.Devices.Serials) // an explicit pty serial: what parse reads as the default
	}
	m.Devices.domainChardevModel = domainChardevModel{
		Serials:  modelChardevs(c.Serials, prior.Devices.Serials, imported),
		Consoles: modelChardevs(c.Consoles, prior.Devices.Consoles, imported),
		Channels: modelChardevs(c.Channels, prior.Devices.Channels, imported),
	}
}

func modelChardevs(got []domainxml.Chardev, prior []chardevModel, imported bool) []chardevModel {
	if !imported && len(prior) == 0 {
		return nil
	}
	var out []chardevModel
	for i, g := range got {
		cm := chardevModel{Type: types.StringValue(g.Type), Path: optString(g.Path), Host: optString(g.Host), Port: types.Int64Null(),
			Mode: optString(g.Mode), LogFile: optString(g.LogFile), TargetType: optString(g.TargetType), TargetName: optString(g.TargetName)}
		if g.Port > 0 {
			cm.Port = types.Int64Value(int64(g.Port))
		}
		if i < len(prior) {
			p := prior[i]
			if p.TargetType.IsNull() {
				cm.TargetType = types.StringNull()
			}
			if p.Mode.IsNull() && g.Type == "unix" && g.Mode == "bind" {
				cm.Mode = types.StringNull()
			}
		}
		out = append(out, cm)
	}
	return out
}

// validateChardevs runs domainxml's checks on the blocks whose values are all known.
func validateChardevs(m *domainModel, diags *diag.Diagnostics) {
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
		diags.AddError("Invalid serial, console or channel block", err.Error())
	}
}
