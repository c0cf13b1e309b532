package domainxml

import "libvirt.org/go/libvirtxml"

// Graphics: the console (vnc, spice or none) and where it listens.

// Graphics is the console: vnc, spice or none, listening on Listen.
type Graphics struct {
	Type   string
	Listen string
}

var graphicsFamily = family{
	name:     "graphics",
	validate: func(*Spec) error { return nil },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.Devices.Graphics = buildGraphics(d.Devices.Graphics, s.Graphics)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		p.Spec.Graphics = Graphics{Type: GraphicsNone}
		if d.Devices == nil {
			return
		}
		for _, g := range d.Devices.Graphics {
			switch {
			case g.VNC != nil:
				p.Spec.Graphics = Graphics{Type: GraphicsVNC, Listen: listenOf(g.VNC.Listen, g.VNC.Listeners)}
				p.GraphicsPort = max(g.VNC.Port, 0)
			case g.Spice != nil:
				p.Spec.Graphics = Graphics{Type: GraphicsSpice, Listen: listenOf(g.Spice.Listen, g.Spice.Listeners)}
				p.GraphicsPort = max(g.Spice.Port, 0)
			default:
				continue
			}
			return
		}
	},
	// Without graphics, where it would listen does not matter.
	same: func(a, b Spec) bool {
		return a.Graphics == b.Graphics || a.Graphics.Type == GraphicsNone && b.Graphics.Type == GraphicsNone
	},
}

func buildGraphics(existing []libvirtxml.DomainGraphic, g Graphics) []libvirtxml.DomainGraphic {
	listen := g.Listen
	if listen == "" {
		listen = DefaultListen
	}
	listeners := []libvirtxml.DomainGraphicListener{{Address: &libvirtxml.DomainGraphicListenerAddress{Address: listen}}}
	var out []libvirtxml.DomainGraphic
	switch g.Type {
	case GraphicsVNC, "":
		out = append(out, libvirtxml.DomainGraphic{VNC: &libvirtxml.DomainGraphicVNC{Port: -1, AutoPort: "yes", Listen: listen, Listeners: listeners}})
	case GraphicsSpice:
		out = append(out, libvirtxml.DomainGraphic{Spice: &libvirtxml.DomainGraphicSpice{Port: -1, AutoPort: "yes", Listen: listen, Listeners: listeners}})
	}
	// Keep graphics of other kinds the user did not declare (e.g. egl-headless).
	for _, e := range existing {
		if e.VNC == nil && e.Spice == nil {
			out = append(out, e)
		}
	}
	return out
}

// listenOf is the listen address; none given means libvirt's default, 127.0.0.1.
func listenOf(attr string, ls []libvirtxml.DomainGraphicListener) string {
	if attr != "" {
		return attr
	}
	for _, l := range ls {
		if l.Address != nil && l.Address.Address != "" {
			return l.Address.Address
		}
	}
	return DefaultListen
}
