package domainxml

import (
	"strings"

	"slices"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// buildGuestDevices writes the guest devices g manages into dev. A kind g leaves out is
// kept as the definition has it, unless g.Drop names it: then it is taken away. A device
// of the same model as before keeps its address.
func buildGuestDevices(dev *libvirtxml.DomainDeviceList, g GuestDevices) {
	manage := func(kind string, set bool) bool { return set || slices.Contains(g.Drop, kind) }
	if manage(kindVideo, len(g.Videos) > 0) {
		dev.Videos = buildVideos(dev.Videos, g.Videos)
	}
	if manage(kindRNG, len(g.RNGs) > 0) {
		dev.RNGs = buildRNGs(dev.RNGs, g.RNGs)
	}
	if manage(kindWatchdog, len(g.Watchdogs) > 0) {
		dev.Watchdogs = nil
		for _, w := range g.Watchdogs {
			dev.Watchdogs = append(dev.Watchdogs, libvirtxml.DomainWatchdog{Model: w.Model, Action: w.Action})
		}
	}
	if manage(kindPanic, g.Panic != nil) {
		dev.Panics = nil
		if p := g.Panic; p != nil {
			dev.Panics = []libvirtxml.DomainPanic{{Model: p.Model}}
		}
	}
	if manage(kindVSock, g.VSock != nil) {
		dev.VSock = buildVSock(dev.VSock, g.VSock)
	}
	if manage(kindMemBalloon, g.MemBalloon != nil) {
		dev.MemBalloon = buildMemBalloon(dev.MemBalloon, g.MemBalloon)
	}
	if manage(kindSound, len(g.Sounds) > 0) {
		dev.Sounds = buildSounds(dev.Sounds, g.Sounds)
	}
	if manage(kindInput, len(g.Inputs) > 0) {
		dev.Inputs = buildInputs(dev.Inputs, g.Inputs)
	}
}

// reuse hands out the existing devices of a model, each once, in their order: a device
// of the list takes the place (address, and what it keeps) of the first unused one of
// its model.
type reuse[T any] struct {
	existing []T
	used     []bool
	model    func(T) string
}

func newReuse[T any](existing []T, model func(T) string) *reuse[T] {
	return &reuse[T]{existing: existing, used: make([]bool, len(existing)), model: model}
}

func (r *reuse[T]) take(want string) (T, bool) {
	for i, e := range r.existing {
		if !r.used[i] && r.model(e) == want {
			r.used[i] = true
			return e, true
		}
	}
	var zero T
	return zero, false
}

// buildVideos is vs (none: libvirt adds its default back for a graphical console). A
// video of the same model the definition has is kept as it is but for what vs sets, so
// an update keeps what the schema does not type (vgamem, ram, vram64, primary, the
// driver, a resolution, its address: a domain made elsewhere loses nothing, #25).
func buildVideos(existing []libvirtxml.DomainVideo, vs []Video) []libvirtxml.DomainVideo {
	old := newReuse(existing, func(e libvirtxml.DomainVideo) string { return e.Model.Type })
	var out []libvirtxml.DomainVideo
	for _, v := range vs {
		x := libvirtxml.DomainVideo{Model: libvirtxml.DomainVideoModel{Type: v.Model}}
		if e, ok := old.take(v.Model); ok && v.Model != "none" {
			x = e
			if x.Alias != nil && !strings.HasPrefix(x.Alias.Name, "ua-") {
				x.Alias = nil // libvirt's own name (a user's alias starts with ua-)
			}
		}
		if v.VRAMKiB != nil || x.Model.VRam == 0 {
			x.Model.VRam = deref(v.VRAMKiB)
		}
		if v.Heads != nil || x.Model.Heads == 0 {
			x.Model.Heads = deref(v.Heads)
		}
		if v.Accel3D != nil {
			if x.Model.Accel == nil {
				x.Model.Accel = &libvirtxml.DomainVideoAccel{}
			}
			x.Model.Accel.Accel3D = yesNo(*v.Accel3D)
		}
		out = append(out, x)
	}
	return out
}

// buildRNGs is rs, after the rngs of the definition that read from something else than
// a host device (an egd or builtin backend: not an RNG of the spec, kept as they are).
func buildRNGs(existing []libvirtxml.DomainRNG, rs []RNG) []libvirtxml.DomainRNG {
	var out, mine []libvirtxml.DomainRNG
	for _, e := range existing {
		if randomRNG(e) {
			mine = append(mine, e)
		} else {
			out = append(out, e)
		}
	}
	old := newReuse(mine, func(e libvirtxml.DomainRNG) string { return e.Model })
	for _, n := range normalRNGs(rs) {
		x := libvirtxml.DomainRNG{Model: n.Model, Backend: &libvirtxml.DomainRNGBackend{Random: &libvirtxml.DomainRNGBackendRandom{Device: n.Backend}}}
		if n.RateBytes != nil {
			x.Rate = &libvirtxml.DomainRNGRate{Bytes: *n.RateBytes, Period: deref(n.RatePeriodMS)}
		}
		if e, ok := old.take(n.Model); ok {
			x.Address = e.Address
		}
		out = append(out, x)
	}
	return out
}

func randomRNG(r libvirtxml.DomainRNG) bool { return r.Backend != nil && r.Backend.Random != nil }

func buildVSock(existing *libvirtxml.DomainVSock, v *VSock) *libvirtxml.DomainVSock {
	if v == nil {
		return nil
	}
	x := &libvirtxml.DomainVSock{Model: "virtio", CID: &libvirtxml.DomainVSockCID{Auto: "yes"}}
	if v.CID != nil {
		x.CID = &libvirtxml.DomainVSockCID{Auto: "no", Address: strconv.FormatUint(uint64(*v.CID), 10)}
	}
	if existing != nil {
		x.Address = existing.Address
	}
	return x
}

func buildMemBalloon(existing *libvirtxml.DomainMemBalloon, m *MemBalloon) *libvirtxml.DomainMemBalloon {
	if m == nil {
		return nil // libvirt adds its virtio default back
	}
	x := &libvirtxml.DomainMemBalloon{Model: m.Model}
	if m.AutoDeflate != nil {
		x.AutoDeflate = onOff(*m.AutoDeflate)
	}
	if m.FreePageReporting != nil {
		x.FreePageReporting = onOff(*m.FreePageReporting)
	}
	if m.StatsPeriodSec != nil {
		x.Stats = &libvirtxml.DomainMemBalloonStats{Period: *m.StatsPeriodSec}
	}
	if existing != nil && existing.Model == m.Model && m.Model != "none" {
		x.Address = existing.Address
	}
	return x
}

func buildSounds(existing []libvirtxml.DomainSound, ss []Sound) []libvirtxml.DomainSound {
	old := newReuse(existing, func(e libvirtxml.DomainSound) string { return e.Model })
	var out []libvirtxml.DomainSound
	for _, s := range ss {
		x := libvirtxml.DomainSound{Model: s.Model}
		if e, ok := old.take(s.Model); ok {
			x = e // its codecs, audio backend and address: what the schema does not type (#25)
			x.Alias = nil
		}
		out = append(out, x)
	}
	return out
}

// buildInputs is ins (none: libvirt's implicit ones only); an input on the same type and
// bus as before keeps its address. Inputs that pass a host device through (evdev,
// passthrough) are device_xml's or made outside Terraform: they stay.
func buildInputs(existing []libvirtxml.DomainInput, ins []Input) []libvirtxml.DomainInput {
	var out, host []libvirtxml.DomainInput
	for _, e := range existing {
		if hostInput(e) {
			host = append(host, e)
		}
	}
	if len(ins) == 0 {
		for _, e := range existing {
			if ImplicitInput(Input{Type: e.Type, Bus: e.Bus}) && !hostInput(e) {
				out = append(out, e)
			}
		}
		return append(out, host...)
	}
	for _, in := range ins {
		x := libvirtxml.DomainInput{Type: in.Type, Bus: in.Bus}
		for _, e := range existing {
			if e.Type == in.Type && e.Bus == in.Bus && !hostInput(e) {
				x.Address = e.Address
				break
			}
		}
		out = append(out, x)
	}
	return append(out, host...)
}

// parseGuestDevices reads the guest devices the family can describe, but for those
// libvirt adds to every x86 definition by itself: the ps2 mouse and keyboard and the
// plain virtio memballoon (a spec that names them reads them back from their absence:
// see ImplicitInput, DefaultMemBalloon). The video libvirt adds for a graphical
// console is read: it is there only with a console, so its absence says nothing.
func parseGuestDevices(dev *libvirtxml.DomainDeviceList) GuestDevices {
	var g GuestDevices
	for _, x := range dev.Videos {
		m := x.Model
		v := Video{Model: m.Type, VRAMKiB: nonZero(m.VRam), Heads: nonZero(m.Heads)}
		if m.Accel != nil && m.Accel.Accel3D != "" {
			b := m.Accel.Accel3D == "yes"
			v.Accel3D = &b
		}
		g.Videos = append(g.Videos, v)
	}
	for _, r := range dev.RNGs {
		if randomRNG(r) {
			n := RNG{Model: r.Model, Backend: r.Backend.Random.Device}
			if r.Rate != nil {
				n.RateBytes, n.RatePeriodMS = uintPtr(r.Rate.Bytes), nonZero(r.Rate.Period)
			}
			g.RNGs = append(g.RNGs, n)
		}
	}
	for _, w := range dev.Watchdogs {
		g.Watchdogs = append(g.Watchdogs, Watchdog{Model: w.Model, Action: w.Action})
	}
	if len(dev.Panics) > 0 {
		g.Panic = &Panic{Model: dev.Panics[0].Model}
	}
	if v := dev.VSock; v != nil {
		g.VSock = &VSock{}
		if v.CID != nil && v.CID.Auto != "yes" {
			if n, err := strconv.ParseUint(v.CID.Address, 10, 32); err == nil {
				g.VSock.CID = uintPtr(uint(n))
			}
		}
	}
	if m := dev.MemBalloon; m != nil {
		g.MemBalloon = &MemBalloon{Model: m.Model, AutoDeflate: onOffPtr(m.AutoDeflate), FreePageReporting: onOffPtr(m.FreePageReporting)}
		if m.Stats != nil {
			g.MemBalloon.StatsPeriodSec = uintPtr(m.Stats.Period)
		}
		if DefaultMemBalloon(g.MemBalloon) {
			g.MemBalloon = nil
		}
	}
	for _, x := range dev.Sounds {
		g.Sounds = append(g.Sounds, Sound{Model: x.Model})
	}
	for _, in := range dev.Inputs {
		if x := (Input{Type: in.Type, Bus: in.Bus}); !hostInput(in) && slices.Contains(InputTypes, in.Type) && !ImplicitInput(x) {
			g.Inputs = append(g.Inputs, x)
		}
	}
	return g
}

// hostInput reports whether in passes a host input device through (evdev,
// passthrough): not one an Input describes. libvirtxml gives every input a Source.
func hostInput(in libvirtxml.DomainInput) bool {
	return in.Source != nil && (in.Source.Passthrough != nil || in.Source.EVDev != nil)
}

func uintPtr(v uint) *uint { return &v }

func nonZero(v uint) *uint {
	if v == 0 {
		return nil
	}
	return &v
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func onOffPtr(s string) *bool {
	if s == "" {
		return nil
	}
	b := s == "on"
	return &b
}
