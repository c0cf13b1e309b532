package domainxml

import (
	"reflect"
	"regexp"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Adoption (#25): the guest devices the family's attributes cannot say exactly are
// device_xml's (untypedGuestDevices); parse does not read them, build keeps them where
// the definition has them and writes no typed twin. Each is judged alone, so that a
// device_xml fragment of one is accepted: a video, sound, rng, input, memballoon or TPM
// with anything beyond the typed attributes (a driver, codecs, an audio link, a
// resolution, an egd backend, ...), a model the schema does not list, a hyperv panic.
// The <audio> backends go with them unless they are the one libvirt adds by itself.

// untypedGuestDevices: the guest devices family's untyped hook.
func untypedGuestDevices(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	out := untypedInputs(l) // device_xml_adopt.go
	for _, x := range l.Videos {
		if !typedVideo(x) {
			out.Videos = append(out.Videos, x)
		}
	}
	for _, x := range l.RNGs {
		if !typedRNG(x) {
			out.RNGs = append(out.RNGs, x)
		}
	}
	for _, x := range l.Sounds {
		if !typedSound(x) {
			out.Sounds = append(out.Sounds, x)
		}
	}
	out.Panics = untypedPanics(l)
	for _, x := range l.Watchdogs {
		if !typedWatchdog(x) {
			out.Watchdogs = append(out.Watchdogs, x)
		}
	}
	if m := l.MemBalloon; m != nil && !typedMemBalloon(*m) {
		out.MemBalloon = m
	}
	if !defaultAudio(l) {
		out.Audios = l.Audios
	}
	return out
}

// typedVideo: a model the schema lists, its size in vram and heads (up to the schema's 16), 3D acceleration on
// or off, a primary mark (libvirt's on the first video), and for qxl libvirt's own ram
// and vgamem (build writes them as libvirt would).
func typedVideo(x libvirtxml.DomainVideo) bool {
	m := x.Model
	if !slices.Contains(VideoModels, m.Type) || m.Heads > 16 || x.Driver != nil || x.ACPI != nil || userAlias(x.Alias) {
		return false
	}
	if m.Accel != nil && (m.Accel.Accel3D == "" || m.Accel.Accel2D != "" || m.Accel.RenderNode != "") {
		return false
	}
	if m.Type == "qxl" {
		if m.Ram != 0 && m.Ram != qxlRAMKiB || m.VGAMem != 0 && m.VGAMem != qxlVGAMemKiB {
			return false
		}
		m.Ram, m.VGAMem = 0, 0
	}
	m.Type, m.Heads, m.VRam, m.Primary, m.Accel = "", 0, 0, "", nil
	return reflect.DeepEqual(m, libvirtxml.DomainVideoModel{})
}

// libvirt's ram and vgamem of a qxl card (KiB).
const (
	qxlRAMKiB    = 65536
	qxlVGAMemKiB = 16384
)

// rngDevice is the rng backends the schema takes (a device under /dev).
var rngDevice = regexp.MustCompile(`^/dev/\S+$`)

// typedRNG: a model the schema lists fed from a host device, optionally rate-limited.
func typedRNG(x libvirtxml.DomainRNG) bool {
	return slices.Contains(RNGModels, x.Model) && randomRNG(x) && x.Backend.EGD == nil && x.Backend.BuiltIn == nil &&
		rngDevice.MatchString(x.Backend.Random.Device) &&
		x.Driver == nil && x.ACPI == nil && !userAlias(x.Alias) && (x.Rate == nil || x.Rate.Bytes > 0)
}

// typedSound: a model the schema lists, nothing else (no codec, audio link, driver, ...).
func typedSound(x libvirtxml.DomainSound) bool {
	return slices.Contains(SoundModels, x.Model) && x.MultiChannel == "" && x.Streams == 0 && len(x.Codec) == 0 &&
		x.Audio == nil && x.ACPI == nil && x.Driver == nil && !userAlias(x.Alias)
}

// typedInput: a tablet, mouse or keyboard on a bus the schema lists, nothing else.
func typedInput(x libvirtxml.DomainInput) bool {
	return slices.Contains(InputTypes, x.Type) && slices.Contains(InputBuses, x.Bus) && x.Model == "" && x.Driver == nil &&
		!hostInput(x) && x.ACPI == nil && !userAlias(x.Alias) && !userAddress(x.Address)
}

// userAddress says a is an address libvirt never chooses itself: a port behind a USB hub
// (1.2), an ISA I/O base, a PCI function other than 0 or a multifunction slot. The
// device goes into device_xml with it (withoutAddress keeps it).
func userAddress(a *libvirtxml.DomainAddress) bool {
	switch {
	case a == nil:
		return false
	case a.USB != nil:
		return strings.Contains(a.USB.Port, ".")
	case a.ISA != nil:
		return true
	case a.PCI != nil:
		return a.PCI.MultiFunction == "on" || a.PCI.Function != nil && *a.PCI.Function != 0
	}
	return false
}

// typedPanic: a panic notifier of a model the schema lists, nothing else.
func typedPanic(x libvirtxml.DomainPanic) bool {
	return (x.Model == "" || slices.Contains(PanicModels, x.Model)) && x.ACPI == nil && !userAlias(x.Alias) && !userAddress(x.Address)
}

// untypedPanics are the panics of l the panic attribute does not say: the schema has one
// panic, so beside the first typed one that is not hyperv (an isa or pvpanic), every
// other — the Hyper-V crash MSRs a Windows guest has beside it among them — is device_xml's.
// A hyperv panic alone in l is device_xml's too when l is nothing but it (a device_xml
// fragment: the one import wrote beside an isa panic); in a definition, a lone hyperv
// panic is the attribute's.
func untypedPanics(l *libvirtxml.DomainDeviceList) []libvirtxml.DomainPanic {
	first := slices.IndexFunc(l.Panics, func(x libvirtxml.DomainPanic) bool { return typedPanic(x) && x.Model != "hyperv" })
	if first < 0 && !(len(l.Panics) == 1 && deviceCount(l) == 1) {
		first = slices.IndexFunc(l.Panics, typedPanic) // a hyperv one
	}
	var out []libvirtxml.DomainPanic
	for i, x := range l.Panics {
		if i != first {
			out = append(out, x)
		}
	}
	return out
}

// deviceCount is the number of devices in l.
func deviceCount(l *libvirtxml.DomainDeviceList) int {
	n := 0
	v := reflect.ValueOf(l).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Slice:
			n += f.Len()
		case reflect.Pointer:
			if !f.IsNil() {
				n++
			}
		}
	}
	return n
}

func typedWatchdog(x libvirtxml.DomainWatchdog) bool {
	return slices.Contains(WatchdogModels, x.Model) && (x.Action == "" || slices.Contains(WatchdogActions, x.Action)) &&
		x.ACPI == nil && !userAlias(x.Alias)
}

func typedMemBalloon(x libvirtxml.DomainMemBalloon) bool {
	return slices.Contains(MemBalloonModels, x.Model) && x.Driver == nil && x.ACPI == nil && !userAlias(x.Alias)
}

// userAlias: an alias the user chose (libvirt's own are assigned again).
func userAlias(a *libvirtxml.DomainAlias) bool { return a != nil && strings.HasPrefix(a.Name, "ua-") }

// defaultAudio says whether l's audio backends are none, or the one libvirt (9) adds by
// itself to a definition without one (id 1, type spice with a SPICE console, else none)
// and nothing refers to it: import leaves it to libvirt.
func defaultAudio(l *libvirtxml.DomainDeviceList) bool {
	if len(l.Audios) == 0 {
		return true
	}
	if len(l.Audios) > 1 {
		return false
	}
	for _, s := range l.Sounds {
		if s.Audio != nil {
			return false
		}
	}
	spice := slices.ContainsFunc(l.Graphics, func(g libvirtxml.DomainGraphic) bool { return g.Spice != nil })
	want := libvirtxml.DomainAudio{ID: 1, None: &libvirtxml.DomainAudioNone{}}
	if spice {
		want = libvirtxml.DomainAudio{ID: 1, SPICE: &libvirtxml.DomainAudioSPICE{}}
	}
	a := l.Audios[0]
	a.XMLName = want.XMLName
	return reflect.DeepEqual(a, want)
}
