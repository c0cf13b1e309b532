package domainxml

import (
	"encoding/xml"
	"os"
	"slices"
	"strings"
	"testing"
)

// A virt-install domain's libosinfo entry, whose namespace libvirt prints on <metadata>,
// survives UnmarshalDomain and Marshal with its namespace bound (libvirtxml alone leaves
// the prefix unbound, and libvirt then stores an empty <metadata/>); so does each entry
// of a domain with several, and the domain's own record beside them.
func TestUnmarshalDomain_metadataNamespaces(t *testing.T) {
	for file, want := range map[string][]string{
		"151-virt-install-q35-linux.libvirt.xml":   {"http://libosinfo.org/xmlns/libvirt/domain/1.0 libosinfo"},
		"221-metadata-root-ns-several.libvirt.xml": nil, // every top-level entry, whatever it is
	} {
		b, err := os.ReadFile("testdata/adopt/" + file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := UnmarshalDomain(string(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := SetMetadata(d, "https://example.test/record", "record", struct {
			V string `xml:"v,attr"`
		}{"1"}); err != nil {
			t.Fatal(err)
		}
		text, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got := metadataEntries(t, text)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: metadata entries %v, want %s", file, got, w)
			}
		}
		if len(got) < 2 {
			t.Errorf("%s: metadata entries %v, want the domain's and the record", file, got)
		}
		for _, e := range got {
			if strings.HasPrefix(e, " ") {
				t.Errorf("%s: entry %q has no namespace after a round trip:\n%s", file, e, text)
			}
		}
	}
}

// metadataEntries are the namespace and name of each element under <metadata>, as an
// XML reader that resolves prefixes sees them.
func metadataEntries(t *testing.T, text string) []string {
	t.Helper()
	var doc struct {
		Metadata struct {
			Entries []struct{ XMLName xml.Name } `xml:",any"`
		} `xml:"metadata"`
	}
	if err := xml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range doc.Metadata.Entries {
		out = append(out, e.XMLName.Space+" "+e.XMLName.Local)
	}
	return out
}

// Declarations go only where a prefix is used, and text is otherwise unchanged.
func TestDeclareNamespaces(t *testing.T) {
	decls := map[string]string{"a": "urn:a", "b": "urn:b&c"}
	in := `<a:x k="1"><a:y/></a:x> <plain xmlns="urn:p"><b:z/></plain><a:own xmlns:a="urn:other"/>`
	want := `<a:x xmlns:a="urn:a" k="1"><a:y/></a:x> <plain xmlns:b="urn:b&amp;c" xmlns="urn:p"><b:z/></plain><a:own xmlns:a="urn:other"/>`
	if got := declareNamespaces(in, decls); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
