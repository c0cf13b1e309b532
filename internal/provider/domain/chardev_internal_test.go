package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

func chardevOf(typ string) chardevModel {
	return chardevModel{Type: types.StringValue(typ), Path: types.StringNull(), Host: types.StringNull(), Port: types.Int64Null(),
		Mode: types.StringNull(), LogFile: types.StringNull(), TargetType: types.StringNull(), TargetName: types.StringNull()}
}

// Character devices read into state only where the configuration manages the kind (or
// on import); what libvirt fills in (a serial's target type, a unix socket's bind mode)
// stays null as written, and an explicit pty serial (read as the default) stays.
func TestChardevsFromSpec(t *testing.T) {
	s := domainxml.Spec{Name: "c", Chardevs: domainxml.Chardevs{
		Serials:  []domainxml.Chardev{{Type: "unix", Path: "/s.sock", Mode: "bind", TargetType: "isa-serial"}},
		Channels: []domainxml.Chardev{{Type: "null", TargetType: "virtio", TargetName: "org.example.0"}},
	}}
	prior := withGroups(&Model{Name: types.StringValue("c")})
	if m := fromSpec(s, prior); m.Devices.Serials != nil || m.Devices.Channels != nil {
		t.Errorf("unmanaged kinds in state: %+v", m.Devices.domainChardevModel)
	}
	serial := chardevOf("unix")
	serial.Path = types.StringValue("/s.sock")
	prior.Devices.Serials = []chardevModel{serial}
	m := fromSpec(s, prior)
	if len(m.Devices.Serials) != 1 || !m.Devices.Serials[0].TargetType.IsNull() || !m.Devices.Serials[0].Mode.IsNull() || m.Devices.Serials[0].Path.ValueString() != "/s.sock" {
		t.Errorf("managed serial: %+v", m.Devices.Serials)
	}
	// Import: everything as read, but libvirt's defaults (isa-serial, bind, virtio).
	m = fromSpec(s, &Model{})
	if len(m.Devices.Serials) != 1 || !m.Devices.Serials[0].TargetType.IsNull() || !m.Devices.Serials[0].Mode.IsNull() ||
		len(m.Devices.Channels) != 1 || m.Devices.Channels[0].TargetName.ValueString() != "org.example.0" || !m.Devices.Channels[0].TargetType.IsNull() {
		t.Errorf("imported: %+v", m.Devices.domainChardevModel)
	}
	s.Chardevs.Serials[0].TargetType, s.Chardevs.Serials[0].Mode = "pci-serial", "connect"
	if m = fromSpec(s, &Model{}); m.Devices.Serials[0].TargetType.ValueString() != "pci-serial" || m.Devices.Serials[0].Mode.ValueString() != "connect" {
		t.Errorf("imported, not the defaults: %+v", m.Devices.Serials)
	}
	// The default pty serial alone imports no group.
	if m := fromSpec(domainxml.Spec{Name: "c"}, &Model{}); m.Devices != nil {
		t.Errorf("default serial imported: %+v", m.Devices)
	}
	// `serial = [{ type = "pty" }]` written out reads back as written.
	prior.Devices.Serials = []chardevModel{chardevOf("pty")}
	if m := fromSpec(domainxml.Spec{Name: "c"}, prior); len(m.Devices.Serials) != 1 || m.Devices.Serials[0].Type.ValueString() != "pty" {
		t.Errorf("explicit pty serial: %+v", m.Devices.Serials)
	}
	// No serial port: an import writes serial = [] (the default pty would be one too many),
	// and serial = [] reads back as [] (or the pty the domain has, a change to plan).
	none := domainxml.Spec{Name: "c", Chardevs: domainxml.Chardevs{Serials: []domainxml.Chardev{}}}
	if m := fromSpec(none, &Model{}); m.Devices == nil || m.Devices.Serials == nil || len(m.Devices.Serials) != 0 {
		t.Errorf("no serial imported: %+v", m.Devices)
	}
	prior.Devices.Serials = []chardevModel{}
	if m := fromSpec(none, prior); m.Devices.Serials == nil || len(m.Devices.Serials) != 0 {
		t.Errorf("serial = [] read back: %+v", m.Devices.Serials)
	}
	if m := fromSpec(domainxml.Spec{Name: "c"}, prior); len(m.Devices.Serials) != 1 || m.Devices.Serials[0].Type.ValueString() != "pty" {
		t.Errorf("serial = [] on a domain with the default pty: %+v", m.Devices.Serials)
	}
	var got domainxml.Spec
	chardevsToSpec(prior, &got)
	if got.Chardevs.Serials == nil || len(got.Chardevs.Serials) != 0 {
		t.Errorf("serial = [] to spec: %#v", got.Chardevs.Serials)
	}
	prior.Devices.Serials = nil
	if chardevsToSpec(prior, &got); got.Chardevs.Serials != nil {
		t.Errorf("serial null to spec: %#v", got.Chardevs.Serials)
	}
}
