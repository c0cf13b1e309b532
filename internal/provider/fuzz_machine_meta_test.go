package provider

import (
	"testing"
	"unicode/utf8"
)

// xmlSafe reports whether every s survives XML text: valid UTF-8 of characters XML 1.0
// allows (encoding/xml writes U+FFFD for the others).
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

const otherMachineMeta = `<kvmforge:domain xmlns:kvmforge="https://github.com/kvmforge/terraform-provider-libvirt/domain/1"><kvmforge:disk target="vda"/></kvmforge:domain>`

// FuzzMachineMeta: whatever a cluster machine's inputs are, the element written into the
// domain's <metadata> reads back the same (import rebuilds the resource from it).
func FuzzMachineMeta(f *testing.F) {
	f.Add("default", "web-0", "default", "images", "vms", "debian-12.qcow2")
	f.Add(`a"b<c>&d`, "w-0", "net 1", "", "vms", "deb'12\t\n\r.qcow2")
	f.Fuzz(func(t *testing.T, namespace, name, network, basePool, domainPool, image string) {
		if !xmlSafe(namespace, name, network, basePool, domainPool, image) {
			return
		}
		in := machineMeta{Namespace: namespace, Name: name, Network: network, BasePool: basePool, DomainPool: domainPool, Image: image}
		el := in.element()
		out, ok := parseMachineMeta(otherMachineMeta + el)
		if !ok {
			t.Fatalf("element not found in %s", el)
		}
		out.XMLName = in.XMLName
		if *out != in {
			t.Fatalf("round trip of %s: %+v, want %+v", el, *out, in)
		}
	})
}

// FuzzParseMachineMeta: any <metadata> content reads without a panic, and an element it
// finds writes back to one that reads the same.
func FuzzParseMachineMeta(f *testing.F) {
	f.Add(otherMachineMeta + machineMeta{Namespace: "default", Name: "web-0", Image: "i.qcow2"}.element())
	f.Add(`<a><m:machine xmlns:m="` + machineMetaNS + `" name="x"><m:machine/></m:machine></a>`)
	f.Add(`<m:machine xmlns:m="` + machineMetaNS + `" name="&amp;&#x9;"`)
	f.Fuzz(func(t *testing.T, inner string) {
		m, ok := parseMachineMeta(inner)
		if !ok {
			return
		}
		el := m.element()
		back, ok := parseMachineMeta(el)
		if !ok {
			t.Fatalf("the element of %q, written back as %s, is not found", inner, el)
		}
		back.XMLName = m.XMLName
		if *back != *m {
			t.Fatalf("element of %q written back as %s reads %+v, want %+v", inner, el, *back, *m)
		}
	})
}
