package domainxml

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Guest devices: video, rng, watchdog, panic, vsock, memballoon, sound and input
// devices. Each kind is managed only when the spec names it: a nil one (or an empty list) keeps
// what the definition has — libvirt's own defaults (the ps2 mouse and keyboard, the
// virtio memballoon, the video it adds for a graphical console) and whatever another
// tool wrote — unless Drop names its kind: the previous spec had it, so it is taken away
// (libvirt then adds its default back where it has one).

// Device kinds, as Drop names them.
const (
	kindVideo      = "video"
	kindRNG        = "rng"
	kindWatchdog   = "watchdog"
	kindPanic      = "panic"
	kindVSock      = "vsock"
	kindMemBalloon = "memballoon"
	kindSound      = "sound"
	kindInput      = "input"
)

// Enumerations libvirt 9 accepts (the provider's validators use the same lists).
var (
	VideoModels      = []string{"virtio", "qxl", "vga", "cirrus", "bochs", "ramfb", "vmvga", "none"}
	RNGModels        = []string{"virtio", "virtio-transitional", "virtio-non-transitional"}
	WatchdogModels   = []string{"i6300esb", "ib700", "diag288", "itco"}
	WatchdogActions  = []string{"reset", "shutdown", "poweroff", "pause", "none", "dump", "inject-nmi"}
	PanicModels      = []string{"isa", "pvpanic", "hyperv", "pseries", "s390"}
	MemBalloonModels = []string{"virtio", "virtio-transitional", "virtio-non-transitional", "xen", "none"}
	SoundModels      = []string{"ich6", "ich7", "ich9", "ac97", "es1370", "sb16", "pcspk", "usb"}
	InputTypes       = []string{"tablet", "mouse", "keyboard"}
	InputBuses       = []string{"usb", "virtio", "ps2"}
)

// DefaultRNGBackend is the host source of an rng device when none is given.
const DefaultRNGBackend = "/dev/urandom"

// GuestDevices are the guest devices the user manages; nil (an empty list): keep the
// definition's. The lists are in the definition's order (the first video is the primary).
type GuestDevices struct {
	Videos     []Video
	RNGs       []RNG
	Watchdogs  []Watchdog
	Panic      *Panic
	VSock      *VSock
	MemBalloon *MemBalloon
	Sounds     []Sound
	// Inputs replace every input device when not empty (libvirt adds back the ps2 mouse
	// and keyboard an x86 guest always has).
	Inputs []Input
	// Drop are the kinds to take away although nil here: the domain's previous spec had
	// them (DroppedGuestDevices). Not part of what a spec wants (same ignores it).
	Drop []string
}

// kinds are the device kinds g manages.
func (g GuestDevices) kinds() []string {
	var out []string
	for kind, set := range map[string]bool{kindVideo: len(g.Videos) > 0, kindRNG: len(g.RNGs) > 0, kindWatchdog: len(g.Watchdogs) > 0,
		kindPanic: g.Panic != nil, kindVSock: g.VSock != nil, kindMemBalloon: g.MemBalloon != nil, kindSound: len(g.Sounds) > 0,
		kindInput: len(g.Inputs) > 0} {
		if set {
			out = append(out, kind)
		}
	}
	slices.Sort(out)
	return out
}

// DroppedGuestDevices are the kinds old manages and next does not: what an update
// from old to next takes away (next's Drop).
func DroppedGuestDevices(old, next GuestDevices) []string {
	var out []string
	for _, k := range old.kinds() {
		if !slices.Contains(next.kinds(), k) {
			out = append(out, k)
		}
	}
	return out
}

// Video is one of the guest's video cards. Nil sizes: the model's defaults.
type Video struct {
	Model   string
	VRAMKiB *uint
	Heads   *uint
	Accel3D *bool
}

// RNG is a virtio random number generator fed from a host device.
type RNG struct {
	Model        string // empty: virtio
	Backend      string // empty: /dev/urandom
	RateBytes    *uint
	RatePeriodMS *uint
}

// Watchdog is a watchdog timer and what happens when it fires (empty: reset).
type Watchdog struct {
	Model  string
	Action string
}

// Panic is a pvpanic-style device (empty model: libvirt's, isa on x86).
type Panic struct{ Model string }

// VSock is a virtio vsock; CID nil: libvirt assigns one at start.
type VSock struct{ CID *uint }

// MemBalloon is the memory balloon.
type MemBalloon struct {
	Model             string
	StatsPeriodSec    *uint
	AutoDeflate       *bool
	FreePageReporting *bool
}

// Sound is a sound card.
type Sound struct{ Model string }

// Input is a tablet, mouse or keyboard on a bus.
type Input struct {
	Type string
	Bus  string
}

// ImplicitInput reports whether in is one libvirt gives every x86 guest by itself.
func ImplicitInput(in Input) bool {
	return in.Bus == "ps2" && (in.Type == "mouse" || in.Type == "keyboard")
}

// DefaultMemBalloon reports whether m is the memballoon libvirt adds when a definition
// has none.
func DefaultMemBalloon(m *MemBalloon) bool {
	return m != nil && reflect.DeepEqual(*m, MemBalloon{Model: "virtio"})
}

// DefaultVideos reports whether vs is the video card libvirt adds for a graphical
// console when a definition has none (x86: one cirrus, 16 MiB, one head).
func DefaultVideos(vs []Video) bool {
	sixteenMiB, one := uint(16384), uint(1)
	return len(vs) == 1 && reflect.DeepEqual(vs[0], Video{Model: "cirrus", VRAMKiB: &sixteenMiB, Heads: &one})
}

// DefaultVRAMKiB is the video memory libvirt gives a card of model when none is written
// (0: the model has none, or libvirt's default is not known here).
func DefaultVRAMKiB(model string) uint {
	switch model {
	case "vga", "cirrus", "bochs", "vmvga":
		return 16384
	case "qxl":
		return 65536
	}
	return 0
}

var guestDevicesFamily = family{
	name:     "guest_devices",
	untyped:  untypedGuestDevices,
	validate: func(s *Spec) error { return validateGuestDevices(s.GuestDevices) },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		buildGuestDevices(d.Devices, s.GuestDevices, videoPrimaryFragment(s.DeviceXML))
		addImplicitDevices(d, s.GuestDevices, s.DeviceXML)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.Devices != nil {
			p.Spec.GuestDevices = parseGuestDevices(d.Devices)
		}
	},
	same: func(a, b Spec) bool {
		return reflect.DeepEqual(normalGuest(a.GuestDevices), normalGuest(b.GuestDevices))
	},
	live:   guestDevicesLive, // memballoon_live.go
	derive: deriveVSock,
}

// deriveVSock lets libvirt assign a clone's vsock CID at start (auto): a CID names one
// guest on the host, so a fixed one copied from the source would keep the two from
// running together. The other guest devices hold nothing of the host's alone.
func deriveVSock(d *libvirtxml.Domain, _ *CloneSpec) error {
	if v := d.Devices.VSock; v != nil && v.CID != nil {
		v.CID = &libvirtxml.DomainVSockCID{Auto: "yes"}
	}
	return nil
}

func validateGuestDevices(g GuestDevices) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	oneOf := func(what, v string, allowed []string) {
		if v != "" && !slices.Contains(allowed, v) {
			bad("%s %q is not one of %v", what, v, allowed)
		}
	}
	for i, v := range g.Videos {
		oneOf(fmt.Sprintf("video[%d]: model", i), v.Model, VideoModels)
		if v.Accel3D != nil && *v.Accel3D && v.Model != "virtio" {
			bad("video[%d]: accel3d needs model = \"virtio\" (virtio-gpu), not %q", i, v.Model)
		}
		if v.Model == "none" && (v.VRAMKiB != nil || v.Heads != nil || v.Accel3D != nil) {
			bad("video[%d]: model \"none\" has no vram_kib, heads or accel3d", i)
		}
	}
	for i, r := range g.RNGs {
		oneOf(fmt.Sprintf("rng[%d]: model", i), r.Model, RNGModels)
		if r.RatePeriodMS != nil && r.RateBytes == nil {
			bad("rng[%d]: rate_period_ms needs rate_bytes (the bytes allowed per period)", i)
		}
	}
	for i, w := range g.Watchdogs {
		oneOf(fmt.Sprintf("watchdog[%d]: model", i), w.Model, WatchdogModels)
		oneOf(fmt.Sprintf("watchdog[%d]: action", i), w.Action, WatchdogActions)
	}
	if p := g.Panic; p != nil {
		oneOf("panic: model", p.Model, PanicModels)
	}
	if v := g.VSock; v != nil && v.CID != nil && *v.CID < 3 {
		bad("vsock: cid %d is reserved (0-2 are the hypervisor and host); use 3 or more, or leave it out", *v.CID)
	}
	if m := g.MemBalloon; m != nil {
		oneOf("memballoon: model", m.Model, MemBalloonModels)
		if m.Model == "none" && (m.StatsPeriodSec != nil || m.AutoDeflate != nil || m.FreePageReporting != nil) {
			bad("memballoon: model \"none\" has no stats_period_sec, autodeflate or free_page_reporting")
		}
	}
	for i, s := range g.Sounds {
		oneOf(fmt.Sprintf("sound[%d]: model", i), s.Model, SoundModels)
	}
	seen := map[Input]bool{}
	for _, in := range g.Inputs {
		oneOf("input: type", in.Type, InputTypes)
		oneOf("input: bus", in.Bus, InputBuses)
		if in.Type == "tablet" && in.Bus == "ps2" {
			bad("input: a tablet cannot be on the ps2 bus (use usb or virtio)")
		}
		if seen[in] {
			bad("input %s on %s is declared twice", in.Type, in.Bus)
		}
		seen[in] = true
	}
	return errors.Join(errs...)
}

// normalGuest leaves out Drop and fills in the defaults that read back the same: an rng's model and
// backend, a watchdog's action, the inputs as a set (libvirt's ps2 ones included); an
// empty list and none alike.
func normalGuest(g GuestDevices) GuestDevices {
	g.Drop = nil
	g.RNGs = normalRNGs(g.RNGs)
	if len(g.Videos) == 0 {
		g.Videos = nil
	}
	if len(g.Sounds) == 0 {
		g.Sounds = nil
	}
	if len(g.Watchdogs) == 0 {
		g.Watchdogs = nil
	} else {
		g.Watchdogs = slices.Clone(g.Watchdogs)
		for i := range g.Watchdogs {
			if g.Watchdogs[i].Action == "" {
				g.Watchdogs[i].Action = "reset"
			}
		}
	}
	if len(g.Inputs) == 0 {
		g.Inputs = nil
	} else {
		g.Inputs = slices.Clone(g.Inputs)
		slices.SortFunc(g.Inputs, func(a, b Input) int {
			if a.Type != b.Type {
				return cmp.Compare(a.Type, b.Type)
			}
			return cmp.Compare(a.Bus, b.Bus)
		})
	}
	return g
}

// normalRNGs is rs with the model and backend libvirt writes for empty ones.
func normalRNGs(rs []RNG) []RNG {
	if len(rs) == 0 {
		return nil
	}
	out := slices.Clone(rs)
	for i := range out {
		if out[i].Model == "" {
			out[i].Model = "virtio"
		}
		if out[i].Backend == "" {
			out[i].Backend = DefaultRNGBackend
		}
	}
	return out
}

// videoPrimaryFragment says whether a device_xml fragment is a video libvirt is to make
// the primary one: the typed videos then have no primary mark.
func videoPrimaryFragment(fragments []string) bool {
	for _, f := range fragments {
		n, err := parseNode(f)
		if err != nil || n.XMLName.Local != "video" {
			continue
		}
		if l, err := nodesToDevices([]xmlNode{*n}); err == nil && len(l.Videos) == 1 && l.Videos[0].Model.Primary == "yes" {
			return true
		}
	}
	return false
}

// addImplicitDevices writes what libvirt adds by itself to an x86 PC or Q35 definition
// (kvm / qemu) where the definition has none: the ps2 mouse and keyboard beside inputs
// the spec manages, the virtio memballoon when the spec leaves it to libvirt. The domain
// libvirt defines is the same; the definition as built says so (an adopted definition
// that wrote them is recreated as written).
func addImplicitDevices(d *libvirtxml.Domain, g GuestDevices, fragments []string) {
	if d.OS == nil || d.OS.Type == nil || (d.OS.Type.Arch != ArchX86_64 && d.OS.Type.Arch != "i686") ||
		(d.Type != "kvm" && d.Type != "qemu") {
		return
	}
	m := d.OS.Type.Machine
	if m != "" && !strings.HasPrefix(m, "pc") && !strings.HasPrefix(m, "q35") {
		return
	}
	dev := d.Devices
	if len(g.Inputs) > 0 {
		var implicit []libvirtxml.DomainInput
		for _, t := range []string{"mouse", "keyboard"} {
			if !slices.ContainsFunc(dev.Inputs, func(x libvirtxml.DomainInput) bool { return x.Type == t && x.Bus == "ps2" }) {
				implicit = append(implicit, libvirtxml.DomainInput{Type: t, Bus: "ps2"})
			}
		}
		dev.Inputs = append(dev.Inputs, implicit...) // where libvirt puts them
	}
	balloonFragment := slices.ContainsFunc(fragments, func(f string) bool {
		n, err := parseNode(f)
		return err == nil && n.XMLName.Local == "memballoon"
	})
	if dev.MemBalloon == nil && g.MemBalloon == nil && !slices.Contains(g.Drop, kindMemBalloon) && !balloonFragment {
		dev.MemBalloon = &libvirtxml.DomainMemBalloon{Model: "virtio"}
	}
}
