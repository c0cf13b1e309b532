package domainxml

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func boolp(b bool) *bool { return &b }

// TestFeaturesFixture: what libvirt 9.0 returned for a virsh-defined domain with every
// managed feature reads back as such; merged onto it, a spec that keeps them (nil) or
// turns a few off keeps what it does not name (vendor_id, vmport).
func TestFeaturesFixture(t *testing.T) {
	text, err := os.ReadFile("testdata/features_libvirt.xml")
	if err != nil {
		t.Fatal(err)
	}
	var base libvirtxml.Domain
	if err := base.Unmarshal(string(text)); err != nil {
		t.Fatal(err)
	}
	p, _ := FromDomain(&base)
	f := p.Spec.Features
	if f == nil || !*f.ACPI || !*f.APIC || !*f.PAE || !*f.HAP || !*f.SMM || !*f.KVMHidden ||
		!slices.Equal(f.HyperV, []string{"relaxed", "vapic", "spinlocks"}) {
		t.Fatalf("features %+v", f)
	}
	if !featuresFamily.same(p.Spec, Spec{}) {
		t.Error("a spec that keeps the features differs")
	}
	spec := p.Spec
	spec.Features = &Features{PAE: boolp(false), KVMHidden: boolp(false), HyperV: []string{"relaxed", "synic"}}
	d, err := Build(&base, spec)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := d.Marshal()
	for _, want := range []string{"<acpi>", "<smm state=\"on\">", "<vmport state=\"off\">", `<vendor_id state="on" value="kvmforge">`,
		`<relaxed state="on">`, `<synic state="on">`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	// (the record holds the <features> fragment the spec read back: look at <features> only)
	feats := out[strings.Index(out, "<features>"):strings.Index(out, "</features>")]
	for _, gone := range []string{"<pae>", "<kvm>", "vapic", "spinlocks"} {
		if strings.Contains(feats, gone) {
			t.Errorf("%s still there:\n%s", gone, out)
		}
	}
	again, _ := FromDomain(d)
	if !featuresFamily.same(again.Spec, spec) {
		t.Errorf("round trip: %+v", again.Spec.Features)
	}
}

// TestFeaturesBuild: unset keeps a fresh definition's acpi/apic exactly (nil reads
// back as nil); spinlocks gets its retries; an empty hyperv list removes <hyperv>; a
// change restarts a running domain and hyperv order does not matter.
func TestFeaturesBuild(t *testing.T) {
	s := Spec{Name: "m", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB}
	d, _ := Build(nil, s)
	if p, _ := FromDomain(d); p.Spec.Features != nil {
		t.Errorf("fresh definition reads as %+v, want nil", p.Spec.Features)
	}
	s.Features = &Features{SMM: boolp(true), KVMHidden: boolp(true), HyperV: []string{"spinlocks", "relaxed"}}
	d, _ = Build(nil, s)
	if h := d.Features.HyperV; h == nil || h.Spinlocks == nil || h.Spinlocks.Retries != SpinlockRetries || h.Relaxed == nil ||
		d.Features.SMM == nil || d.Features.KVM == nil || d.Features.ACPI == nil {
		t.Fatalf("features %+v", d.Features)
	}
	p, _ := FromDomain(d)
	if !featuresFamily.same(p.Spec, s) {
		t.Errorf("round trip %+v", p.Spec.Features)
	}
	s2 := s
	s2.Features = &Features{HyperV: []string{"relaxed", "spinlocks"}}
	if !featuresFamily.same(p.Spec, s2) {
		t.Error("hyperv in another order differs")
	}
	s2.Features = &Features{HyperV: []string{}, KVMHidden: boolp(false)}
	if pl := PlanChange(s, s2, true, true, nil); pl.Change != ChangeRestart {
		t.Errorf("features change on a running domain: %s", pl.Change)
	}
	d, _ = Build(d, s2)
	if d.Features.HyperV != nil || d.Features.KVM != nil || d.Features.SMM == nil {
		t.Errorf("after turning hyperv and kvm_hidden off: %+v", d.Features)
	}
}

// TestFeaturesKeptThenWritten: libvirt_domain v3 keeps in state only the features written,
// so a feature written later may be what the domain already has: with the definition at
// hand (apply) that is no change; at plan time (no definition) or when the domain differs,
// a running domain restarts.
func TestFeaturesKeptThenWritten(t *testing.T) {
	old := Spec{Name: "f", Features: &Features{}}
	next := Spec{Name: "f", Features: &Features{ACPI: boolp(true), HyperV: []string{}}}
	has := &libvirtxml.Domain{Features: &libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}}}
	if c := PlanChange(old, next, true, true, has).Change; c != ChangeNone {
		t.Errorf("acpi the domain has: %s", c)
	}
	if c := PlanChange(old, next, true, true, nil).Change; c != ChangeRestart {
		t.Errorf("at plan time: %s", c)
	}
	if c := PlanChange(old, next, true, true, &libvirtxml.Domain{}).Change; c != ChangeRestart {
		t.Errorf("acpi the domain lacks: %s", c)
	}
}

// A <features> the members cannot say reads back whole as an extra_xml fragment, which
// build writes as the element (members set beside it override it) and whose removal
// takes <features> back to a fresh definition's; one in a form they say is refused.
func TestFeaturesFragment(t *testing.T) {
	const frag = `<features><acpi/><apic/><hyperv mode='custom'><relaxed state='on'/><evmcs state='off'/></hyperv><vmport state='off'/></features>`
	if _, err := ParseExtraFragment(frag); err != nil {
		t.Fatalf("untyped <features>: %v", err)
	}
	if _, err := ParseExtraFragment(`<features><acpi/><apic/><pae/></features>`); err == nil || !strings.Contains(err.Error(), "managed by features") {
		t.Errorf("typed <features> accepted: %v", err)
	}
	s := Spec{Name: "f", Type: "kvm", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, ExtraXML: []string{frag}}
	d, _ := build(t, nil, s)
	if f := d.Features; f == nil || f.VMPort == nil || f.HyperV == nil || f.HyperV.EVMCS == nil || f.HyperV.EVMCS.State != "off" || f.ACPI == nil {
		t.Fatalf("fragment built as %+v", d.Features)
	}
	p, _ := FromDomain(d)
	if !FeaturesFragment(p.Spec.ExtraXML) || !slices.ContainsFunc(p.Spec.ExtraXML, func(x string) bool { return sameFragment(x, frag) }) {
		t.Errorf("read back: %v", p.Spec.ExtraXML)
	}
	// Members beside it: only what differs is written (evmcs stays off, vmport stays).
	s.Features = &Features{ACPI: boolp(true), PAE: boolp(true), HyperV: []string{"relaxed"}}
	d2, _ := build(t, d, s)
	if f := d2.Features; f.PAE == nil || f.VMPort == nil || f.HyperV.EVMCS == nil || f.HyperV.Relaxed == nil {
		t.Errorf("members over the fragment: %+v", f)
	}
	// The fragment removed: a fresh definition's features.
	s.Features, s.ExtraXML, s.ExtraXMLWas = nil, nil, []string{frag}
	d3, _ := build(t, d, s)
	if f := d3.Features; f == nil || f.VMPort != nil || f.HyperV != nil || f.ACPI == nil || f.APIC == nil {
		t.Errorf("fragment removed: %+v", f)
	}
	if p, _ := FromDomain(d3); FeaturesFragment(p.Spec.ExtraXML) {
		t.Errorf("a fresh definition's features read as a fragment: %v", p.Spec.ExtraXML)
	}
}

// vmport, ioapic and gic are typed: virt-install's <vmport state='off'/> and an ARM
// domain's <gic> read as members, not a fragment, and build back exactly.
func TestFeaturesVMPortIOAPICGIC(t *testing.T) {
	for _, x := range []string{
		`<features><acpi/><apic/><vmport state='off'/></features>`,
		`<features><acpi/><apic/><ioapic driver='qemu'/></features>`,
		`<features><acpi/><gic version='3'/></features>`,
	} {
		n, err := parseNode(x)
		if err != nil {
			t.Fatal(err)
		}
		probe, _ := fragmentDomain(n)
		if !featuresTyped(probe.Features) {
			t.Errorf("%s: untyped", x)
		}
		f := featuresOf(probe.Features)
		s := Spec{Name: "f", Type: "kvm", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Features: f}
		d, _ := build(t, nil, s)
		if !reflect.DeepEqual(featuresOf(d.Features), f) {
			t.Errorf("%s built as %+v", x, d.Features)
		}
	}
	if !featuresFamily.same(Spec{Features: &Features{VMPort: "off"}}, Spec{Features: &Features{}}) ||
		featuresFamily.same(Spec{Features: &Features{VMPort: "off"}}, Spec{Features: &Features{VMPort: "on"}}) {
		t.Error("same: vmport")
	}
}
