package domain

import (
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// A console without a listen address (libvirt's <listen type='address'/>: qemu.conf's
// vnc_listen) reads as listen = "libvirt-default" and writes back the same; the default
// stays 127.0.0.1.
func TestGraphicsListenUnset(t *testing.T) {
	for _, g := range []domainxml.Graphics{
		{Type: domainxml.GraphicsSpice, ListenUnset: true},
		{Type: domainxml.GraphicsVNC, Listen: domainxml.DefaultListen},
		{Type: domainxml.GraphicsVNC, Listen: "0.0.0.0", Port: 5901},
	} {
		m := fromSpec(domainxml.Spec{Name: "g", Graphics: g}, nil)
		if want := map[bool]string{true: listenLibvirtDefault, false: g.Listen}[g.ListenUnset]; m.Graphics.Listen.ValueString() != want {
			t.Errorf("%+v: listen %s", g, m.Graphics.Listen)
		}
		back := specFromModel(m).Graphics
		if back.ListenUnset != g.ListenUnset || back.Listen != g.Listen || back.Port != g.Port {
			t.Errorf("%+v: back %+v", g, back)
		}
	}
}
