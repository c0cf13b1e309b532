package domainxml

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// everyChardev is what the configuration behind testdata/chardev_libvirt.xml asks for.
func everyChardev() Chardevs {
	return Chardevs{
		Serials: []Chardev{
			{Type: "unix", Path: "/tmp/chd/s0.sock", Mode: "bind", LogFile: "/tmp/chd/s0.log"},
			{Type: "file", Path: "/tmp/chd/s1.out"},
			{Type: "null"},
			{Type: "tcp", Host: "127.0.0.1", Port: 4555, Mode: "bind"},
		},
		Consoles: []Chardev{{Type: "pty", TargetType: "virtio"}},
		Channels: []Chardev{{Type: "unix", Path: "/tmp/chd/c.sock", Mode: "bind", TargetType: "virtio", TargetName: "org.example.port.0"}},
	}
}

func chdSpec(c Chardevs) Spec {
	return Spec{Name: "chd-fixture-x2", Type: "qemu", VCPU: 1, MemoryKiB: 64 * KiBPerMiB, Graphics: Graphics{Type: GraphicsNone}, QemuAgent: true, Chardevs: c}
}

func TestChardev_build(t *testing.T) {
	_, text := build(t, nil, chdSpec(everyChardev()))
	text = regexp.MustCompile(`>\s+<`).ReplaceAllString(text, "><")
	for _, want := range []string{
		`<serial type="unix"><source mode="bind" path="/tmp/chd/s0.sock"></source><target port="0"></target><log file="/tmp/chd/s0.log"></log></serial>`,
		`<serial type="file"><source path="/tmp/chd/s1.out"></source><target port="1"></target></serial>`,
		`<serial type="null"><target port="2"></target></serial>`,
		`<serial type="tcp"><source mode="bind" host="127.0.0.1" service="4555"></source><target port="3"></target></serial>`,
		`<console type="unix"><source mode="bind" path="/tmp/chd/s0.sock"></source><target type="serial" port="0"></target><log file="/tmp/chd/s0.log"></log></console>`,
		`<console type="pty"><target type="virtio" port="1"></target></console>`,
		`<channel type="unix"><source mode="bind" path="/tmp/chd/c.sock"></source><target type="virtio" name="org.example.port.0"></target></channel>`,
		`name="org.qemu.guest_agent.0"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
}

// Left out, a fresh definition has today's default: one pty serial port, the console
// mirroring it, the agent channel; and it reads back as no chardevs.
func TestChardev_defaultUnchanged(t *testing.T) {
	d, _ := build(t, nil, chdSpec(Chardevs{}))
	dev := d.Devices
	if len(dev.Serials) != 1 || dev.Serials[0].Source.Pty == nil || len(dev.Consoles) != 1 || dev.Consoles[0].Target.Type != "serial" ||
		len(dev.Channels) != 1 || !isAgentChannel(dev.Channels[0]) {
		t.Fatalf("default chardevs: %+v %+v %+v", dev.Serials, dev.Consoles, dev.Channels)
	}
	var p Parsed
	chardevFamily.parse(d, &p, nil)
	if c := p.Spec.Chardevs; len(c.Serials)+len(c.Consoles)+len(c.Channels) != 0 {
		t.Errorf("the default reads back as %+v", c)
	}
}

// What libvirt returns (target types and ports, the console it adds as serial 0's
// alias, the tcp protocol, virtio-serial addresses, the agent channel) reads back as
// what was asked, and rebuilding onto it keeps the addresses.
func TestChardev_parseLibvirtFilled(t *testing.T) {
	d := domainFixture(t, "chardev_libvirt.xml")
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	want := everyChardev()
	for i := range want.Serials {
		want.Serials[i].TargetType = "isa-serial" // libvirt's (the provider keeps a null one null)
	}
	if !chardevFamily.same(chdSpec(want), p.Spec) {
		t.Errorf("parsed\n%+v\nwant\n%+v", p.Spec.Chardevs, want)
	}
	if !p.Spec.QemuAgent {
		t.Error("the agent channel is qemu_agent's")
	}
	again, _ := build(t, d, p.Spec)
	if a := again.Devices.Channels; len(a) != 2 || a[0].Address == nil || a[1].Address == nil {
		t.Errorf("channels lost their addresses: %+v", a)
	}
	if s := again.Devices.Serials[3]; s.Protocol == nil || s.Protocol.Type != "raw" || s.Target.Model == nil {
		t.Errorf("a kept tcp serial lost what libvirt filled in: %+v", s)
	}
	if Classify(p.Spec, mustParse(t, again).Spec, false, false) != ChangeNone {
		t.Error("rebuilt onto itself reads back as a change")
	}
}

// Dropping each kind takes it back to the default; the agent channel stays.
func TestChardev_drop(t *testing.T) {
	d := domainFixture(t, "chardev_libvirt.xml")
	s := chdSpec(Chardevs{Drop: []string{KindSerial, KindConsole, KindChannel}})
	got, _ := build(t, d, s)
	dev := got.Devices
	if len(dev.Serials) != 1 || dev.Serials[0].Source.Pty == nil || len(dev.Consoles) != 1 || dev.Consoles[0].Source.Pty == nil ||
		len(dev.Channels) != 1 || !isAgentChannel(dev.Channels[0]) {
		t.Errorf("not the default: %+v %+v %+v", dev.Serials, dev.Consoles, dev.Channels)
	}
	// Without Drop, a kind left out is kept as it is.
	kept, _ := build(t, d, chdSpec(Chardevs{}))
	if len(kept.Devices.Serials) != 4 || len(kept.Devices.Channels) != 2 {
		t.Errorf("unmanaged kinds not kept: %+v", kept.Devices)
	}
	if got := DroppedChardevs(everyChardev(), Chardevs{Serials: []Chardev{{Type: "pty"}}}); !slices.Equal(got, []string{KindConsole, KindChannel}) {
		t.Errorf("DroppedChardevs = %v", got)
	}
}

func TestChardev_same(t *testing.T) {
	base := everyChardev()
	for name, change := range map[string]func(c *Chardevs){
		"serial type":  func(c *Chardevs) { c.Serials[2].Type = "pty" },
		"log file":     func(c *Chardevs) { c.Serials[1].LogFile = "/tmp/x.log" },
		"tcp port":     func(c *Chardevs) { c.Serials[3].Port = 4556 },
		"console":      func(c *Chardevs) { c.Consoles = nil },
		"channel name": func(c *Chardevs) { c.Channels[0].TargetName = "org.example.port.1" },
	} {
		next := everyChardev()
		change(&next)
		if chardevFamily.same(chdSpec(base), chdSpec(next)) {
			t.Errorf("%s: no change seen", name)
		}
	}
	for name, pair := range map[string][2]Chardevs{
		"default pty serial is none":    {{}, {Serials: []Chardev{{Type: "pty"}}}},
		"unix mode bind is the default": {{Channels: []Chardev{{Type: "unix", Path: "/p", TargetName: "n"}}}, {Channels: []Chardev{{Type: "unix", Path: "/p", Mode: "bind", TargetName: "n"}}}},
		"drop is no part of the want":   {{}, {Drop: []string{KindSerial}}},
	} {
		if !chardevFamily.same(chdSpec(pair[0]), chdSpec(pair[1])) {
			t.Errorf("%s: seen as a change", name)
		}
	}
}

func TestChardev_validate(t *testing.T) {
	for _, tc := range []struct {
		c    Chardevs
		want string
	}{
		{Chardevs{Serials: []Chardev{{Type: "tcp", Port: 1}}}, `serial\[0\]: type tcp needs host.*mode \("bind"`},
		{Chardevs{Serials: []Chardev{{Type: "unix"}}}, `serial\[0\]: type unix needs path`},
		{Chardevs{Channels: []Chardev{{Type: "unix", Mode: "connect", TargetName: "org.example.0"}}}, `channel\[0\]: type unix needs path`},
		{Chardevs{Serials: []Chardev{{Type: "file", Path: "rel/out"}}}, `path "rel/out" must be absolute`},
		{Chardevs{Consoles: []Chardev{{Type: "pty", Host: "h", Port: 1}}}, `console\[0\]: type pty takes no host; remove it.*takes no port`},
		{Chardevs{Serials: []Chardev{{Type: "null", LogFile: "x.log"}}}, `log_file "x.log" must be an absolute path`},
		{Chardevs{Channels: []Chardev{{Type: "null"}}}, `channel\[0\]: target_name is required`},
		{Chardevs{Channels: []Chardev{{Type: "null", TargetName: AgentChannel}}}, `channel\[0\]: target_name org.qemu.guest_agent.0 is the guest-agent channel, which qemu_agent = true`},
		{Chardevs{Serials: []Chardev{{Type: "pty", TargetName: "x"}}}, `serial\[0\]: target_name is for channels`},
		{Chardevs{Consoles: []Chardev{{Type: "pty", TargetType: "serial"}}}, `console\[0\]: target_type "serial" must be one of \[virtio`},
	} {
		err := ValidateChardevs(tc.c, true)
		if err == nil || !regexp.MustCompile(`(?s)`+tc.want).MatchString(err.Error()) {
			t.Errorf("%+v: got %v, want %s", tc.c, err, tc.want)
		}
	}
	if err := ValidateChardevs(everyChardev(), true); err != nil {
		t.Errorf("valid chardevs: %v", err)
	}
	// libvirt places a listening channel's socket itself when no path is given (#25).
	if err := ValidateChardevs(Chardevs{Channels: []Chardev{{Type: "unix", TargetName: "org.example.0"}}}, true); err != nil {
		t.Errorf("a unix channel without a path: %v", err)
	}
}

func mustParse(t *testing.T, d *libvirtxml.Domain) *Parsed {
	t.Helper()
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// libvirt's own pty serial reads as the default on x86 and on ARM's virt machine alike, so
// an aarch64 domain imports with no serial block; a logged or tcp one does not.
func TestDefaultSerialsPerArch(t *testing.T) {
	for _, c := range []struct {
		ss   []Chardev
		want bool
	}{
		{[]Chardev{{Type: "pty"}}, true},
		{[]Chardev{{Type: "pty", TargetType: "isa-serial"}}, true},
		{[]Chardev{{Type: "pty", TargetType: "system-serial"}}, true},
		{[]Chardev{{Type: "pty", TargetType: "pci-serial"}}, false},
		{[]Chardev{{Type: "pty", LogFile: "/var/log/x.log"}}, false},
		{[]Chardev{{Type: "pty"}, {Type: "pty"}}, false},
	} {
		if got := DefaultSerials(c.ss); got != c.want {
			t.Errorf("DefaultSerials(%+v) = %v, want %v", c.ss, got, c.want)
		}
	}
}

// serial = []: no serial port, nor the console mirroring one; read back from a domain
// without any, and a change from (or to) the default pty serial.
func TestChardev_noSerials(t *testing.T) {
	none := Chardevs{Serials: []Chardev{}}
	d, _ := build(t, nil, chdSpec(none))
	if len(d.Devices.Serials) != 0 || len(d.Devices.Consoles) != 0 {
		t.Fatalf("serial = [] built %+v %+v", d.Devices.Serials, d.Devices.Consoles)
	}
	var p Parsed
	chardevFamily.parse(d, &p, nil)
	if p.Spec.Chardevs.Serials == nil || len(p.Spec.Chardevs.Serials) != 0 {
		t.Errorf("no serial port reads as %#v, want []", p.Spec.Chardevs.Serials)
	}
	if chardevFamily.same(chdSpec(none), chdSpec(Chardevs{})) || !chardevFamily.same(chdSpec(none), chdSpec(Chardevs{Serials: []Chardev{}})) {
		t.Error("same: [] and the default serial are not the same")
	}
	if got := DroppedChardevs(none, Chardevs{}); !slices.Equal(got, []string{KindSerial}) {
		t.Errorf("dropping serial = []: %v", got)
	}
	// Onto a definition with the default one: it goes, with its console.
	fresh, _ := build(t, nil, chdSpec(Chardevs{}))
	d, _ = build(t, fresh, chdSpec(none))
	if len(d.Devices.Serials) != 0 || len(d.Devices.Consoles) != 0 {
		t.Errorf("serial = [] onto the default: %+v %+v", d.Devices.Serials, d.Devices.Consoles)
	}
}

// What the blocks cannot say is untyped (device_xml's): kept by build, skipped by parse;
// a typed serial after an untyped one keeps its port only as a fragment.
func TestChardev_untyped(t *testing.T) {
	const devices = `<domain type="kvm"><name>u</name><devices>
<serial type="pty"><target type="isa-serial" port="0"><model name="isa-serial"/></target></serial>
<serial type="dev"><source path="/dev/ttyS0"/><target type="isa-serial" port="1"><model name="isa-serial"/></target></serial>
<serial type="null"><target type="isa-serial" port="2"><model name="isa-serial"/></target></serial>
<serial type="tcp"><source mode="bind" host="0.0.0.0" service="4555"/><protocol type="telnet"/><target port="3"/></serial>
<console type="pty"><target type="serial" port="0"/></console>
<console type="pty"><target type="virtio" port="1"/></console>
<console type="tcp"><source mode="connect" host="h" service="1"/><protocol type="telnet"/><target type="virtio" port="2"/></console>
<channel type="spicevmc"><target type="virtio" name="com.redhat.spice.0"/></channel>
<channel type="spiceport"><source channel="org.spice-space.webdav.0"/><target type="virtio" name="org.spice-space.webdav.0"/></channel>
<channel type="unix"><source mode="connect" path="/s"><reconnect enabled="yes" timeout="10"/></source><target type="virtio" name="x.0"/></channel>
</devices></domain>`
	d, err := UnmarshalDomain(devices)
	if err != nil {
		t.Fatal(err)
	}
	u := untypedChardevs(d.Devices)
	if len(u.Serials) != 3 || len(u.Consoles) != 1 || len(u.Channels) != 2 {
		t.Fatalf("untyped: %d serials, %d consoles, %d channels", len(u.Serials), len(u.Consoles), len(u.Channels))
	}
	var p Parsed
	chardevFamily.parse(d, &p, nil)
	c := p.Spec.Chardevs
	if c.Serials != nil || len(c.Consoles) != 1 || len(c.Channels) != 1 || c.Channels[0].Type != "spicevmc" {
		t.Errorf("typed: %+v", c)
	}
	// Update with what was read: every device stays.
	b, _ := build(t, d, Spec{Name: "u", Type: "kvm", VCPU: 1, MemoryKiB: 65536, Graphics: Graphics{Type: GraphicsNone}, Chardevs: Chardevs{
		Serials: []Chardev{{Type: "pty"}}, Consoles: c.Consoles, Channels: c.Channels}})
	if len(b.Devices.Serials) != 4 || len(b.Devices.Consoles) != 3 || len(b.Devices.Channels) != 3 {
		t.Errorf("update kept %d serials, %d consoles, %d channels", len(b.Devices.Serials), len(b.Devices.Consoles), len(b.Devices.Channels))
	}
	for _, f := range []string{
		`<serial type="dev"><source path="/dev/ttyS0"/><target type="isa-serial" port="1"/></serial>`,
		`<serial type="null"><target port="2"/></serial>`,
		`<serial type="file"><source path="/f" append="on"/></serial>`,
		`<channel type="spiceport"><source channel="a.0"/><target type="virtio" name="a.0"/></channel>`,
	} {
		if _, err := ParseDeviceFragment(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{`<serial type="pty"/>`, `<serial type="null"><target port="0"/></serial>`, `<console type="pty"><target type="virtio"/></console>`} {
		if _, err := ParseDeviceFragment(f); err == nil {
			t.Errorf("%s: a form the blocks type, accepted as a fragment", f)
		}
	}
}
