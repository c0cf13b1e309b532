package domainxml

import (
	"fmt"
	"reflect"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Features: the hypervisor features of <features> the user controls (acpi, apic, pae,
// smm, hap, kvm hidden, vmport, ioapic, gic, and Hyper-V enlightenments for Windows
// guests). A fresh
// definition has acpi and apic (build.go); a feature left unset keeps what the domain
// has, and every other feature libvirt or the user put there (vmport, ioapic, ...) is
// kept. A change restarts a running domain (QEMU takes them at start only).
//
// What the typed members cannot say exactly (pmu, msrs, tcg, a gic's other attributes, an
// apic's eoi, smm's tseg, the kvm hints, Hyper-V's mode passthrough, vendor_id, stimer
// direct, spinlocks retries but 8191, a feature turned off explicitly, ...) makes the whole
// <features> element untyped (featuresTyped): it reads back as an extra_xml fragment
// (extra_xml_read.go), which extra_xml accepts for <features> in such a form only, and
// which this family writes (before secure boot's smm) as the element; typed members set
// beside it are applied on top. Removing the fragment takes <features> back to a fresh
// definition's before the typed members.

// Features is what the user sets; nil keeps what the domain has.
type Features struct {
	ACPI, APIC, PAE, SMM, HAP, KVMHidden *bool
	// VMPort (<vmport state>: on, off), IOAPIC (<ioapic driver>: kvm, qemu) and GIC
	// (<gic version>: 2, 3, host; ARM) are written as given; empty keeps the domain's
	// (read back: the domain has none).
	VMPort, IOAPIC, GIC string
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
	build:    buildFeatures,
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

func buildFeatures(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
	frag, err := featuresFragment(s.ExtraXML)
	if err != nil {
		return err
	}
	switch {
	case frag != nil:
		d.Features = frag
	case hadFeaturesFragment(base, s.ExtraXMLWas):
		d.Features = defaultFeatures(s) // the fragment removed: a fresh definition's
	}
	f := s.Features
	if f == nil {
		return nil
	}
	if frag != nil {
		f = beyond(f, featuresOf(frag))
	}
	if d.Features == nil {
		d.Features = &libvirtxml.DomainFeatureList{}
	}
	applyFeatures(d.Features, f)
	if reflect.DeepEqual(*d.Features, libvirtxml.DomainFeatureList{}) {
		d.Features = nil // libvirt keeps no empty <features/>
	}
	return nil
}

// beyond is what f sets differently from have (the fragment's): a member the fragment
// already says is left as the fragment writes it (a Hyper-V enlightenment turned off
// explicitly, spinlocks' retries).
func beyond(f, have *Features) *Features {
	out := *f
	for _, m := range []struct {
		want **bool
		have *bool
	}{{&out.ACPI, have.ACPI}, {&out.APIC, have.APIC}, {&out.PAE, have.PAE},
		{&out.SMM, have.SMM}, {&out.HAP, have.HAP}, {&out.KVMHidden, have.KVMHidden}} {
		if *m.want != nil && m.have != nil && **m.want == *m.have {
			*m.want = nil
		}
	}
	if out.HyperV != nil && slices.Equal(sortedHyperV(out.HyperV), sortedHyperV(have.HyperV)) {
		out.HyperV = nil
	}
	for _, m := range []struct {
		want *string
		have string
	}{{&out.VMPort, have.VMPort}, {&out.IOAPIC, have.IOAPIC}, {&out.GIC, have.GIC}} {
		if *m.want == m.have {
			*m.want = ""
		}
	}
	return &out
}

// applyFeatures writes the members f sets into l.
func applyFeatures(l *libvirtxml.DomainFeatureList, f *Features) {
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
	if f.VMPort != "" {
		l.VMPort = &libvirtxml.DomainFeatureState{State: f.VMPort}
	}
	if f.IOAPIC != "" {
		l.IOAPIC = &libvirtxml.DomainFeatureIOAPIC{Driver: f.IOAPIC}
	}
	if f.GIC != "" {
		l.GIC = &libvirtxml.DomainFeatureGIC{Version: f.GIC}
	}
}

// featuresTyped says whether the typed members say l exactly: written from what they
// read of it, l comes back (Hyper-V's mode custom is libvirt's default).
func featuresTyped(l *libvirtxml.DomainFeatureList) bool {
	if l == nil {
		return true
	}
	built := &libvirtxml.DomainFeatureList{}
	applyFeatures(built, featuresOf(l))
	if l.HyperV != nil && built.HyperV != nil && l.HyperV.Mode == "custom" {
		built.HyperV.Mode = "custom"
	}
	want, err1 := elementNodes(&libvirtxml.Domain{Features: l}, "features")
	got, err2 := elementNodes(&libvirtxml.Domain{Features: built}, "features")
	if err1 != nil || err2 != nil || len(want) != len(got) {
		return false
	}
	return len(want) == 0 || want[0].has(&got[0]) && got[0].has(&want[0])
}

// featuresFragment is the <features> fragment of extra (nil when none).
func featuresFragment(extra []string) (*libvirtxml.DomainFeatureList, error) {
	for _, f := range extra {
		n, err := parseNode(f)
		if err != nil || n.XMLName.Local != "features" || n.XMLName.Space != "" {
			continue
		}
		probe, err := fragmentDomain(n)
		if err != nil {
			return nil, fmt.Errorf("extra_xml <features>: %w", err)
		}
		return probe.Features, nil
	}
	return nil, nil
}

// FeaturesFragment says whether extra (extra_xml) has a <features> fragment: the domain's
// features are beyond the typed members, and an import writes features null.
func FeaturesFragment(extra []string) bool {
	f, err := featuresFragment(extra)
	return err == nil && f != nil
}

// hadFeaturesFragment says whether the last apply wrote a <features> fragment (the
// record's extra_xml, or was: the prior state's, an import's).
func hadFeaturesFragment(base *libvirtxml.Domain, was []string) bool {
	old := slices.Clone(was)
	if base != nil {
		old = append(old, readRecord(base).ExtraXML...)
	}
	f, err := featuresFragment(old)
	return err == nil && f != nil
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
		(y.VMPort == "" || y.VMPort == x.VMPort) && (y.IOAPIC == "" || y.IOAPIC == x.IOAPIC) && (y.GIC == "" || y.GIC == x.GIC) &&
		(y.HyperV == nil || slices.Equal(sortedHyperV(x.HyperV), sortedHyperV(y.HyperV)))
}

// featuresOf is what l has of the features the user controls, every one set.
func featuresOf(l *libvirtxml.DomainFeatureList) *Features {
	if l == nil {
		l = &libvirtxml.DomainFeatureList{}
	}
	on := func(b bool) *bool { return &b }
	f := &Features{
		ACPI: on(l.ACPI != nil), APIC: on(l.APIC != nil), PAE: on(l.PAE != nil),
		SMM: on(l.SMM != nil && l.SMM.State != "off"), HAP: on(stateOn(l.HAP)),
		KVMHidden: on(l.KVM != nil && stateOn(l.KVM.Hidden)), HyperV: parseHyperV(l.HyperV),
	}
	if l.VMPort != nil {
		f.VMPort = l.VMPort.State
	}
	if l.IOAPIC != nil {
		f.IOAPIC = l.IOAPIC.Driver
	}
	if l.GIC != nil {
		f.GIC = l.GIC.Version
	}
	return f
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
