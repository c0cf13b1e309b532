package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestMetadataOldFormReplaced: a record written by an older version (prefixed form) reads
// the same, and writing replaces it rather than adding a second one; other applications'
// elements stay byte for byte.
func TestMetadataOldFormReplaced(t *testing.T) {
	other := `<other:x xmlns:other="urn:x" v="1"/>`
	d := &libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: other +
		`<kvmforge:domain xmlns:kvmforge="` + MetadataNS + `"><kvmforge:disk target="vda" volume="old&amp;&quot;one" path="/p"/></kvmforge:domain>`}}
	var md record
	if ok, err := GetMetadata(d, MetadataNS, "domain", &md); !ok || err != nil || len(md.Disks) != 1 || md.Disks[0].Volume != `old&"one` {
		t.Fatalf("old form read as %+v, %v, %v", md, ok, err)
	}
	md.Disks[0].Volume = `new<&>"'`
	if err := SetMetadata(d, MetadataNS, "domain", md); err != nil {
		t.Fatal(err)
	}
	x := d.Metadata.XML
	if strings.Count(x, MetadataNS) != 1 || !strings.HasPrefix(x, other) {
		t.Fatalf("metadata after write:\n%s", x)
	}
	var back record
	if ok, err := GetMetadata(d, MetadataNS, "domain", &back); !ok || err != nil || back.Disks[0].Volume != `new<&>"'` {
		t.Fatalf("read back %+v, %v, %v from\n%s", back, ok, err, x)
	}
	if err := SetMetadata(d, MetadataNS, "domain", nil); err != nil || d.Metadata.XML != other {
		t.Fatalf("remove: %v, left %q", err, d.Metadata.XML)
	}
	if err := SetMetadata(&libvirtxml.Domain{}, MetadataNS, "domain", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := GetMetadata(&libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: "<a><b></a>"}}, MetadataNS, "domain", &back); err == nil {
		t.Error("broken metadata read without an error")
	}
}

// FuzzMetadata: whatever the metadata holds, reading and writing our record never panics,
// and what was written reads back.
func FuzzMetadata(f *testing.F) {
	f.Add(`<other:x xmlns:other="urn:x"/>`, "vda", "p/v")
	f.Add(`<kvmforge:domain xmlns:kvmforge="`+MetadataNS+`"><kvmforge:disk target="" path=""/></kvmforge:domain>`, "", "")
	f.Add(`<a><b></a>`, "x", "\x00")
	f.Fuzz(func(t *testing.T, inner, target, volume string) {
		d := &libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: inner}}
		var md record
		_, _ = GetMetadata(d, MetadataNS, "domain", &md)
		want := record{Disks: []recordDisk{{Target: target, Volume: volume, Path: "/p"}}}
		if err := SetMetadata(d, MetadataNS, "domain", want); err != nil {
			return // broken foreign metadata, or a value XML cannot hold: refused, fine
		}
		var got record
		ok, err := GetMetadata(d, MetadataNS, "domain", &got)
		if !ok || err != nil || len(got.Disks) != 1 {
			t.Fatalf("written record not read back (%v, %v) from %q", ok, err, d.Metadata.XML)
		}
		if xmlSafe(target, volume) && (got.Disks[0].Target != target || got.Disks[0].Volume != volume) {
			t.Fatalf("round trip %q %q -> %+v", target, volume, got.Disks[0])
		}
	})
}
