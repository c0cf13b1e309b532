package libvirt

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

const quiesceDomainXML = `<domain type='kvm'><name>web</name><uuid>9b1f6a9e-4a4c-4d3e-9a51-7c1d2b3e4f50</uuid>
<devices><disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='/p/web.qcow2'/><target dev='vda' bus='virtio'/></disk>
<disk type='file' device='cdrom'><source file='/p/seed.iso'/><target dev='sda' bus='sata'/><readonly/></disk></devices></domain>`

// The domain is on an overlay when one of its disks' sources is one.
func TestOnOverlays(t *testing.T) {
	overlays := []string{"/p/web.qcow2.tfsnap-s1"}
	if on, err := onOverlays(quiesceDomainXML, overlays); err != nil || on {
		t.Errorf("on its base image: onOverlays = %v, %v", on, err)
	}
	moved := strings.Replace(quiesceDomainXML, "/p/web.qcow2'", "/p/web.qcow2.tfsnap-s1'", 1)
	if on, err := onOverlays(moved, overlays); err != nil || !on {
		t.Errorf("on the overlay: onOverlays = %v, %v", on, err)
	}
	if _, err := onOverlays("<domain", overlays); err == nil {
		t.Error("bad XML: no error")
	}
}

// The snapshot defined again is the one sent, as libvirt keeps a disk-only snapshot of a
// running domain: state disk-snapshot, the domain as it was before.
func TestRedefineXML(t *testing.T) {
	doc, overlays, err := externalSnapshotXML(SnapshotSpec{Name: "s1", Description: "nightly", Quiesce: true}, quiesceDomainXML)
	if err != nil {
		t.Fatal(err)
	}
	out, err := redefineXML(quiescedCreate{name: "s1", doc: doc, before: quiesceDomainXML, overlays: overlays})
	if err != nil {
		t.Fatal(err)
	}
	var x libvirtxml.DomainSnapshot
	if err := x.Unmarshal(out); err != nil {
		t.Fatal(err)
	}
	if x.Name != "s1" || x.Description != "nightly" || x.State != "disk-snapshot" || x.CreationTime == "" || x.Domain == nil || x.Domain.UUID != "9b1f6a9e-4a4c-4d3e-9a51-7c1d2b3e4f50" {
		t.Fatalf("redefined snapshot %+v", x)
	}
	if got := snapshotOverlays(&x); len(got) != 1 || got[0] != "/p/web.qcow2.tfsnap-s1" {
		t.Errorf("overlays %v", got)
	}
	if x.Domain.Devices.Disks[0].Source.File.File != "/p/web.qcow2" {
		t.Errorf("the domain before is on %s, want its base image", x.Domain.Devices.Disks[0].Source.File.File)
	}
}
