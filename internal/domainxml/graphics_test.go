package domainxml

import (
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func graphicsSpec(g Graphics) Spec {
	return Spec{Name: "g", Type: "qemu", VCPU: 1, MemoryKiB: 64 * KiBPerMiB, Firmware: FirmwareBIOS, Graphics: g}
}

func TestGraphics_roundTrip(t *testing.T) {
	for name, g := range map[string]Graphics{
		"vnc fixed":    {Type: GraphicsVNC, Listen: "0.0.0.0", Port: 5911, Websocket: 5711, Keymap: "de", Password: new("s3cret")},
		"vnc auto":     {Type: GraphicsVNC, Listen: DefaultListen, Websocket: -1, Keymap: "en-us"},
		"spice passwd": {Type: GraphicsSpice, Listen: DefaultListen, Port: 5930, Password: new("p")},
	} {
		t.Run(name, func(t *testing.T) {
			_, text := build(t, nil, graphicsSpec(g))
			p, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			if !sameGraphics(p.Spec.Graphics, g) || p.Spec.Graphics.settings() != g.settings() {
				t.Errorf("round trip: got %+v, want %+v\n%s", p.Spec.Graphics, g, text)
			}
			if (g.Password == nil) != (p.Spec.Graphics.Password == nil) {
				t.Errorf("password read back: %v", p.Spec.Graphics.Password)
			}
		})
	}
}

// What libvirt 9.0 returns for a running VNC console with autoport and websocket -1: the
// inactive definition (secure flag) keeps -1, the live one has the ports it chose.
const graphicsInactive = `<domain type='qemu'><name>g</name><devices>
  <graphics type='vnc' port='-1' autoport='yes' websocket='-1' listen='127.0.0.1' keymap='en-us' passwd='old'>
    <listen type='address' address='127.0.0.1'/>
  </graphics></devices></domain>`

const graphicsLiveXML = `<domain type='qemu' id='3'><name>g</name><devices>
  <graphics type='vnc' port='5903' autoport='yes' websocket='5703' listen='127.0.0.1' keymap='en-us'>
    <listen type='address' address='127.0.0.1'/>
  </graphics></devices></domain>`

func TestGraphics_libvirtFixture(t *testing.T) {
	def, err := Parse(graphicsInactive)
	if err != nil {
		t.Fatal(err)
	}
	live, err := Parse(graphicsLiveXML)
	if err != nil {
		t.Fatal(err)
	}
	want := Graphics{Type: GraphicsVNC, Listen: DefaultListen, Websocket: -1, Keymap: "en-us", Password: new("old")}
	if !sameGraphics(def.Spec.Graphics, want) || *def.Spec.Graphics.Password != "old" {
		t.Errorf("definition: %+v", def.Spec.Graphics)
	}
	if live.GraphicsPort != 5903 || live.Spec.Graphics.Port != 0 {
		t.Errorf("live port %d, spec port %d: want 5903 and 0 (autoport)", live.GraphicsPort, live.Spec.Graphics.Port)
	}
}

func TestGraphics_same(t *testing.T) {
	base := Graphics{Type: GraphicsVNC, Listen: DefaultListen, Password: new("a")}
	for _, c := range []struct {
		name string
		mod  func(*Graphics)
		same bool
	}{
		{"identical", func(*Graphics) {}, true},
		{"password kept (write-only)", func(g *Graphics) { g.Password = nil }, true},
		{"password changed", func(g *Graphics) { g.Password = new("b") }, false},
		{"password removed", func(g *Graphics) { g.Password = new("") }, false},
		{"write-only version bumped", func(g *Graphics) { g.Password, g.PasswordVersion = nil, "2" }, false},
		{"port", func(g *Graphics) { g.Port = 5901 }, false},
		{"websocket", func(g *Graphics) { g.Websocket = -1 }, false},
		{"keymap", func(g *Graphics) { g.Keymap = "de" }, false},
	} {
		g := base
		c.mod(&g)
		if got := sameGraphics(base, g); got != c.same {
			t.Errorf("%s: same = %v, want %v", c.name, got, c.same)
		}
	}
	if !sameGraphics(Graphics{Type: GraphicsNone, Password: new("x")}, Graphics{Type: GraphicsNone, Port: 5900}) {
		t.Error("without a console nothing else matters")
	}
}

func TestGraphics_passwordChangesLive(t *testing.T) {
	var cur libvirtxml.Domain
	if err := cur.Unmarshal(graphicsInactive); err != nil {
		t.Fatal(err)
	}
	old := graphicsSpec(Graphics{Type: GraphicsVNC, Listen: DefaultListen, Websocket: -1, Keymap: "en-us", Password: new("old")})
	next := old
	next.Graphics.Password = new("new")
	p := PlanChange(old, next, true, true, &cur)
	if p.Change != ChangeLive || len(p.Ops) != 1 || p.Ops[0].Kind != LiveUpdateDevice || p.Ops[0].Noun != "graphics" {
		t.Fatalf("password change: %+v", p)
	}
	for _, want := range []string{`passwd="new"`, `websocket="-1"`, `keymap="en-us"`, `autoport="yes"`} {
		if !strings.Contains(p.Ops[0].XML, want) {
			t.Errorf("update XML lacks %s:\n%s", want, p.Ops[0].XML)
		}
	}
	next = old
	next.Graphics.Keymap = "de"
	if p := PlanChange(old, next, true, true, &cur); p.Change != ChangeRestart || !strings.Contains(p.Reason, "graphics") {
		t.Errorf("keymap change: %+v", p)
	}
	next = old
	next.Graphics.Password = new("new")
	if p := PlanChange(old, next, false, false, &cur); p.Change != ChangeDefinition {
		t.Errorf("password change of a stopped domain: %+v", p)
	}
}

func TestGraphics_redefineKeepsWriteOnlyPassword(t *testing.T) {
	var cur libvirtxml.Domain
	if err := cur.Unmarshal(graphicsInactive); err != nil {
		t.Fatal(err)
	}
	s := graphicsSpec(Graphics{Type: GraphicsVNC, Listen: DefaultListen, PasswordVersion: "1"}) // Password nil: keep
	d, text := build(t, &cur, s)
	if d.Devices.Graphics[0].VNC.Passwd != "old" {
		t.Errorf("the definition's password is not kept:\n%s", text)
	}
	s.Graphics.Password = new("")
	if d, _ := build(t, &cur, s); d.Devices.Graphics[0].VNC.Passwd != "" {
		t.Error("an empty password does not remove it")
	}
	if l := LogXML(d); strings.Contains(l, "old") || !strings.Contains(LogXML(&cur), "(redacted)") || cur.Devices.Graphics[0].VNC.Passwd != "old" {
		t.Errorf("LogXML must redact a copy: %s", LogXML(&cur))
	}
}

func TestGraphics_validate(t *testing.T) {
	for name, c := range map[string]struct {
		g    Graphics
		want string
	}{
		"vnc port below 5900":    {Graphics{Type: GraphicsVNC, Port: 80}, "5900-65535"},
		"websocket on spice":     {Graphics{Type: GraphicsSpice, Websocket: -1}, "websocket is for VNC only"},
		"bad keymap":             {Graphics{Type: GraphicsVNC, Keymap: "English"}, "keymap \"English\""},
		"websocket out of range": {Graphics{Type: GraphicsVNC, Websocket: -2}, "websocket -2"},
		"fine":                   {Graphics{Type: GraphicsVNC, Port: 5900, Websocket: 5700, Keymap: "fr-ch"}, ""},
		"none ignores the rest":  {Graphics{Type: GraphicsNone, Port: 1}, ""},
	} {
		err := validateGraphics(c.g)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// A console the graphics attributes cannot say (a socket, sharePolicy) is device_xml's
// (#25): held by a fragment, it stays beside the typed one, and with type none it stays
// alone; held by none, the configuration's console of its type takes its place. A console
// listening where libvirt's configuration says is written as libvirt prints it.
func TestGraphics_keepsUntyped(t *testing.T) {
	d, err := UnmarshalDomain(`<domain type='qemu'><name>x</name><devices><graphics type='vnc' socket='/run/v.sock' sharePolicy='force-shared'>` +
		`<listen type='socket' socket='/run/v.sock'/></graphics><graphics type='spice' autoport='yes'><listen type='address'/></graphics>` +
		`</devices></domain>`)
	if err != nil {
		t.Fatal(err)
	}
	gs := d.Devices.Graphics
	if typedGraphic(gs[0]) || !typedGraphic(gs[1]) || typedGraphicIndex(gs) != 1 {
		t.Fatal("typedGraphic")
	}
	if u := untypedGraphics(d.Devices); len(u.Graphics) != 1 || u.Graphics[0].VNC == nil {
		t.Errorf("untyped %+v", u.Graphics)
	}
	p, _ := FromDomain(d)
	if g := p.Spec.Graphics; g.Type != GraphicsSpice || !g.ListenUnset || g.Listen != "" || g.Port != 0 {
		t.Errorf("parsed %+v", g)
	}
	// (the socket written once: libvirt's schema refuses it twice)
	if got := buildGraphics(gs, p.Spec.Graphics); !reflect.DeepEqual(got[1], gs[1]) || got[0].VNC.Socket != "" ||
		!reflect.DeepEqual(got[0].VNC.Listeners, gs[0].VNC.Listeners) {
		t.Errorf("an update that changes nothing: %+v", got)
	}
	if got := buildGraphics(gs, Graphics{Type: GraphicsNone}); len(got) != 1 || got[0].VNC.SharePolicy != "force-shared" || got[0].VNC.Socket != "" {
		t.Errorf("none keeps the untyped console: %+v", got)
	}
	frag := `<graphics type="vnc" sharePolicy="force-shared"><listen type="socket" socket="/run/v.sock"/></graphics>`
	got := buildGraphics(gs, Graphics{Type: GraphicsVNC, Listen: "0.0.0.0"}, frag)
	if len(got) != 2 || got[0].VNC.SharePolicy != "force-shared" || got[1].VNC == nil || got[1].VNC.Listen != "0.0.0.0" {
		t.Errorf("a fragment's console stays: %+v", got)
	}
	got = buildGraphics(gs, Graphics{Type: GraphicsVNC, Listen: "0.0.0.0"})
	if len(got) != 1 || got[0].VNC == nil || got[0].VNC.SharePolicy != "" || got[0].VNC.Listen != "0.0.0.0" {
		t.Errorf("the configuration's console takes the place of one no fragment holds: %+v", got)
	}
}
