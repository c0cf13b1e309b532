package domainxml

import (
	"reflect"
	"strings"
	"testing"
)

var (
	rawLUKS   = &DiskEncryption{Format: "luks", Secret: "ac979fbe-fa18-40bd-b095-2d3b746edad6"}
	qcow2LUKS = &DiskEncryption{Format: "luks", Secret: "0b8e7f2c-1d3a-4b5c-9e6f-7a8b9c0d1e2f"}
)

// encrypted is a stopped domain on two encrypted volumes (as resolve fills them).
func encrypted() Spec {
	s := Spec{Name: "luks", Type: "qemu", VCPU: 1, MaxVCPU: 1, MemoryKiB: 64 * KiBPerMiB, MaxMemoryKiB: 64 * KiBPerMiB, Graphics: Graphics{Type: GraphicsNone}}
	s.Disks = []Disk{
		{Path: "/pool/luks.raw", Device: DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw", Encryption: rawLUKS},
		{Path: "/pool/luks.qcow2", Device: DeviceDisk, Bus: "virtio", Target: "vdc", Format: "qcow2", Encryption: qcow2LUKS},
	}
	return s
}

// TestDiskEncryption_roundTrip: Build writes the encryption inside <source>, and it
// reads back as written.
func TestDiskEncryption_roundTrip(t *testing.T) {
	_, text := build(t, nil, encrypted())
	want := `<source file="/pool/luks.raw"><encryption format="luks"><secret type="passphrase" uuid="ac979fbe-fa18-40bd-b095-2d3b746edad6"></secret></encryption></source>`
	if !strings.Contains(strings.Join(strings.Fields(text), ""), strings.Join(strings.Fields(want), "")) {
		t.Errorf("no encryption in the source:\n%s", text)
	}
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Spec.Disks, encrypted().Disks) {
		t.Errorf("round trip:\n got %+v\nwant %+v", p.Spec.Disks, encrypted().Disks)
	}
}

// TestDiskEncryption_libvirtFixture: libvirt's definition (engine='qemu' filled in; the
// older place beside <source> for a definition written that way) reads as the spec, and
// a rebuild from the spec is the same domain with the encryption in <source>.
func TestDiskEncryption_libvirtFixture(t *testing.T) {
	d := domainFixture(t, "disk_encryption_libvirt.xml")
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Spec.Disks
	if len(got) != 2 || !reflect.DeepEqual(got[0].Encryption, rawLUKS) || !reflect.DeepEqual(got[1].Encryption, qcow2LUKS) {
		t.Fatalf("parsed disks %+v", got)
	}
	if !sameDisks(p.Spec, encrypted()) {
		t.Error("libvirt's definition is not the same as the spec")
	}
	out, _ := build(t, d, encrypted())
	for _, x := range out.Devices.Disks {
		if x.Encryption != nil || x.Source.Encryption == nil || x.Source.Encryption.Format != "luks" {
			t.Errorf("disk %s: encryption %+v beside the source, %+v in it", x.Target.Dev, x.Encryption, x.Source.Encryption)
		}
	}
}

// TestDiskEncryption_rebuildKeeps: a spec that carries no encryption (its volume's
// secret is unknown, or the definition was written by hand) keeps the definition's for
// the same file, and drops it for another file; a plan without encryption is the same
// disk, a different secret is not.
func TestDiskEncryption_rebuildKeeps(t *testing.T) {
	d := domainFixture(t, "disk_encryption_libvirt.xml")
	s := encrypted()
	s.Disks[0].Encryption, s.Disks[1].Encryption = nil, nil
	s.Disks[1].Path = "/pool/other.qcow2"
	out, _ := build(t, d, s)
	if e := out.Devices.Disks[0].Source.Encryption; e == nil || e.Secrets[0].UUID != rawLUKS.Secret {
		t.Errorf("vdb lost its encryption: %+v", e)
	}
	if x := out.Devices.Disks[1]; x.Encryption != nil || x.Source.Encryption != nil {
		t.Errorf("vdc on another file kept the old file's encryption: %+v %+v", x.Encryption, x.Source.Encryption)
	}
	plain := encrypted()
	plain.Disks[0].Encryption = nil
	if !sameDisks(plain, encrypted()) {
		t.Error("a disk whose encryption is not known yet differs")
	}
	other := encrypted()
	other.Disks[0].Encryption = &DiskEncryption{Format: "luks", Secret: qcow2LUKS.Secret}
	if sameDisks(other, encrypted()) {
		t.Error("a disk with another secret is the same")
	}
}
