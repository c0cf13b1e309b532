package domainxml

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/xmltree"
)

// The pure-Go half of the round-trip suite (issue #25): for every adopt fixture, what
// libvirt printed back (the twin) is read as an import reads it (every family, the
// devices no family types escaped into device_xml, the unmodelled top-level elements
// into extra_xml), then built twice:
//   - update: onto the twin itself, as an apply that changes nothing writes it. Must give
//     the twin back but for what libvirt fills in itself when it defines a domain.
//   - recreate: from nothing, as an apply of the generated configuration on a clean host
//     writes it. Must give the twin back but for what libvirt assigns (xmltree.Assigned)
//     and what libvirt fills in itself when it defines a domain: a leaf of the twin that
//     the fixture as written does not have is libvirt's, and libvirt adds it again.
//
// The findings must equal testdata/adopt/roundtrip-lossy.txt (ADOPT_UPDATE_LOSSY=1
// rewrites it): the file is the list of what the provider still loses, and a change in
// either direction fails until it is looked at.
const adoptRoundTripFile = "testdata/adopt/roundtrip-lossy.txt"

const adoptRoundTripHeader = `# What the provider still loses when it adopts an adopt fixture (issue #25), pure Go:
# libvirt's XML of the fixture (NNN-name.libvirt.xml) read as an import reads it, then
# built onto itself ("update", must be exact) and from nothing ("recreate", exact but for
# what libvirt assigns or fills in itself). One finding a line: fixture: build kind path,
# kinds as in libvirtxml-lossy.txt. Kept true by TestAdoptRoundTrip
# (internal/domainxml/adopt_roundtrip_test.go); ADOPT_UPDATE_LOSSY=1 rewrites this file.
`

func TestAdoptRoundTrip(t *testing.T) {
	var got []string
	counts := map[string]int{}
	for _, base := range adoptFixtures(t) {
		written, err := os.ReadFile(filepath.Join(adoptDir, base+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		twin, err := os.ReadFile(filepath.Join(adoptDir, base+".libvirt.xml"))
		if err != nil {
			t.Fatal(err)
		}
		findings := adoptRoundTrip(t, written, twin)
		counts["fixtures"]++
		if !slices.ContainsFunc(findings, func(f string) bool { return strings.HasPrefix(f, "update ") }) {
			counts["update exact"]++
		}
		if !slices.ContainsFunc(findings, func(f string) bool { return strings.HasPrefix(f, "recreate ") }) {
			counts["recreate exact"]++
		}
		for _, f := range findings {
			got = append(got, base+": "+f)
		}
	}
	sort.Strings(got)
	t.Logf("%d fixtures: update exact %d, recreate exact %d", counts["fixtures"], counts["update exact"], counts["recreate exact"])
	compareAdoptList(t, adoptRoundTripFile, got, "what the provider still loses on a round trip")
}

// adoptRoundTrip returns the findings for one fixture, each prefixed with the build that
// lost it (update / recreate), or a build error.
func adoptRoundTrip(t *testing.T, written, twin []byte) []string {
	t.Helper()
	d, err := UnmarshalDomain(string(twin))
	if err != nil {
		return []string{"parse: " + err.Error()}
	}
	p, err := fromDomain(d, true) // as ParseForImport
	if err != nil {
		return []string{"read: " + err.Error()}
	}
	s := p.Spec
	s.DeviceXML = append(s.DeviceXML, p.Escaped...)
	s.ExtraXML = ImportExtraXML(s.ExtraXML, s.ExtraXMLWas)
	s.ExtraXMLWas = nil

	var out []string
	// The refresh after the import (ParseKnowing with the imported device_xml) reads the
	// same: the escaped devices stay device_xml's, no family takes them back.
	again, err := ParseKnowing(string(twin), s.DeviceXML)
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Spec, again.Spec
	a.DeviceXML, b.DeviceXML = nil, nil
	if !reflect.DeepEqual(a, b) {
		out = append(out, "refresh after import reads another spec")
	}
	for _, f := range p.Escaped {
		if !FragmentPresent(f, again.Escaped) {
			out = append(out, "refresh after import loses fragment "+f)
		}
	}
	base, err := UnmarshalDomain(string(twin))
	if err != nil {
		t.Fatal(err)
	}
	updated, err := Build(base, s)
	if err != nil {
		out = append(out, "update refused: "+err.Error())
	} else if xml, err := updated.Marshal(); err != nil {
		out = append(out, "update marshal: "+err.Error())
	} else {
		for _, f := range adoptRecreateDiff(t, written, twin, []byte(xml)) {
			out = append(out, "update "+f)
		}
	}

	fresh, err := Build(nil, s)
	if err != nil {
		return append(out, "recreate refused: "+err.Error())
	}
	xml, err := fresh.Marshal()
	if err != nil {
		return append(out, "recreate marshal: "+err.Error())
	}
	for _, f := range adoptRecreateDiff(t, written, twin, []byte(xml)) {
		out = append(out, "recreate "+f)
	}
	return out
}

// adoptRecreateDiff compares a domain built (from nothing or onto the twin) with the twin: libvirt's
// assignments are taken out of both, and what the twin has beyond the fixture as
// written (libvirt's fill-ins) is taken out of the twin where the build lacks it.
func adoptRecreateDiff(t *testing.T, written, twin, built []byte) []string {
	t.Helper()
	wt, err := xmltree.Parse(written)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := xmltree.Parse(twin)
	if err != nil {
		t.Fatal(err)
	}
	bt, err := xmltree.Parse(built)
	if err != nil {
		t.Fatal(err)
	}
	xmltree.Assigned(tt, wt)
	xmltree.Assigned(bt, wt)
	return xmltree.DiffFilled(tt, bt, wt)
}

func compareAdoptList(t *testing.T, file string, got []string, what string) {
	t.Helper()
	if os.Getenv(adoptUpdateEnv) != "" {
		writeAdoptList(t, file, got, what)
		return
	}
	want := readAdoptList(t, file)
	if slices.Equal(got, want) {
		return
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("new finding, not in %s: %s", file, l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("%s lists a finding that is gone: %s", file, l)
		}
	}
	t.Errorf("the findings changed; check them, then rerun with %s=1 to rewrite %s", adoptUpdateEnv, file)
}
