package domainxml

import (
	"os"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// everyFamilyFixtures are the definitions libvirt 9.0 returned for the hand-written
// domains of the provider's TestAccDomainAdopt_everyFamily (every device family at once,
// with what libvirt fills in): as written, and with libvirt's defaults left out.
var everyFamilyFixtures = []string{"testdata/every_family_libvirt.xml", "testdata/every_family_defaulted_libvirt.xml"}

func readFixture(t *testing.T, path string) (*libvirtxml.Domain, *Parsed) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d libvirtxml.Domain
	if err := d.Unmarshal(string(b)); err != nil {
		t.Fatal(err)
	}
	p, err := FromDomain(&d)
	if err != nil {
		t.Fatal(err)
	}
	return &d, p
}

// What such a domain reads as is valid, and rebuilding it onto itself changes nothing a
// family sees (an import that plans clean must also survive its first rewrite).
func TestEveryFamily_fixturesRoundTrip(t *testing.T) {
	for _, path := range everyFamilyFixtures {
		d, p := readFixture(t, path)
		if err := p.Spec.Validate(); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		_, text := build(t, d, p.Spec)
		again, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if c := Classify(p.Spec, again.Spec, false, false); c != ChangeNone {
			t.Errorf("%s: rebuilt onto itself reads back as a %s change:\n%+v\n%+v", path, c, p.Spec, again.Spec)
		}
	}
}
