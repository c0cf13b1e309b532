package domainxml

import (
	"reflect"
	"testing"
	"unicode/utf8"

	"libvirt.org/go/libvirtxml"
)

// xmlSafe reports whether s survives XML text: valid UTF-8 of characters XML 1.0 allows
// (encoding/xml writes U+FFFD for the others).
func xmlSafe(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
		for _, r := range s {
			ok := r == 0x09 || r == 0x0a || r == 0x0d || r >= 0x20 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff
			if !ok {
				return false
			}
		}
	}
	return true
}

const otherMeta = `<kvmforge:domain xmlns:kvmforge="https://github.com/kvmforge/terraform-provider-libvirt/domain/1"><kvmforge:disk target="vda" path="/x"/></kvmforge:domain><other:x xmlns:other="urn:x">t</other:x>`

// FuzzCloneMeta: whatever a clone's record holds, the element libvirt_clone writes into
// <metadata> reads back the same (ParseCloneMeta, which import and delete rely on), next
// to other elements, and dropElement removes exactly it.
func FuzzCloneMeta(f *testing.F) {
	f.Add("web", "2b6f0cc9-4a3f-4b43-9d3c-1a2b3c4d5e6f", CloneLinked, "default", "running", "vda", "/pool/web2-vda.qcow2", "/pool/web-vda.qcow2", false)
	f.Add(`a"b<c>&d`, "", CloneFull, "p q", "shutoff", "sda", "k\te\ny\r", "", true)
	f.Fuzz(func(t *testing.T, source, uuid, mode, pool, running, target, key, backing string, noDisk bool) {
		if !xmlSafe(source, uuid, mode, pool, running, target, key, backing) {
			return
		}
		in := CloneMeta{SourceID: source, SourceUUID: uuid, Mode: mode, Pool: pool, Running: running}
		if !noDisk {
			in.Disks = []CloneMetaDisk{{Target: target, Key: key, Pool: pool, Name: target + ".qcow2", Path: key, Backing: backing}}
		}
		el := marshalCloneMeta(in)
		got, ok := ParseCloneMeta(&libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: otherMeta + el}})
		if !ok {
			t.Fatalf("record not found in %s", el)
		}
		got.XMLName = in.XMLName
		if !reflect.DeepEqual(*got, in) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v", el, *got, in)
		}
		rest, err := dropElement(otherMeta+el, CloneMetadataNS, "clone")
		if err != nil || rest != otherMeta {
			t.Fatalf("dropElement = %q, %v; want %q", rest, err, otherMeta)
		}
	})
}

// FuzzParseCloneMeta: any <metadata> content (libvirt hands back what anyone wrote)
// reads without a panic; what dropElement leaves has no record; a record found writes
// back to one that reads the same.
func FuzzParseCloneMeta(f *testing.F) {
	f.Add(otherMeta + marshalCloneMeta(CloneMeta{SourceID: "web", Mode: CloneLinked, Disks: []CloneMetaDisk{{Target: "vda"}}}))
	f.Add(`<kvmforgeclone:clone xmlns:kvmforgeclone="` + CloneMetadataNS + `" source="x"><kvmforgeclone:disk/></kvmforgeclone:clone>`)
	f.Add(`<a><kvmforgeclone:clone xmlns:kvmforgeclone="` + CloneMetadataNS + `"/></a>`)
	f.Add(`<x:clone xmlns:x="` + CloneMetadataNS + `" source="&amp;&#x9;"`)
	f.Fuzz(func(t *testing.T, inner string) {
		d := &libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: inner}}
		m, ok := ParseCloneMeta(d)
		if rest, err := dropElement(inner, CloneMetadataNS, "clone"); err == nil {
			if _, again := ParseCloneMeta(&libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: rest}}); again {
				t.Fatalf("dropElement(%q) = %q still holds a record", inner, rest)
			}
		}
		if !ok {
			return
		}
		el := marshalCloneMeta(*m)
		back, ok := ParseCloneMeta(&libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: el}})
		if !ok {
			t.Fatalf("the record of %q, written back as %s, is not found", inner, el)
		}
		back.XMLName = m.XMLName
		if len(back.Disks) == 0 && len(m.Disks) == 0 {
			back.Disks = m.Disks
		}
		if !reflect.DeepEqual(*back, *m) {
			t.Fatalf("record of %q written back as %s reads %+v, want %+v", inner, el, *back, *m)
		}
	})
}
