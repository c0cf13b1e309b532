package provider

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
	prior := &domainModel{Name: types.StringValue("c")}
	if m := fromSpec(s, prior); m.Serials != nil || m.Channels != nil {
		t.Errorf("unmanaged kinds in state: %+v", m.domainChardevModel)
	}
	serial := chardevOf("unix")
	serial.Path = types.StringValue("/s.sock")
	prior.Serials = []chardevModel{serial}
	m := fromSpec(s, prior)
	if len(m.Serials) != 1 || !m.Serials[0].TargetType.IsNull() || !m.Serials[0].Mode.IsNull() || m.Serials[0].Path.ValueString() != "/s.sock" {
		t.Errorf("managed serial: %+v", m.Serials)
	}
	// Import: everything as read.
	m = fromSpec(s, &domainModel{})
	if len(m.Serials) != 1 || m.Serials[0].TargetType.ValueString() != "isa-serial" || m.Serials[0].Mode.ValueString() != "bind" ||
		len(m.Channels) != 1 || m.Channels[0].TargetName.ValueString() != "org.example.0" {
		t.Errorf("imported: %+v", m.domainChardevModel)
	}
	// `serial { type = "pty" }` written out reads back as written.
	prior.Serials = []chardevModel{chardevOf("pty")}
	if m := fromSpec(domainxml.Spec{Name: "c"}, prior); len(m.Serials) != 1 || m.Serials[0].Type.ValueString() != "pty" {
		t.Errorf("explicit pty serial: %+v", m.Serials)
	}
}
