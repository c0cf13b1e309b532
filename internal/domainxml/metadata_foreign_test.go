package domainxml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every element an import writes into extra_xml is accepted back by extra_xml's check and
// reads back as present (the generated configuration plans clean).
func TestImportedExtraXMLAccepted(t *testing.T) {
	for _, base := range adoptFixtures(t) {
		twin, err := os.ReadFile(filepath.Join(adoptDir, base+".libvirt.xml"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := UnmarshalDomain(string(twin))
		if err != nil {
			continue
		}
		have := unmodelledElements(d)
		list := ImportExtraXML(have, nil)
		for i, err := range CheckExtraXML(list) {
			if err != nil {
				t.Errorf("%s: extra_xml[%d] %s: %v", base, i, list[i], err)
			}
		}
		for _, f := range list {
			if !ExtraXMLPresent(have, f) {
				t.Errorf("%s: %s does not read back", base, f)
			}
		}
	}
}

func TestMetadataFragment(t *testing.T) {
	const osinfo = "http://libosinfo.org/xmlns/libvirt/domain/1.0"
	rootDecl := `<metadata xmlns:libosinfo="` + osinfo + `"><libosinfo:libosinfo><libosinfo:os id="http://debian.org/debian/12"/></libosinfo:libosinfo></metadata>`
	if err := CheckExtraXML([]string{rootDecl})[0]; err != nil {
		t.Fatal(err)
	}
	s := fsSpec()
	s.ExtraXML = []string{rootDecl}
	s.Describe.Tags = map[string]string{"team": "a"}
	built, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := built.Marshal()
	back, err := UnmarshalDomain(text)
	if err != nil {
		t.Fatal(err)
	}
	got := foreignMetadata(back)
	if !strings.Contains(got, "libosinfo") || strings.Contains(got, MetadataNS) {
		t.Fatalf("foreign metadata read back as %q", got)
	}
	if !ExtraXMLPresent(unmodelledElements(back), rootDecl) {
		t.Fatalf("%s does not read back from %s", rootDecl, got)
	}
	if !sameFragment(rootDecl, got) {
		t.Fatalf("%s and %s differ", rootDecl, got)
	}
	// Dropping the fragment takes the element away, the provider's record stays.
	s.ExtraXML, s.ExtraXMLWas = nil, []string{rootDecl}
	again, err := Build(back, s)
	if err != nil {
		t.Fatal(err)
	}
	if f := foreignMetadata(again); f != "" {
		t.Fatalf("dropped fragment still there: %s", f)
	}
	if rec := readRecord(again); len(rec.Tags) != 1 {
		t.Fatalf("record lost: %+v", rec)
	}
	for _, bad := range []string{
		`<metadata><app/></metadata>`,
		`<metadata><domain xmlns="` + MetadataNS + `"/></metadata>`,
		`<metadata/>`,
		`<metadata>text<a:x xmlns:a="urn:a"/></metadata>`,
	} {
		if CheckExtraXML([]string{bad})[0] == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
