package domainxml

import (
	"slices"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// buildGuestDevices writes the guest devices g manages into dev. A kind g leaves out is
// kept as the definition has it, unless g.Drop names it: then it is taken away. A device
// of the same model as before keeps its address.
func buildGuestDevices(dev *libvirtxml.DomainDeviceList, g GuestDevices) {
	manage := func(kind string, set bool) bool { return set || slices.Contains(g.Drop, kind) }
	if manage(kindVideo, g.Video != nil) {
		dev.Videos = buildVideo(dev.Videos, g.Video)
	}
	if manage(kindRNG, g.RNG != nil) {
		dev.RNGs = buildRNG(dev.RNGs, g.RNG)
	}
	if manage(kindWatchdog, g.Watchdog != nil) {
		dev.Watchdogs = nil
		if w := g.Watchdog; w != nil {
			dev.Watchdogs = []libvirtxml.DomainWatchdog{{Model: w.Model, Action: w.Action}}
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
	if manage(kindSound, g.Sound != nil) {
		dev.Sounds = buildSound(dev.Sounds, g.Sound)
	}
	if manage(kindInput, len(g.Inputs) > 0) {
		dev.Inputs = buildInputs(dev.Inputs, g.Inputs)
	}
}

// keepAddress is the address of the first of existing whose model is model.
func keepAddress[T any](existing []T, model func(T) string, addr func(T) *libvirtxml.DomainAddress, want string) *libvirtxml.DomainAddress {
	for _, e := range existing {
		if model(e) == want {
			return addr(e)
		}
	}
	return nil
}

func buildVideo(existing []libvirtxml.DomainVideo, v *Video) []libvirtxml.DomainVideo {
	if v == nil {
		return nil // libvirt adds its default back for a graphical console
	}
	x := libvirtxml.DomainVideo{Model: libvirtxml.DomainVideoModel{Type: v.Model}}
	x.Model.VRam, x.Model.Heads = deref(v.VRAMKiB), deref(v.Heads)
	if v.Accel3D != nil {
		x.Model.Accel = &libvirtxml.DomainVideoAccel{Accel3D: yesNo(*v.Accel3D)}
	}
	if v.Model != "none" {
		x.Address = keepAddress(existing, func(e libvirtxml.DomainVideo) string { return e.Model.Type },
			func(e libvirtxml.DomainVideo) *libvirtxml.DomainAddress { return e.Address }, v.Model)
	}
	return []libvirtxml.DomainVideo{x}
}

func buildRNG(existing []libvirtxml.DomainRNG, r *RNG) []libvirtxml.DomainRNG {
	if r == nil {
		return nil
	}
	n := normalGuest(GuestDevices{RNG: r}).RNG
	x := libvirtxml.DomainRNG{Model: n.Model, Backend: &libvirtxml.DomainRNGBackend{Random: &libvirtxml.DomainRNGBackendRandom{Device: n.Backend}}}
	if n.RateBytes != nil {
		x.Rate = &libvirtxml.DomainRNGRate{Bytes: *n.RateBytes, Period: deref(n.RatePeriodMS)}
	}
	x.Address = keepAddress(existing, func(e libvirtxml.DomainRNG) string { return e.Model },
		func(e libvirtxml.DomainRNG) *libvirtxml.DomainAddress { return e.Address }, n.Model)
	return []libvirtxml.DomainRNG{x}
}

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

func buildSound(existing []libvirtxml.DomainSound, s *Sound) []libvirtxml.DomainSound {
	if s == nil {
		return nil
	}
	x := libvirtxml.DomainSound{Model: s.Model}
	for _, e := range existing {
		if e.Model == s.Model {
			x.Address, x.Audio = e.Address, e.Audio
			break
		}
	}
	return []libvirtxml.DomainSound{x}
}

// buildInputs is ins (none: libvirt's implicit ones only); an input on the same type and
// bus as before keeps its address.
func buildInputs(existing []libvirtxml.DomainInput, ins []Input) []libvirtxml.DomainInput {
	var out []libvirtxml.DomainInput
	if len(ins) == 0 {
		for _, e := range existing {
			if ImplicitInput(Input{Type: e.Type, Bus: e.Bus}) {
				out = append(out, e)
			}
		}
		return out
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
	return out
}

// parseGuestDevices reads the guest devices the family can describe, but for those
// libvirt adds to every x86 definition by itself: the ps2 mouse and keyboard and the
// plain virtio memballoon (a spec that names them reads them back from their absence:
// see ImplicitInput, DefaultMemBalloon). The video libvirt adds for a graphical
// console is read: it is there only with a console, so its absence says nothing.
func parseGuestDevices(dev *libvirtxml.DomainDeviceList) GuestDevices {
	var g GuestDevices
	if len(dev.Videos) > 0 {
		m := dev.Videos[0].Model
		g.Video = &Video{Model: m.Type, VRAMKiB: nonZero(m.VRam), Heads: nonZero(m.Heads)}
		if m.Accel != nil && m.Accel.Accel3D != "" {
			b := m.Accel.Accel3D == "yes"
			g.Video.Accel3D = &b
		}
	}
	for _, r := range dev.RNGs {
		if r.Backend != nil && r.Backend.Random != nil {
			g.RNG = &RNG{Model: r.Model, Backend: r.Backend.Random.Device}
			if r.Rate != nil {
				g.RNG.RateBytes, g.RNG.RatePeriodMS = uintPtr(r.Rate.Bytes), nonZero(r.Rate.Period)
			}
			break
		}
	}
	if len(dev.Watchdogs) > 0 {
		g.Watchdog = &Watchdog{Model: dev.Watchdogs[0].Model, Action: dev.Watchdogs[0].Action}
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
	if len(dev.Sounds) > 0 {
		g.Sound = &Sound{Model: dev.Sounds[0].Model}
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
