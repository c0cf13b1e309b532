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

// The empty cdrom tray (hdd) a virsh user wrote is not a disk the Spec has, and it
// survives a rewrite; a spec disk on its target takes its place.
func TestBuildDisks_keepsEmptyTray(t *testing.T) {
	d, p := readFixture(t, "testdata/every_family_defaulted_libvirt.xml")
	for _, dk := range p.Spec.Disks {
		if dk.Target == "hdd" {
			t.Fatalf("an empty tray read as a disk: %+v", dk)
		}
	}
	trays := func(x *libvirtxml.Domain) (n int) {
		for _, dk := range x.Devices.Disks {
			if dk.Target.Dev == "hdd" && dk.Device == DeviceCDROM && diskSourcePath(&dk) == "" {
				n++
			}
		}
		return n
	}
	built, _ := build(t, d, p.Spec)
	if trays(built) != 1 || len(built.Devices.Disks) != len(d.Devices.Disks) {
		t.Fatalf("rewrite: %d empty trays, %d disks of %d", trays(built), len(built.Devices.Disks), len(d.Devices.Disks))
	}
	s := p.Spec
	s.Disks = append(s.Disks, Disk{Path: "/srv/x.iso", Device: DeviceCDROM, Bus: "ide", Target: "hdd", Format: "raw"})
	built, _ = build(t, d, s)
	if trays(built) != 0 || len(built.Devices.Disks) != len(d.Devices.Disks) {
		t.Fatalf("a medium in the tray: %d empty trays left, %d disks of %d", trays(built), len(built.Devices.Disks), len(d.Devices.Disks))
	}
}
