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

func withMeta(inner string) *libvirtxml.Domain {
	return &libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: inner}}
}

// FuzzCloneMeta: whatever a clone's record holds, the element libvirt_clone writes into
// <metadata> reads back the same (ParseCloneMeta, which import and delete rely on), next
// to other elements, which stay as they were; removing it leaves exactly them.
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
		d := withMeta(otherMeta)
		if err := SetMetadata(d, CloneMetadataNS, "clone", in); err != nil {
			t.Fatal(err)
		}
		got, ok := ParseCloneMeta(d)
		if !ok {
			t.Fatalf("record not found in %s", d.Metadata.XML)
		}
		if !reflect.DeepEqual(*got, in) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v", d.Metadata.XML, *got, in)
		}
		if err := SetMetadata(d, CloneMetadataNS, "clone", nil); err != nil || d.Metadata.XML != otherMeta {
			t.Fatalf("removing the record left %q, %v; want %q", d.Metadata.XML, err, otherMeta)
		}
	})
}

// FuzzParseCloneMeta: any <metadata> content (libvirt hands back what anyone wrote)
// reads without a panic; once removed, no record is left; a record found writes back to
// one that reads the same.
func FuzzParseCloneMeta(f *testing.F) {
	f.Add(otherMeta + `<kvmforgeclone:clone xmlns:kvmforgeclone="` + CloneMetadataNS + `" source="web" mode="linked"><kvmforgeclone:disk target="vda"/></kvmforgeclone:clone>`)
	f.Add(`<clone xmlns="` + CloneMetadataNS + `" source="x"><disk/></clone>`)
	f.Add(`<a><kvmforgeclone:clone xmlns:kvmforgeclone="` + CloneMetadataNS + `"/></a>`)
	f.Add(`<x:clone xmlns:x="` + CloneMetadataNS + `" source="&amp;&#x9;"`)
	f.Fuzz(func(t *testing.T, inner string) {
		m, ok := ParseCloneMeta(withMeta(inner))
		d := withMeta(inner)
		if err := SetMetadata(d, CloneMetadataNS, "clone", nil); err == nil {
			if _, again := ParseCloneMeta(d); again {
				t.Fatalf("removing the record from %q left %q, which still holds one", inner, d.Metadata.XML)
			}
		}
		if !ok {
			return
		}
		back := withMeta("")
		if err := SetMetadata(back, CloneMetadataNS, "clone", *m); err != nil {
			t.Fatal(err)
		}
		again, ok := ParseCloneMeta(back)
		if !ok {
			t.Fatalf("the record of %q, written back as %s, is not found", inner, back.Metadata.XML)
		}
		if len(again.Disks) == 0 && len(m.Disks) == 0 {
			again.Disks = m.Disks
		}
		if !reflect.DeepEqual(*again, *m) {
			t.Fatalf("record of %q written back as %s reads %+v, want %+v", inner, back.Metadata.XML, *again, *m)
		}
	})
}

// FuzzMachineMeta: whatever a cluster machine's inputs are, the record written into the
// domain's <metadata> reads back the same (import rebuilds the resource from it).
func FuzzMachineMeta(f *testing.F) {
	f.Add("default", "web-0", "default", "images", "vms", "debian-12.qcow2")
	f.Add(`a"b<c>&d`, "w-0", "net 1", "", "vms", "deb'12\t\n\r.qcow2")
	f.Fuzz(func(t *testing.T, namespace, name, network, basePool, domainPool, image string) {
		if !xmlSafe(namespace, name, network, basePool, domainPool, image) {
			return
		}
		in := MachineMeta{Namespace: namespace, Name: name, Network: network, BasePool: basePool, DomainPool: domainPool, Image: image}
		d := withMeta(otherMeta)
		if err := SetMachineMeta(d, in); err != nil {
			t.Fatal(err)
		}
		out, ok := ParseMachineMeta(d)
		if !ok || *out != in {
			t.Fatalf("round trip of %s: %+v (%v), want %+v", d.Metadata.XML, out, ok, in)
		}
	})
}

// FuzzParseMachineMeta: any <metadata> content reads without a panic, and a record it
// finds writes back to one that reads the same.
func FuzzParseMachineMeta(f *testing.F) {
	f.Add(otherMeta + `<kvmforgecm:machine xmlns:kvmforgecm="` + MachineMetadataNS + `" namespace="default" name="web-0" image="i.qcow2"/>`)
	f.Add(`<a><m:machine xmlns:m="` + MachineMetadataNS + `" name="x"><m:machine/></m:machine></a>`)
	f.Add(`<m:machine xmlns:m="` + MachineMetadataNS + `" name="&amp;&#x9;"`)
	f.Fuzz(func(t *testing.T, inner string) {
		m, ok := ParseMachineMeta(withMeta(inner))
		if !ok {
			return
		}
		d := withMeta("")
		if err := SetMachineMeta(d, *m); err != nil {
			t.Fatal(err)
		}
		back, ok := ParseMachineMeta(d)
		if !ok || *back != *m {
			t.Fatalf("record of %q written back as %s reads %+v (%v), want %+v", inner, d.Metadata.XML, back, ok, *m)
		}
	})
}
