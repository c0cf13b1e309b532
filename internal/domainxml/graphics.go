package domainxml

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"

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
	// ListenUnset: the console listens where libvirt's configuration says (qemu.conf's
	// vnc_listen / spice_listen), <listen type='address'/> without an address; Listen is
	// then empty. Without it an empty Listen is DefaultListen.
	ListenUnset bool
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
	untyped:  untypedGraphics,
	validate: func(s *Spec) error { return validateGraphics(s.Graphics) },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.Devices.Graphics = buildGraphics(d.Devices.Graphics, s.Graphics, s.DeviceXML...)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		p.Spec.Graphics = Graphics{Type: GraphicsNone}
		if d.Devices == nil {
			return
		}
		typed := typedGraphicIndex(d.Devices.Graphics)
		for i, g := range d.Devices.Graphics {
			// A definition's console is typed only when the graphics block says it exactly
			// (the first such: typedGraphicIndex; the others are device_xml's,
			// untypedGraphics); the live XML (rec nil, a refresh's console_url) reads the
			// first VNC / SPICE console whatever it says.
			if rec != nil && i != typed {
				continue
			}
			switch {
			case g.VNC != nil:
				v := g.VNC
				p.Spec.Graphics = Graphics{Type: GraphicsVNC, Listen: listenOf(v.Listen, v.Listeners), Port: fixedPort(v.Port, v.AutoPort),
					Websocket: v.WebSocket, Keymap: v.Keymap, Password: passwordOf(v.Passwd), ListenUnset: noListenAddress(v.Listen, v.Listeners)}
				p.GraphicsPort = max(v.Port, 0)
			case g.Spice != nil:
				v := g.Spice
				p.Spec.Graphics = Graphics{Type: GraphicsSpice, Listen: listenOf(v.Listen, v.Listeners), Port: fixedPort(v.Port, v.AutoPort),
					Keymap: v.Keymap, Password: passwordOf(v.Passwd), ListenUnset: noListenAddress(v.Listen, v.Listeners)}
				p.GraphicsPort = max(v.Port, 0)
			default:
				continue
			}
			if p.Spec.Graphics.ListenUnset {
				p.Spec.Graphics.Listen = ""
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
		// the console of the spec's (the typed one), wherever the definition has it
		text, _ = gs[max(typedGraphicIndex(gs), 0)].Marshal() // a struct built here always marshals
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

// buildGraphics is the definition's graphics with the console g asks for in the first
// place: the typed console the definition has there (typedGraphic) is replaced, the
// others (device_xml's, or made elsewhere: an egl-headless, a second console, one
// listening on a socket) stay as they are, but for one of g's own type that no
// device_xml fragment holds: the configuration's console takes its place (libvirt allows
// one console of each type). Everything is written in the form libvirt prints it, so
// that an update that changes nothing writes the definition back unchanged (#25).
func buildGraphics(existing []libvirtxml.DomainGraphic, g Graphics, fragments ...string) []libvirtxml.DomainGraphic {
	at := typedGraphicIndex(existing)
	rest := slices.Clone(existing)
	if at >= 0 {
		rest = slices.Delete(rest, at, at+1)
	} else {
		at = 0
	}
	var x *libvirtxml.DomainGraphic
	switch g.Type {
	case GraphicsVNC, "":
		x = &libvirtxml.DomainGraphic{VNC: &libvirtxml.DomainGraphicVNC{WebSocket: g.Websocket, Keymap: g.Keymap,
			Passwd: keptPassword(existing, g)}}
		x.VNC.Port, x.VNC.AutoPort = -1, "yes"
		if g.Port > 0 {
			x.VNC.Port, x.VNC.AutoPort = g.Port, "no"
		}
		x.VNC.Listen, x.VNC.Listeners = graphicsListen(g)
	case GraphicsSpice:
		// libvirt prints no port for a SPICE console it picks the port of.
		x = &libvirtxml.DomainGraphic{Spice: &libvirtxml.DomainGraphicSpice{AutoPort: "yes", Keymap: g.Keymap,
			Passwd: keptPassword(existing, g)}}
		if g.Port > 0 {
			x.Spice.Port, x.Spice.AutoPort = g.Port, "no"
		}
		x.Spice.Listen, x.Spice.Listeners = graphicsListen(g)
	}
	for i := range rest {
		rest[i] = validGraphic(rest[i])
	}
	if x == nil {
		return rest
	}
	var out []libvirtxml.DomainGraphic
	replaced := false
	for _, e := range rest {
		if !replaced && (e.VNC != nil && x.VNC != nil || e.Spice != nil && x.Spice != nil) && !heldByFragment(e, fragments) {
			replaced = true
			continue
		}
		out = append(out, e)
	}
	return slices.Insert(out, min(at, len(out)), *x)
}

// graphicsListen is the listen attribute and element of g's console.
func graphicsListen(g Graphics) (string, []libvirtxml.DomainGraphicListener) {
	if g.ListenUnset {
		return "", []libvirtxml.DomainGraphicListener{{Address: &libvirtxml.DomainGraphicListenerAddress{}}}
	}
	listen := g.Listen
	if listen == "" {
		listen = DefaultListen
	}
	return listen, []libvirtxml.DomainGraphicListener{{Address: &libvirtxml.DomainGraphicListenerAddress{Address: listen}}}
}

// typedGraphic says whether the graphics attributes say g exactly: a VNC or SPICE console
// with a port (or autoport), one listen address (or libvirt's), a websocket (VNC), a
// keymap and a password, nothing else. Any other console (egl-headless, dbus, sdl, one on
// a socket, a network or none, with a share policy, SPICE channels or compression, GL,
// ...) is device_xml's.
func typedGraphic(g libvirtxml.DomainGraphic) bool {
	switch {
	case g.VNC != nil:
		v := *g.VNC
		if !typedPort(v.Port, v.AutoPort) || !typedListen(v.Listen, v.Listeners) {
			return false
		}
		v.Port, v.AutoPort, v.Listen, v.Listeners, v.WebSocket, v.Keymap, v.Passwd = 0, "", "", nil, 0, "", ""
		return reflect.DeepEqual(v, libvirtxml.DomainGraphicVNC{})
	case g.Spice != nil:
		v := *g.Spice
		if !typedPort(v.Port, v.AutoPort) || !typedListen(v.Listen, v.Listeners) {
			return false
		}
		v.Port, v.AutoPort, v.Listen, v.Listeners, v.Keymap, v.Passwd = 0, "", "", nil, "", ""
		return reflect.DeepEqual(v, libvirtxml.DomainGraphicSpice{})
	}
	return false
}

// typedPort: autoport (the live XML has the port libvirt picked), or a fixed port.
func typedPort(port int, autoport string) bool {
	return autoport == "yes" || autoport == "no" && port > 0
}

// typedListen: one listen element of type address, its address the listen attribute.
// A host name (libvirt takes one) is device_xml's: listen is an IP address.
func typedListen(attr string, ls []libvirtxml.DomainGraphicListener) bool {
	return len(ls) == 1 && ls[0].Address != nil && ls[0].Network == nil && ls[0].Socket == nil && ls[0].Address.Address == attr &&
		(attr == "" || net.ParseIP(attr) != nil)
}

// noListenAddress says the console listens where libvirt's configuration says.
func noListenAddress(attr string, ls []libvirtxml.DomainGraphicListener) bool {
	return attr == "" && len(ls) == 1 && ls[0].Address != nil && ls[0].Address.Address == ""
}

// validGraphic is g as libvirt's schema takes it back: libvirt prints a VNC socket both
// as <graphics socket=...> and as its <listen type='socket'> child, and refuses the two
// together on define (--validate, as the provider defines).
func validGraphic(g libvirtxml.DomainGraphic) libvirtxml.DomainGraphic {
	if v := g.VNC; v != nil && v.Socket != "" && slices.ContainsFunc(v.Listeners, func(l libvirtxml.DomainGraphicListener) bool {
		return l.Socket != nil
	}) {
		c := *v
		c.Socket = ""
		g.VNC = &c
	}
	return g
}

// typedGraphicIndex is the place of the console the graphics attributes say (the first
// typedGraphic one), or -1.
func typedGraphicIndex(gs []libvirtxml.DomainGraphic) int {
	return slices.IndexFunc(gs, typedGraphic)
}

// untypedGraphics: the graphics family's untyped hook — every console but the typed one
// (a second console the attributes could say alone is device_xml's too, but a fragment
// of it is refused: the graphics attributes say one console).
func untypedGraphics(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	typed := typedGraphicIndex(l.Graphics)
	for i, g := range l.Graphics {
		if i != typed {
			out.Graphics = append(out.Graphics, validGraphic(g))
		}
	}
	return &out
}

// heldByFragment says whether one of the device_xml fragments holds the device dev (a
// libvirtxml device struct).
func heldByFragment(dev any, fragments []string) bool {
	if len(fragments) == 0 {
		return false
	}
	var list libvirtxml.DomainDeviceList
	lv := reflect.ValueOf(&list).Elem()
	dv := reflect.ValueOf(dev)
	for i := range lv.NumField() {
		f := lv.Field(i)
		if f.Kind() == reflect.Slice && f.Type().Elem() == dv.Type() {
			f.Set(reflect.Append(f, dv))
			break
		}
		if f.Kind() == reflect.Pointer && f.Type().Elem() == dv.Type() {
			p := reflect.New(dv.Type())
			p.Elem().Set(dv)
			f.Set(p)
			break
		}
	}
	n, err := devicesNode(&list)
	if err != nil || len(n.Nodes) != 1 {
		return false
	}
	for _, f := range fragments {
		if w, err := parseNode(f); err == nil && n.Nodes[0].has(w) {
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
