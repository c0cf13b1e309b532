package domainxml

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func boolPtr(b bool) *bool { return &b }

// everyGuestDevice is what the configuration behind testdata/guest_devices_libvirt.xml
// asks for.
func everyGuestDevice() GuestDevices {
	return GuestDevices{
		Videos:     []Video{{Model: "virtio", Heads: uintPtr(2), Accel3D: boolPtr(false)}},
		RNGs:       []RNG{{RateBytes: uintPtr(1024), RatePeriodMS: uintPtr(1000)}},
		Watchdogs:  []Watchdog{{Model: "i6300esb", Action: "poweroff"}},
		Panic:      &Panic{Model: "isa"},
		VSock:      &VSock{},
		MemBalloon: &MemBalloon{Model: "virtio", StatsPeriodSec: uintPtr(10), AutoDeflate: boolPtr(true), FreePageReporting: boolPtr(true)},
		Sounds:     []Sound{{Model: "ich9"}},
		Inputs:     []Input{{Type: "tablet", Bus: "usb"}, {Type: "keyboard", Bus: "virtio"}},
	}
}

func gdSpec(g GuestDevices) Spec {
	return Spec{Name: "gd-libvirt", Type: "qemu", VCPU: 1, MemoryKiB: 64 * KiBPerMiB, Graphics: Graphics{Type: GraphicsVNC}, GuestDevices: g}
}

func TestGuestDevices_build(t *testing.T) {
	_, text := build(t, nil, gdSpec(everyGuestDevice()))
	text = regexp.MustCompile(`>\s+<`).ReplaceAllString(text, "><")
	for _, want := range []string{
		`<model type="virtio" heads="2" primary="yes"><acceleration accel3d="no"></acceleration></model>`,
		`<rng model="virtio"><rate bytes="1024" period="1000"></rate><backend model="random">/dev/urandom</backend></rng>`,
		`<watchdog model="i6300esb" action="poweroff"></watchdog>`, `<panic model="isa"></panic>`,
		`<vsock model="virtio"><cid auto="yes"></cid></vsock>`,
		`<memballoon model="virtio" autodeflate="on" freePageReporting="on"><stats period="10"></stats></memballoon>`,
		`<sound model="ich9"></sound>`, `<input type="tablet" bus="usb"></input>`, `<input type="keyboard" bus="virtio"></input>`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	_, text = build(t, nil, gdSpec(GuestDevices{VSock: &VSock{CID: uintPtr(42)}}))
	if !strings.Contains(text, `<cid auto="no" address="42"></cid>`) {
		t.Errorf("fixed cid:\n%s", text)
	}
}

// A fresh definition without guest devices has none of them (libvirt adds its defaults).
func TestGuestDevices_unsetWritesNothing(t *testing.T) {
	d, text := build(t, nil, gdSpec(GuestDevices{}))
	dev := d.Devices
	if len(dev.Videos)+len(dev.RNGs)+len(dev.Watchdogs)+len(dev.Panics)+len(dev.Sounds)+len(dev.Inputs) > 0 || dev.VSock != nil || dev.MemBalloon != nil {
		t.Errorf("guest devices written though none asked:\n%s", text)
	}
	if strings.Contains(text, "<metadata>") {
		t.Errorf("a metadata record for no devices:\n%s", text)
	}
}

// What libvirt returns (aliases, addresses, the ps2 inputs, the vsock's assigned cid)
// reads back as what was asked.
func TestGuestDevices_parseLibvirtFilled(t *testing.T) {
	p, err := FromDomain(domainFixture(t, "guest_devices_libvirt.xml"))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Spec.GuestDevices
	want := everyGuestDevice()
	if !guestDevicesFamily.same(gdSpec(want), gdSpec(got)) {
		t.Errorf("parsed\n%+v\nwant\n%+v", normalGuest(got), normalGuest(want))
	}
	if got.VSock == nil || got.VSock.CID != nil {
		t.Errorf("an auto cid libvirt assigned must read as auto: %+v", got.VSock)
	}
	if len(got.RNGs) != 1 || got.RNGs[0].Backend != DefaultRNGBackend || got.RNGs[0].Model != "virtio" {
		t.Errorf("rng %+v", got.RNGs)
	}
}

// Rebuilding the same spec onto libvirt's definition keeps every device's address.
func TestGuestDevices_rebuildKeepsAddresses(t *testing.T) {
	base := domainFixture(t, "guest_devices_libvirt.xml")
	d, _ := build(t, base, gdSpec(everyGuestDevice()))
	dev := d.Devices
	for what, a := range map[string]*libvirtxml.DomainAddress{
		"video": dev.Videos[0].Address, "rng": dev.RNGs[0].Address, "sound": dev.Sounds[0].Address,
		"memballoon": dev.MemBalloon.Address, "vsock": dev.VSock.Address, "tablet": dev.Inputs[0].Address,
	} {
		if a == nil {
			t.Errorf("%s lost its address", what)
		}
	}
	if dev.Videos[0].Alias != nil {
		t.Error("video kept libvirt's alias")
	}
}

// A definition's devices the spec leaves out stay as they are unless Drop names them
// (the previous spec had them): then they go (libvirt adds back its default memballoon
// and video, and keeps its ps2 inputs).
func TestGuestDevices_unsetKeepsOrRemoves(t *testing.T) {
	base := domainFixture(t, "guest_devices_libvirt.xml")
	d, _ := build(t, base, gdSpec(GuestDevices{}))
	p, _ := FromDomain(d)
	if !reflect.DeepEqual(p.Spec.GuestDevices, parseGuestDevices(base.Devices)) {
		t.Errorf("devices another tool wrote changed:\n%+v", p.Spec.GuestDevices)
	}

	old := everyGuestDevice()
	next := GuestDevices{Sounds: []Sound{{Model: "ac97"}}}
	next.Drop = DroppedGuestDevices(old, next)
	if want := []string{kindInput, kindMemBalloon, kindPanic, kindRNG, kindVideo, kindVSock, kindWatchdog}; !reflect.DeepEqual(next.Drop, want) {
		t.Errorf("dropped %v, want %v", next.Drop, want)
	}
	d, text := build(t, domainFixture(t, "guest_devices_libvirt.xml"), gdSpec(next))
	dev := d.Devices
	if len(dev.Videos)+len(dev.RNGs)+len(dev.Watchdogs)+len(dev.Panics) > 0 || dev.VSock != nil || dev.MemBalloon != nil {
		t.Errorf("dropped devices were kept:\n%s", text)
	}
	if len(dev.Inputs) != 2 || !ImplicitInput(Input{dev.Inputs[0].Type, dev.Inputs[0].Bus}) || !ImplicitInput(Input{dev.Inputs[1].Type, dev.Inputs[1].Bus}) {
		t.Errorf("inputs after dropping ours: %+v", dev.Inputs)
	}
	if len(dev.Sounds) != 1 || dev.Sounds[0].Model != "ac97" {
		t.Errorf("sound:\n%s", text)
	}
	if !guestDevicesFamily.same(gdSpec(GuestDevices{Sounds: []Sound{{Model: "ac97"}}}), gdSpec(next)) {
		t.Error("Drop is no part of what a spec wants")
	}
}

func TestGuestDevices_defaults(t *testing.T) {
	g := parseGuestDevices(domainFixture(t, "guest_devices_defaults.xml").Devices)
	if g.MemBalloon != nil || len(g.Inputs) != 0 || DefaultMemBalloon(everyGuestDevice().MemBalloon) {
		t.Errorf("libvirt's own memballoon and inputs must read as none: %+v", g)
	}
	want := Video{Model: "cirrus", VRAMKiB: uintPtr(16384), Heads: uintPtr(1)}
	if len(g.Videos) != 1 || !reflect.DeepEqual(g.Videos[0], want) || !DefaultVideos(g.Videos) || DefaultVideos(everyGuestDevice().Videos) {
		t.Errorf("video %+v", g.Videos)
	}
}

func TestGuestDevices_same(t *testing.T) {
	a := gdSpec(everyGuestDevice())
	b := gdSpec(everyGuestDevice())
	b.GuestDevices.RNGs = []RNG{{Model: "virtio", Backend: DefaultRNGBackend, RateBytes: uintPtr(1024), RatePeriodMS: uintPtr(1000)}}
	b.GuestDevices.Inputs = []Input{{Type: "keyboard", Bus: "virtio"}, {Type: "tablet", Bus: "usb"}}
	if !guestDevicesFamily.same(a, b) {
		t.Error("defaults written out and input order must not be a change")
	}
	w := gdSpec(GuestDevices{Watchdogs: []Watchdog{{Model: "ib700"}}})
	if !guestDevicesFamily.same(w, gdSpec(GuestDevices{Watchdogs: []Watchdog{{Model: "ib700", Action: "reset"}}})) {
		t.Error("watchdog action reset is libvirt's default")
	}
	for name, change := range map[string]func(*GuestDevices){
		"video heads":   func(g *GuestDevices) { g.Videos[0].Heads = uintPtr(1) },
		"second video":  func(g *GuestDevices) { g.Videos = append(g.Videos, Video{Model: "virtio"}) },
		"rng removed":   func(g *GuestDevices) { g.RNGs = nil },
		"video order":   func(g *GuestDevices) { g.Videos = []Video{{Model: "qxl"}, g.Videos[0]} },
		"cid fixed":     func(g *GuestDevices) { g.VSock = &VSock{CID: uintPtr(9)} },
		"stats period":  func(g *GuestDevices) { g.MemBalloon.StatsPeriodSec = uintPtr(5) },
		"input dropped": func(g *GuestDevices) { g.Inputs = g.Inputs[:1] },
	} {
		c := gdSpec(everyGuestDevice())
		change(&c.GuestDevices)
		if guestDevicesFamily.same(a, c) {
			t.Errorf("%s: not seen as a change", name)
		}
	}
}

func TestGuestDevices_validate(t *testing.T) {
	for _, tc := range []struct {
		g    GuestDevices
		want string
	}{
		{GuestDevices{Videos: []Video{{Model: "qxl", Accel3D: boolPtr(true)}}}, "accel3d needs model = \"virtio\""},
		{GuestDevices{Videos: []Video{{Model: "none", Heads: uintPtr(1)}}}, "model \"none\" has no"},
		{GuestDevices{Videos: []Video{{Model: "virtio"}, {Model: "matrox"}}}, "video[1]: model \"matrox\""},
		{GuestDevices{RNGs: []RNG{{RatePeriodMS: uintPtr(100)}}}, "rate_period_ms needs rate_bytes"},
		{GuestDevices{Watchdogs: []Watchdog{{Model: "i6300esb", Action: "explode"}}}, "watchdog[0]: action"},
		{GuestDevices{VSock: &VSock{CID: uintPtr(2)}}, "vsock: cid 2 is reserved"},
		{GuestDevices{MemBalloon: &MemBalloon{Model: "none", StatsPeriodSec: uintPtr(5)}}, "memballoon: model \"none\""},
		{GuestDevices{Inputs: []Input{{"tablet", "ps2"}}}, "tablet cannot be on the ps2 bus"},
		{GuestDevices{Inputs: []Input{{"mouse", "usb"}, {"mouse", "usb"}}}, "declared twice"},
	} {
		err := gdSpec(tc.g).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.g, err, tc.want)
		}
	}
	if err := gdSpec(everyGuestDevice()).Validate(); err != nil {
		t.Error(err)
	}
}

// Several devices of a kind are written in order, each taking the address of an existing
// one of its model (each used once); an rng libvirt_domain does not describe (an egd
// backend) stays, and reads as none.
func TestGuestDevices_several(t *testing.T) {
	addr := func(slot uint) *libvirtxml.DomainAddress {
		return &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Slot: &slot}}
	}
	base, _ := build(t, nil, gdSpec(GuestDevices{}))
	base.Devices.Videos = []libvirtxml.DomainVideo{{Model: libvirtxml.DomainVideoModel{Type: "virtio"}, Address: addr(2)},
		{Model: libvirtxml.DomainVideoModel{Type: "virtio"}, Address: addr(3)}}
	base.Devices.Sounds = []libvirtxml.DomainSound{{Model: "ich9", Address: addr(4)}}
	base.Devices.RNGs = []libvirtxml.DomainRNG{{Model: "virtio", Backend: &libvirtxml.DomainRNGBackend{EGD: &libvirtxml.DomainRNGBackendEGD{}}}}
	g := GuestDevices{
		Videos: []Video{{Model: "virtio"}, {Model: "qxl"}, {Model: "virtio"}},
		Sounds: []Sound{{Model: "ac97"}, {Model: "ich9"}},
		RNGs:   []RNG{{}, {Backend: "/dev/random"}},
	}
	d, _ := build(t, base, gdSpec(g))
	v := d.Devices.Videos
	if len(v) != 3 || v[0].Model.Type != "virtio" || *v[0].Address.PCI.Slot != 2 || v[1].Address != nil || *v[2].Address.PCI.Slot != 3 {
		t.Errorf("videos %+v", v)
	}
	if s := d.Devices.Sounds; len(s) != 2 || s[0].Address != nil || *s[1].Address.PCI.Slot != 4 {
		t.Errorf("sounds %+v", s)
	}
	if r := d.Devices.RNGs; len(r) != 3 || r[0].Backend.EGD == nil || r[2].Backend.Random.Device != "/dev/random" {
		t.Errorf("rngs %+v", r)
	}
	got := parseGuestDevices(d.Devices)
	if !guestDevicesFamily.same(gdSpec(g), gdSpec(got)) || len(got.RNGs) != 2 {
		t.Errorf("read back %+v", got)
	}
}

// A video the schema cannot say (vgamem, ram other than libvirt's, #25) is device_xml's:
// a rebuild keeps it where it is and makes it no typed twin; a typed one of the same
// model keeps its address and libvirt's vram, and the first typed one is the primary
// unless a video that stays is.
func TestGuestDevices_videoKeepsUntyped(t *testing.T) {
	addr := &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Slot: new(uint(2))}}
	base := []libvirtxml.DomainVideo{
		{Model: libvirtxml.DomainVideoModel{Type: "qxl", VGAMem: 32768, Ram: 131072, VRam: 65536, Primary: "yes"}},
		{Model: libvirtxml.DomainVideoModel{Type: "virtio", Heads: 1}, Address: addr},
	}
	heads := uint(2)
	got := buildVideos(base, []Video{{Model: "virtio", Heads: &heads}}, false)
	if len(got) != 2 || !reflect.DeepEqual(got[0], base[0]) || got[1].Model.Heads != 2 || got[1].Address != addr || got[1].Model.Primary != "" {
		t.Errorf("rebuilt videos %+v", got)
	}
	got = buildVideos(nil, []Video{{Model: "qxl"}, {Model: "vga"}}, false)
	if len(got) != 2 || got[0].Model.Primary != "yes" || got[0].Model.Ram != qxlRAMKiB || got[0].Model.VGAMem != qxlVGAMemKiB ||
		got[1].Model.Primary != "" {
		t.Errorf("fresh videos %+v", got)
	}
	if got := buildVideos(nil, []Video{{Model: "vga"}}, true); got[0].Model.Primary != "" {
		t.Errorf("a primary device_xml video: the typed one is no primary: %+v", got[0].Model)
	}
	if typedVideo(base[0]) || !typedVideo(got[0]) {
		t.Error("typedVideo")
	}
}

// The schema has one panic: a lone hyperv panic is the attribute's; beside an isa one it
// is device_xml's, and a fragment of it is accepted; a rebuild keeps it and writes no twin.
func TestGuestDevices_panics(t *testing.T) {
	hv, isa := libvirtxml.DomainPanic{Model: "hyperv"}, libvirtxml.DomainPanic{Model: "isa"}
	lone := &libvirtxml.DomainDeviceList{Panics: []libvirtxml.DomainPanic{hv}, Audios: []libvirtxml.DomainAudio{{ID: 1}}}
	if u := untypedPanics(lone); len(u) != 0 || parseGuestDevices(lone).Panic.Model != "hyperv" {
		t.Errorf("a lone hyperv panic: untyped %+v", u)
	}
	if got := buildPanics(lone, &Panic{Model: "hyperv"}); len(got) != 1 {
		t.Errorf("rebuilt lone hyperv: %+v", got)
	}
	both := &libvirtxml.DomainDeviceList{Panics: []libvirtxml.DomainPanic{isa, hv}}
	if u := untypedPanics(both); len(u) != 1 || u[0].Model != "hyperv" || parseGuestDevices(both).Panic.Model != "isa" {
		t.Errorf("isa and hyperv: untyped %+v", u)
	}
	if got := buildPanics(both, &Panic{Model: "isa"}); len(got) != 2 || got[0].Model != "isa" || got[1].Model != "hyperv" {
		t.Errorf("rebuilt isa and hyperv: %+v", got)
	}
	if _, err := ParseDeviceFragment(`<panic model="hyperv"/>`); err != nil {
		t.Errorf("a hyperv panic fragment: %v", err)
	}
	if _, err := ParseDeviceFragment(`<panic model="isa"/>`); err == nil {
		t.Error("an isa panic fragment is accepted (devices.panic says it)")
	}
}
