package domain

import (
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// An import of a domain whose <features> says more than the members writes features
// null (extra_xml holds the whole element); one the members say writes them.
func TestFeaturesFromSpecImport(t *testing.T) {
	on, off := true, false
	pae := &domainxml.Features{ACPI: &on, APIC: &on, PAE: &on, SMM: &off, HAP: &off, KVMHidden: &off}
	s := domainxml.Spec{Name: "f", Features: pae}
	if m := fromSpec(s, &Model{}); m.Features.IsNull() {
		t.Error("typed features not imported")
	}
	s.ExtraXML = []string{`<features><acpi/><apic/><pae/><vmport state='off'/></features>`}
	if m := fromSpec(s, &Model{}); !m.Features.IsNull() {
		t.Errorf("escaped features imported as members: %v", m.Features)
	}
	// vmport is a member: imported as one, and kept as the configuration wrote it.
	vm := *pae
	vm.PAE, vm.VMPort = &off, "off"
	s = domainxml.Spec{Name: "f", Features: &vm}
	m := fromSpec(s, &Model{})
	if m.Features.IsNull() || m.Features.Attributes()["vmport"].String() != `"off"` || !m.Features.Attributes()["pae"].IsNull() {
		t.Errorf("vmport imported as %v", m.Features)
	}
	var got domainxml.Spec
	domainFeatures.toSpec(m, &got)
	if got.Features == nil || got.Features.VMPort != "off" || got.Features.IOAPIC != "" {
		t.Errorf("vmport to spec: %+v", got.Features)
	}
}
