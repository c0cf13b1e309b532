package domainxml

import (
	"errors"
	"fmt"
	"regexp"

	"libvirt.org/go/libvirtxml"
)

// Graphics: the console (vnc, spice or none), where it listens, its port, websocket,
// keymap and password.

// Graphics is the console: vnc, spice or none, listening on Listen.
type Graphics struct {
	Type   string
	Listen string
	// Port is the fixed TCP port; 0: libvirt picks one at each start (autoport). The
	// definition then says -1 and only the live XML has the port (Parsed.GraphicsPort).
	Port int
	// Websocket is VNC's websocket port: 0 none, -1 libvirt picks one.
	Websocket int
	Keymap    string // e.g. "en-us"; empty: QEMU's default
	// Password is the console password (passwd). nil keeps what the definition has (a
	// write-only password that is not being changed; parsed: none); "" is none. libvirt
	// prints it only in XML read with the secure flag, as GetDomainStatus reads definitions.
	Password *string
	// PasswordVersion is the write-only password's version (graphics_password_wo_version):
	// a change means the password is written again. Not in the XML; parse leaves it empty.
	PasswordVersion string
}

// settings is g without its password: what a password change leaves alone.
func (g Graphics) settings() Graphics {
	g.Password, g.PasswordVersion = nil, ""
	return g
}

// keymapRegexp is QEMU's keymap names: a language, optionally a region (de, en-us, fr-ch).
var keymapRegexp = regexp.MustCompile(`^[a-z]{2}(-[a-z]{2})?$`)

var graphicsFamily = family{
	name:     "graphics",
	validate: func(s *Spec) error { return validateGraphics(s.Graphics) },
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
				v := g.VNC
				p.Spec.Graphics = Graphics{Type: GraphicsVNC, Listen: listenOf(v.Listen, v.Listeners), Port: fixedPort(v.Port, v.AutoPort),
					Websocket: v.WebSocket, Keymap: v.Keymap, Password: passwordOf(v.Passwd)}
				p.GraphicsPort = max(v.Port, 0)
			case g.Spice != nil:
				v := g.Spice
				p.Spec.Graphics = Graphics{Type: GraphicsSpice, Listen: listenOf(v.Listen, v.Listeners), Port: fixedPort(v.Port, v.AutoPort),
					Keymap: v.Keymap, Password: passwordOf(v.Passwd)}
				p.GraphicsPort = max(v.Port, 0)
			default:
				continue
			}
			return
		}
	},
	same:   func(a, b Spec) bool { return sameGraphics(a.Graphics, b.Graphics) },
	live:   graphicsLive,
	derive: deriveGraphics,
}

// deriveGraphics leaves a clone's console ports and sockets to libvirt: a fixed VNC or
// SPICE port (and SPICE's TLS port) becomes autoport, a fixed VNC websocket port one
// libvirt picks (-1), and a listen socket path one libvirt places in the domain's own
// directory. Two domains cannot listen on one port or socket.
func deriveGraphics(d *libvirtxml.Domain, _ *CloneSpec) error {
	for i := range d.Devices.Graphics {
		g := &d.Devices.Graphics[i]
		if v := g.VNC; v != nil {
			if v.Port > 0 {
				v.Port, v.AutoPort = -1, "yes"
			}
			if v.WebSocket > 0 {
				v.WebSocket = -1
			}
			v.Socket = ""
			clearListenSockets(v.Listeners)
		}
		if v := g.Spice; v != nil {
			if v.Port > 0 || v.TLSPort > 0 {
				v.Port, v.TLSPort, v.AutoPort = -1, 0, "yes"
			}
			clearListenSockets(v.Listeners)
		}
	}
	return nil
}

func clearListenSockets(ls []libvirtxml.DomainGraphicListener) {
	for _, l := range ls {
		if l.Socket != nil {
			l.Socket.Socket = ""
		}
	}
}

// sameGraphics: without graphics, nothing else matters; a password that is kept (nil)
// matches any.
func sameGraphics(a, b Graphics) bool {
	if a.Type == GraphicsNone && b.Type == GraphicsNone {
		return true
	}
	if a.settings() != b.settings() || a.PasswordVersion != b.PasswordVersion {
		return false
	}
	return a.Password == nil || b.Password == nil || *a.Password == *b.Password
}

// graphicsLive: only the password changes live (virDomainUpdateDeviceFlags on the
// graphics device; QEMU sets the new VNC/SPICE password without a restart). The device
// XML is the definition's, so that what QEMU compares (ports, listen, keymap) matches.
func graphicsLive(old, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
	if old.Graphics.settings() != next.Graphics.settings() {
		return nil, "graphics changes (only its password changes live)"
	}
	var existing []libvirtxml.DomainGraphic
	if cur != nil && cur.Devices != nil {
		existing = cur.Devices.Graphics
	}
	text := ""
	if gs := buildGraphics(existing, next.Graphics); len(gs) > 0 {
		text, _ = gs[0].Marshal() // a struct built here always marshals
	}
	return []LiveOp{{Kind: LiveUpdateDevice, Noun: "graphics", Device: next.Graphics.Type, XML: text}}, ""
}

// passwordOf is a parsed password: nil for none (a definition read with the secure flag
// has it whenever it is set).
func passwordOf(passwd string) *string {
	if passwd == "" {
		return nil
	}
	return &passwd
}

// fixedPort is the spec's port for a definition's port and autoport: 0 when libvirt picks it.
func fixedPort(port int, autoport string) int {
	if autoport == "yes" || port <= 0 {
		return 0
	}
	return port
}

func validateGraphics(g Graphics) error {
	var errs []error
	if g.Type == GraphicsNone || g.Type == "" && g.Port == 0 && g.Websocket == 0 && g.Keymap == "" {
		return nil
	}
	if g.Type == GraphicsVNC && g.Port != 0 && (g.Port < 5900 || g.Port > 65535) {
		errs = append(errs, fmt.Errorf("graphics: VNC port %d is outside 5900-65535 (QEMU's display number is port - 5900); "+
			"use a port in that range or leave it out (autoport)", g.Port))
	}
	if g.Port < 0 || g.Port > 65535 {
		errs = append(errs, fmt.Errorf("graphics: port %d is not a TCP port (1-65535)", g.Port))
	}
	if g.Websocket != 0 && g.Type != GraphicsVNC {
		errs = append(errs, fmt.Errorf("graphics: websocket is for VNC only, the console is %q; remove websocket or use type = \"vnc\"", g.Type))
	}
	if g.Websocket < -1 || g.Websocket > 65535 {
		errs = append(errs, fmt.Errorf("graphics: websocket %d is neither -1 (libvirt picks a port) nor a TCP port (1-65535)", g.Websocket))
	}
	if g.Keymap != "" && !keymapRegexp.MatchString(g.Keymap) {
		errs = append(errs, fmt.Errorf("graphics: keymap %q is not a QEMU keymap name such as \"en-us\", \"de\" or \"fr-ch\"", g.Keymap))
	}
	return errors.Join(errs...)
}

func buildGraphics(existing []libvirtxml.DomainGraphic, g Graphics) []libvirtxml.DomainGraphic {
	listen := g.Listen
	if listen == "" {
		listen = DefaultListen
	}
	listeners := []libvirtxml.DomainGraphicListener{{Address: &libvirtxml.DomainGraphicListenerAddress{Address: listen}}}
	port, autoport := -1, "yes"
	if g.Port > 0 {
		port, autoport = g.Port, "no"
	}
	passwd := keptPassword(existing, g)
	// A console of the same type keeps what the schema does not type (VNC's sharePolicy,
	// a password's validity, SPICE's channels and compression, ...), and, while the spec
	// leaves listen to the default (the schema's default is DefaultListen, so that value
	// too), a socket it listens on: a domain made elsewhere loses nothing on update (#25).
	var vnc libvirtxml.DomainGraphicVNC
	var spice libvirtxml.DomainGraphicSpice
	for i := len(existing) - 1; i >= 0; i-- { // the first of each type
		if e := existing[i]; e.VNC != nil {
			vnc = *e.VNC
		} else if e.Spice != nil {
			spice = *e.Spice
		}
	}
	var out []libvirtxml.DomainGraphic
	switch g.Type {
	case GraphicsVNC, "":
		x := vnc
		x.WebSocket, x.Keymap, x.Passwd = g.Websocket, g.Keymap, passwd
		if (g.Listen != "" && g.Listen != DefaultListen) || !socketOnly(x.Socket, x.Listeners) {
			x.Port, x.AutoPort, x.Listen, x.Listeners, x.Socket = port, autoport, listen, listeners, ""
		} else if len(x.Listeners) > 0 {
			// libvirt prints a socket both as <graphics socket=...> and as its <listen>
			// child, and its own schema refuses the two together (define --validate).
			x.Socket = ""
		}
		out = append(out, libvirtxml.DomainGraphic{VNC: &x})
	case GraphicsSpice:
		x := spice
		x.Port, x.AutoPort, x.Keymap, x.Passwd, x.Listen, x.Listeners = port, autoport, g.Keymap, passwd, listen, listeners
		out = append(out, libvirtxml.DomainGraphic{Spice: &x})
	}
	// Keep graphics of other kinds the user did not declare (e.g. egl-headless).
	for _, e := range existing {
		if e.VNC == nil && e.Spice == nil {
			out = append(out, e)
		}
	}
	return out
}

// socketOnly says a VNC console listens on a unix socket.
func socketOnly(socket string, ls []libvirtxml.DomainGraphicListener) bool {
	if socket != "" {
		return true
	}
	for _, l := range ls {
		if l.Socket != nil {
			return true
		}
	}
	return false
}

// keptPassword is the password to write: the spec's, or (nil) the one the definition's
// console of the same type has.
func keptPassword(existing []libvirtxml.DomainGraphic, g Graphics) string {
	if g.Password != nil {
		return *g.Password
	}
	for _, e := range existing {
		switch {
		case e.VNC != nil && (g.Type == GraphicsVNC || g.Type == ""):
			return e.VNC.Passwd
		case e.Spice != nil && g.Type == GraphicsSpice:
			return e.Spice.Passwd
		}
	}
	return ""
}

// LogXML is d's XML for logs: console passwords blanked, qemu_args / qemu_env values
// and the values of device_xml devices masked (logxml.go).
func LogXML(d *libvirtxml.Domain) string {
	c := redactPasswords(d)
	masked := redactForLog(&c)
	text, err := c.Marshal()
	if err != nil {
		return "(unprintable: " + err.Error() + ")"
	}
	return withDevices(text, masked)
}

// redactPasswords is a copy of d with its console passwords blanked.
func redactPasswords(d *libvirtxml.Domain) libvirtxml.Domain {
	if d == nil {
		return libvirtxml.Domain{}
	}
	if d.Devices == nil {
		return *d
	}
	c := *d
	devs := *d.Devices
	c.Devices = &devs
	devs.Graphics = make([]libvirtxml.DomainGraphic, len(d.Devices.Graphics))
	for i, g := range d.Devices.Graphics {
		if g.VNC != nil && g.VNC.Passwd != "" {
			v := *g.VNC
			v.Passwd, g.VNC = "(redacted)", &v
		}
		if g.Spice != nil && g.Spice.Passwd != "" {
			v := *g.Spice
			v.Passwd, g.Spice = "(redacted)", &v
		}
		devs.Graphics[i] = g
	}
	return c
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
