package domainxml

import (
	"reflect"
	"slices"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// buildGuestDevices writes the guest devices g manages into dev. A kind g leaves out is
// kept as the definition has it, unless g.Drop names it: then it is taken away. A device
// of the same model as before keeps its address.
func buildGuestDevices(dev *libvirtxml.DomainDeviceList, g GuestDevices, primaryElsewhere bool) {
	manage := func(kind string, set bool) bool { return set || slices.Contains(g.Drop, kind) }
	if manage(kindVideo, len(g.Videos) > 0) {
		dev.Videos = buildVideos(dev.Videos, g.Videos, primaryElsewhere)
	}
	if manage(kindRNG, len(g.RNGs) > 0) {
		dev.RNGs = buildRNGs(dev.RNGs, g.RNGs)
	}
	if manage(kindWatchdog, len(g.Watchdogs) > 0) {
		var ws []libvirtxml.DomainWatchdog
		for _, w := range g.Watchdogs {
			ws = append(ws, libvirtxml.DomainWatchdog{Model: w.Model, Action: w.Action})
		}
		dev.Watchdogs = mergeTyped(dev.Watchdogs, ws, typedWatchdog)
	}
	if manage(kindPanic, g.Panic != nil) {
		dev.Panics = buildPanics(dev, g.Panic)
	}
	if manage(kindVSock, g.VSock != nil) {
		dev.VSock = buildVSock(dev.VSock, g.VSock)
	}
	if manage(kindMemBalloon, g.MemBalloon != nil) && (dev.MemBalloon == nil || typedMemBalloon(*dev.MemBalloon) || g.MemBalloon != nil) {
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

// buildVideos is vs (none: libvirt adds its default back for a graphical console) in
// the places of the definition's typed videos (typedVideo); the others are device_xml's
// or made elsewhere and stay where they are. A video of the same model as before keeps
// its address. The first typed video is the primary one (libvirt marks it so) unless a
// video that stays, or a device_xml fragment, is (primaryElsewhere).
func buildVideos(existing []libvirtxml.DomainVideo, vs []Video, primaryElsewhere bool) []libvirtxml.DomainVideo {
	old := newReuse(existing, func(e libvirtxml.DomainVideo) string {
		if !typedVideo(e) {
			return "" // never handed out
		}
		return e.Model.Type
	})
	var built []libvirtxml.DomainVideo
	for _, v := range vs {
		x := libvirtxml.DomainVideo{Model: libvirtxml.DomainVideoModel{Type: v.Model, VRam: deref(v.VRAMKiB), Heads: deref(v.Heads)}}
		if v.Model == "qxl" {
			x.Model.Ram, x.Model.VGAMem = qxlRAMKiB, qxlVGAMemKiB // what libvirt writes for none
		}
		if v.Accel3D != nil {
			x.Model.Accel = &libvirtxml.DomainVideoAccel{Accel3D: yesNo(*v.Accel3D)}
		}
		if e, ok := old.take(v.Model); ok && v.Model != "none" {
			x.Address = e.Address
			if x.Model.VRam == 0 {
				x.Model.VRam = e.Model.VRam // libvirt's default, as it wrote it
			}
			if x.Model.Heads == 0 {
				x.Model.Heads = e.Model.Heads
			}
		}
		built = append(built, x)
	}
	out := mergeTyped(existing, built, typedVideo)
	for _, e := range out {
		if !typedVideo(e) && e.Model.Primary == "yes" {
			primaryElsewhere = true
		}
	}
	first := true
	for i := range out {
		if typedVideo(out[i]) {
			out[i].Model.Primary = ""
			if first && !primaryElsewhere && out[i].Model.Type != "none" {
				out[i].Model.Primary = "yes"
			}
			first = false
		}
	}
	return out
}

// buildPanics is p in the place of the definition's typed panic (untypedPanics: the
// others stay), keeping its address when it is of the same model (an isa panic's port).
func buildPanics(dev *libvirtxml.DomainDeviceList, p *Panic) []libvirtxml.DomainPanic {
	escaped := untypedPanics(dev)
	var x *libvirtxml.DomainPanic
	if p != nil {
		x = &libvirtxml.DomainPanic{Model: p.Model}
	}
	var out []libvirtxml.DomainPanic
	for _, e := range dev.Panics {
		switch {
		case slices.ContainsFunc(escaped, func(u libvirtxml.DomainPanic) bool { return reflect.DeepEqual(u, e) }):
			out = append(out, e)
		case x != nil:
			if e.Model == x.Model {
				x.Address = e.Address
			}
			out = append(out, *x)
			x = nil
		}
	}
	if x != nil {
		out = append(out, *x)
	}
	return out
}

// mergeTyped puts built in the places of existing's typed devices (typed), in order, and
// the rest of built after them; existing's other devices stay where they are.
func mergeTyped[T any](existing, built []T, typed func(T) bool) []T {
	var out []T
	i := 0
	for _, e := range existing {
		switch {
		case !typed(e):
			out = append(out, e)
		case i < len(built):
			out = append(out, built[i])
			i++
		}
	}
	return append(out, built[i:]...)
}

// buildRNGs is rs, after the rngs of the definition the spec cannot say (typedRNG: an egd
// or builtin backend, a driver, ...: device_xml's or made elsewhere, kept as they are).
func buildRNGs(existing []libvirtxml.DomainRNG, rs []RNG) []libvirtxml.DomainRNG {
	var out, mine []libvirtxml.DomainRNG
	for _, e := range existing {
		if typedRNG(e) {
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

// buildSounds is ss in the places of the definition's typed sound cards; the others
// (codecs, an audio link, ...: device_xml's or made elsewhere) stay. A card of the same
// model as before keeps its address.
func buildSounds(existing []libvirtxml.DomainSound, ss []Sound) []libvirtxml.DomainSound {
	old := newReuse(existing, func(e libvirtxml.DomainSound) string {
		if !typedSound(e) {
			return ""
		}
		return e.Model
	})
	var built []libvirtxml.DomainSound
	for _, s := range ss {
		x := libvirtxml.DomainSound{Model: s.Model}
		if e, ok := old.take(s.Model); ok {
			x.Address = e.Address
		}
		built = append(built, x)
	}
	return mergeTyped(existing, built, typedSound)
}

// buildInputs is ins (none: libvirt's implicit ones only) in the places of the
// definition's typed inputs; an input on the same type and bus as before keeps its
// address. The implicit ps2 mouse and keyboard the definition has stay unless ins names
// them (libvirt adds them back to an x86 guest anyway), and so do the inputs the spec
// cannot say (typedInput: a host device passed through, a driver, ...: device_xml's or
// made elsewhere).
func buildInputs(existing []libvirtxml.DomainInput, ins []Input) []libvirtxml.DomainInput {
	named := func(e libvirtxml.DomainInput) bool { return slices.Contains(ins, Input{Type: e.Type, Bus: e.Bus}) }
	replaced := func(e libvirtxml.DomainInput) bool {
		return typedInput(e) && (named(e) || !ImplicitInput(Input{Type: e.Type, Bus: e.Bus}))
	}
	var built []libvirtxml.DomainInput
	for _, in := range ins {
		x := libvirtxml.DomainInput{Type: in.Type, Bus: in.Bus}
		for _, e := range existing {
			if e.Type == in.Type && e.Bus == in.Bus && typedInput(e) {
				x.Address = e.Address
				break
			}
		}
		built = append(built, x)
	}
	return mergeTyped(existing, built, replaced)
}

// parseGuestDevices reads the guest devices the family can describe, but for those
// libvirt adds to every x86 definition by itself: the ps2 mouse and keyboard and the
// plain virtio memballoon (a spec that names them reads them back from their absence:
// see ImplicitInput, DefaultMemBalloon). The video libvirt adds for a graphical
// console is read: it is there only with a console, so its absence says nothing.
func parseGuestDevices(dev *libvirtxml.DomainDeviceList) GuestDevices {
	var g GuestDevices
	for _, x := range dev.Videos {
		if !typedVideo(x) {
			continue
		}
		m := x.Model
		v := Video{Model: m.Type, VRAMKiB: nonZero(m.VRam), Heads: nonZero(m.Heads)}
		if m.Accel != nil && m.Accel.Accel3D != "" {
			b := m.Accel.Accel3D == "yes"
			v.Accel3D = &b
		}
		g.Videos = append(g.Videos, v)
	}
	for _, r := range dev.RNGs {
		if typedRNG(r) {
			n := RNG{Model: r.Model, Backend: r.Backend.Random.Device}
			if r.Rate != nil {
				n.RateBytes, n.RatePeriodMS = uintPtr(r.Rate.Bytes), nonZero(r.Rate.Period)
			}
			g.RNGs = append(g.RNGs, n)
		}
	}
	for _, w := range dev.Watchdogs {
		if !typedWatchdog(w) {
			continue
		}
		g.Watchdogs = append(g.Watchdogs, Watchdog{Model: w.Model, Action: w.Action})
	}
	if escaped := untypedPanics(dev); len(escaped) < len(dev.Panics) {
		for _, x := range dev.Panics {
			if !slices.ContainsFunc(escaped, func(u libvirtxml.DomainPanic) bool { return reflect.DeepEqual(u, x) }) {
				g.Panic = &Panic{Model: x.Model}
				break
			}
		}
	}
	if v := dev.VSock; v != nil {
		g.VSock = &VSock{}
		if v.CID != nil && v.CID.Auto != "yes" {
			if n, err := strconv.ParseUint(v.CID.Address, 10, 32); err == nil {
				g.VSock.CID = uintPtr(uint(n))
			}
		}
	}
	if m := dev.MemBalloon; m != nil && typedMemBalloon(*m) {
		g.MemBalloon = &MemBalloon{Model: m.Model, AutoDeflate: onOffPtr(m.AutoDeflate), FreePageReporting: onOffPtr(m.FreePageReporting)}
		if m.Stats != nil {
			g.MemBalloon.StatsPeriodSec = uintPtr(m.Stats.Period)
		}
		if DefaultMemBalloon(g.MemBalloon) {
			g.MemBalloon = nil
		}
	}
	for _, x := range dev.Sounds {
		if !typedSound(x) {
			continue
		}
		g.Sounds = append(g.Sounds, Sound{Model: x.Model})
	}
	for _, in := range dev.Inputs {
		if x := (Input{Type: in.Type, Bus: in.Bus}); typedInput(in) && !ImplicitInput(x) {
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
