package libvirt

import (
	"testing"
	"time"
	"unicode/utf8"

	golibvirt "github.com/digitalocean/go-libvirt"
)

var fuzzDomain = golibvirt.Domain{Name: "web-1", UUID: golibvirt.UUID{0x2b, 0x6f, 0x0c, 0xc9}}

// FuzzSnapshotFromXML: whatever libvirt hands back as a snapshot's XML reads without a
// panic, and a snapshot read names the domain it was asked for.
func FuzzSnapshotFromXML(f *testing.F) {
	f.Add(`<domainsnapshot><name>before-upgrade</name><description>x</description><state>running</state><creationTime>1700000000</creationTime><memory snapshot='internal'/></domainsnapshot>`)
	f.Add(`<domainsnapshot><name>s</name><state>shutoff</state><creationTime>-99999999999999</creationTime><memory snapshot='no'/><disks><disk name='vda' snapshot='internal'/></disks></domainsnapshot>`)
	f.Add(`<domainsnapshot><creationTime>9223372036854775807</creationTime></domainsnapshot>`)
	f.Add(`<domainsnapshot><creationTime>1e3</creationTime></domainsnapshot>`)
	f.Fuzz(func(t *testing.T, doc string) {
		s, err := snapshotFromXML(fuzzDomain, doc)
		if err != nil {
			if s != nil {
				t.Fatalf("an error (%v) with a snapshot %+v", err, s)
			}
			return
		}
		if s.DomainName != fuzzDomain.Name || s.DomainUUID != UUIDString(fuzzDomain) {
			t.Fatalf("snapshot of domain %q / %q, want %q / %q", s.DomainName, s.DomainUUID, fuzzDomain.Name, UUIDString(fuzzDomain))
		}
		if !s.CreationTime.IsZero() && s.CreationTime.Location() != time.UTC {
			t.Fatalf("creation time %v is not UTC", s.CreationTime)
		}
	})
}

// FuzzSnapshotXMLRoundTrip: the <domainsnapshot> asked for reads back with the same
// name, description and memory flag (libvirt echoes them).
func FuzzSnapshotXMLRoundTrip(f *testing.F) {
	f.Add("before-upgrade", "taken by terraform", true)
	f.Add(`a"b<c>&d`, "line 1\nline 2\t\r", false)
	f.Fuzz(func(t *testing.T, name, description string, memory bool) {
		for _, s := range []string{name, description} {
			if !xmlText(s) {
				return
			}
		}
		doc, err := SnapshotSpec{Name: name, Description: description, Memory: memory}.SnapshotXML()
		if err != nil {
			t.Fatalf("SnapshotXML: %v", err)
		}
		s, err := snapshotFromXML(fuzzDomain, doc)
		if err != nil {
			t.Fatalf("%s does not read back: %v", doc, err)
		}
		if s.Name != name || s.Description != description || s.Memory != memory {
			t.Fatalf("%s reads back as %q / %q / %v, want %q / %q / %v", doc, s.Name, s.Description, s.Memory, name, description, memory)
		}
	})
}

// xmlText reports whether s survives XML character data: valid UTF-8 of characters XML
// 1.0 allows (encoding/xml writes U+FFFD for the others).
func xmlText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		ok := r == 0x09 || r == 0x0a || r == 0x0d || r >= 0x20 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff
		if !ok {
			return false
		}
	}
	return true
}
