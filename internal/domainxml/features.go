package domainxml

import (
	"reflect"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Features: the hypervisor features of <features> the user controls (acpi, apic, pae,
// smm, hap, kvm hidden, and Hyper-V enlightenments for Windows guests). A fresh
// definition has acpi and apic (build.go); a feature left unset keeps what the domain
// has, and every other feature libvirt or the user put there (vmport, ioapic, ...) is
// kept. A change restarts a running domain (QEMU takes them at start only).

// Features is what the user sets; nil keeps what the domain has.
type Features struct {
	ACPI, APIC, PAE, SMM, HAP, KVMHidden *bool
	// HyperV are the enlightenments turned on (HyperVNames); nil keeps the domain's.
	HyperV []string
}

// DefaultFeatures are the features of a fresh definition (build.go): acpi and apic.
func DefaultFeatures() *Features {
	t, f := true, false
	return &Features{ACPI: &t, APIC: &t, PAE: &f, SMM: &f, HAP: &f, KVMHidden: &f}
}

// SpinlockRetries is what the spinlocks enlightenment is written with (libvirt wants a
// count; 8191 is what Windows guests are usually given).
const SpinlockRetries = 8191

// hyperVFeatures are the Hyper-V enlightenments that are on/off only (vendor_id, which
// takes a value, is kept as the domain has it), by libvirt's element name.
var hyperVFeatures = []struct {
	name string
	at   func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState
}{
	{"relaxed", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.Relaxed }},
	{"vapic", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.VAPIC }},
	{"spinlocks", nil}, // has retries
	{"vpindex", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.VPIndex }},
	{"runtime", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.Runtime }},
	{"synic", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.Synic }},
	{"stimer", nil}, // has direct
	{"reset", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.Reset }},
	{"frequencies", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.Frequencies }},
	{"reenlightenment", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.ReEnlightenment }},
	{"tlbflush", nil}, // has direct, extended
	{"ipi", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.IPI }},
	{"evmcs", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.EVMCS }},
	{"avic", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.AVIC }},
	{"emsr_bitmap", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.EMSRBitmap }},
	{"xmm_input", func(h *libvirtxml.DomainFeatureHyperV) **libvirtxml.DomainFeatureState { return &h.XMMInput }},
}

// HyperVNames are the enlightenment names features.hyperv takes, in libvirt's order.
func HyperVNames() []string {
	out := make([]string, len(hyperVFeatures))
	for i, f := range hyperVFeatures {
		out[i] = f.name
	}
	return out
}

var featuresFamily = family{
	name:     "features",
	validate: func(*Spec) error { return nil }, // names: the provider's validator
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		f := s.Features
		if f == nil {
			return nil
		}
		if d.Features == nil {
			d.Features = &libvirtxml.DomainFeatureList{}
		}
		l := d.Features
		setFeature(&l.ACPI, f.ACPI, &libvirtxml.DomainFeature{})
		setFeature(&l.APIC, f.APIC, &libvirtxml.DomainFeatureAPIC{})
		setFeature(&l.PAE, f.PAE, &libvirtxml.DomainFeature{})
		setFeature(&l.SMM, f.SMM, &libvirtxml.DomainFeatureSMM{State: "on"})
		setFeature(&l.HAP, f.HAP, &libvirtxml.DomainFeatureState{State: "on"})
		if f.KVMHidden != nil {
			if l.KVM == nil {
				l.KVM = &libvirtxml.DomainFeatureKVM{}
			}
			setFeature(&l.KVM.Hidden, f.KVMHidden, &libvirtxml.DomainFeatureState{State: "on"})
			if *l.KVM == (libvirtxml.DomainFeatureKVM{}) {
				l.KVM = nil
			}
		}
		if f.HyperV != nil {
			l.HyperV = buildHyperV(l.HyperV, f.HyperV)
		}
		if reflect.DeepEqual(*l, libvirtxml.DomainFeatureList{}) {
			d.Features = nil // libvirt keeps no empty <features/>
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		f := featuresOf(d.Features)
		if !reflect.DeepEqual(f, DefaultFeatures()) {
			p.Spec.Features = f
		} // else nil: what a fresh definition has (round trips of specs that never set it)
	},
	same: sameFeatures,
	// A feature the old spec kept (libvirt_domain v3 keeps only what was written in state)
	// and the new one sets to what the domain already has changes nothing: with the
	// definition at hand (cur) that is no change; without it (plan time), any change
	// restarts, as without this hook.
	live: func(_, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
		if cur == nil || !sameFeatures(Spec{Features: featuresOf(cur.Features)}, next) {
			return nil, "features changes"
		}
		return nil, ""
	},
}

// sameFeatures: b keeps what it leaves nil of a's features and sets the rest as a has them.
func sameFeatures(a, b Spec) bool {
	x, y := a.Features, b.Features
	if y == nil {
		return true
	}
	if x == nil {
		x = DefaultFeatures()
	}
	same := func(have, want *bool) bool {
		return want == nil || (have != nil && *have == *want) || (have == nil && !*want)
	}
	return same(x.ACPI, y.ACPI) && same(x.APIC, y.APIC) && same(x.PAE, y.PAE) && same(x.SMM, y.SMM) &&
		same(x.HAP, y.HAP) && same(x.KVMHidden, y.KVMHidden) &&
		(y.HyperV == nil || slices.Equal(sortedHyperV(x.HyperV), sortedHyperV(y.HyperV)))
}

// featuresOf is what l has of the features the user controls, every one set.
func featuresOf(l *libvirtxml.DomainFeatureList) *Features {
	if l == nil {
		l = &libvirtxml.DomainFeatureList{}
	}
	on := func(b bool) *bool { return &b }
	return &Features{
		ACPI: on(l.ACPI != nil), APIC: on(l.APIC != nil), PAE: on(l.PAE != nil),
		SMM: on(l.SMM != nil && l.SMM.State != "off"), HAP: on(stateOn(l.HAP)),
		KVMHidden: on(l.KVM != nil && stateOn(l.KVM.Hidden)), HyperV: parseHyperV(l.HyperV),
	}
}

// FreshFeatures are the features a new definition of s gets without features set, every
// one set: the arch's (defaultFeatures: acpi and apic on x86, acpi with UEFI on aarch64)
// and smm with Secure Boot (secure_boot.go). An import writes features only where the
// domain's differ from these.
func FreshFeatures(s Spec) *Features {
	f := featuresOf(defaultFeatures(&s))
	if s.SecureBoot != nil && s.SecureBoot.Enabled {
		*f.SMM = true
	}
	return f
}

// setFeature makes *dst on (keeping it as it is when it is there) or off, as want says.
func setFeature[T any](dst **T, want *bool, on *T) {
	switch {
	case want == nil:
	case !*want:
		*dst = nil
	case *dst == nil:
		*dst = on
	}
}

func stateOn(s *libvirtxml.DomainFeatureState) bool { return s != nil && s.State != "off" }

func buildHyperV(h *libvirtxml.DomainFeatureHyperV, names []string) *libvirtxml.DomainFeatureHyperV {
	if h == nil {
		h = &libvirtxml.DomainFeatureHyperV{}
	}
	for _, f := range hyperVFeatures {
		want := slices.Contains(names, f.name)
		state := func() libvirtxml.DomainFeatureState { return libvirtxml.DomainFeatureState{State: "on"} }
		switch f.name {
		case "spinlocks":
			if !want {
				h.Spinlocks = nil
			} else if h.Spinlocks == nil || h.Spinlocks.State == "off" {
				h.Spinlocks = &libvirtxml.DomainFeatureHyperVSpinlocks{DomainFeatureState: state(), Retries: SpinlockRetries}
			}
		case "stimer":
			if !want {
				h.STimer = nil
			} else if h.STimer == nil || h.STimer.State == "off" {
				h.STimer = &libvirtxml.DomainFeatureHyperVSTimer{DomainFeatureState: state()}
			}
		case "tlbflush":
			if !want {
				h.TLBFlush = nil
			} else if h.TLBFlush == nil || h.TLBFlush.State == "off" {
				h.TLBFlush = &libvirtxml.DomainFeatureHyperVTLBFlush{DomainFeatureState: state()}
			}
		default:
			if at := f.at(h); !want {
				*at = nil
			} else if !stateOn(*at) {
				s := state()
				*at = &s
			}
		}
	}
	if len(parseHyperV(h)) == 0 && h.VendorId == nil {
		return nil
	}
	return h
}

// parseHyperV are the enlightenments on in h, in libvirt's order (nil for none).
func parseHyperV(h *libvirtxml.DomainFeatureHyperV) []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, f := range hyperVFeatures {
		var on bool
		switch f.name {
		case "spinlocks":
			on = h.Spinlocks != nil && h.Spinlocks.State != "off"
		case "stimer":
			on = h.STimer != nil && h.STimer.State != "off"
		case "tlbflush":
			on = h.TLBFlush != nil && h.TLBFlush.State != "off"
		default:
			on = stateOn(*f.at(h))
		}
		if on {
			out = append(out, f.name)
		}
	}
	return out
}

func sortedHyperV(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
