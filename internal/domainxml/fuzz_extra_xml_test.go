package domainxml

import (
	"testing"
)

// FuzzExtraFragment: any text given as an extra_xml fragment is either refused, or is one
// top-level element no family owns (no <cputune> pins), that a definition the provider
// builds holds and reads back as present (so an accepted fragment plans clean).
func FuzzExtraFragment(f *testing.F) {
	for _, seed := range []string{
		clockTimers, memtune, blkiotune, perf, keywrap,
		`<seclabel type='none'/>`,
		`<cputune><shares>2048</shares><period>100000</period></cputune>`,
		`<cputune><vcpupin vcpu='0' cpuset='0'/></cputune>`,
		`<resource><partition>/machine</partition></resource>`,
		`<pm><suspend-to-mem enabled='no'/></pm>`,
		`<genid/>`,
		`<os><type>hvm</type></os>`,
		`<devices/>`,
		`<clock offset='utc'/><memtune/>`,
		`<!-- c --><clock offset='utc'/>`,
		`<clock offset='utc' x='1'/>`,
		`text`,
		``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, frag string) {
		n, err := ParseExtraFragment(frag)
		if err != nil {
			return
		}
		name := n.XMLName.Local
		if _, owned := ownedElements[name]; owned {
			t.Fatalf("accepted <%s>, which is refused in extra_xml: %q", name, frag)
		}
		s := extraBase()
		s.ExtraXML = []string{frag}
		d, err := Build(nil, s)
		if err != nil {
			t.Fatalf("accepted %q, but a definition with it does not build: %v", frag, err)
		}
		text, err := d.Marshal()
		if err != nil {
			t.Fatalf("accepted %q, but its definition does not marshal: %v", frag, err)
		}
		p, err := Parse(text)
		if err != nil {
			t.Fatalf("accepted %q, but its definition does not parse: %v", frag, err)
		}
		if !ExtraXMLPresent(p.Spec.ExtraXML, frag) {
			t.Fatalf("accepted %q, but the definition reads back %q", frag, p.Spec.ExtraXML)
		}
	})
}
