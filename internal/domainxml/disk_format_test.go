package domainxml

import (
	"testing"

	"libvirt.org/go/libvirtxml"
)

// Every disk the provider writes names its format: libvirt and QEMU never probe a disk's
// bytes (a guest may have written a qcow2 header naming a host file on a raw disk). A
// disk whose format is unknown is raw, the cloud-init seed is raw, and a definition's
// old driver type never survives a disk rewritten as raw.
func TestBuild_diskFormatsExplicit(t *testing.T) {
	base := &libvirtxml.Domain{Devices: &libvirtxml.DomainDeviceList{Disks: []libvirtxml.DomainDisk{{
		Device: DeviceDisk, Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2"},
		Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: "/pool/guest.raw"}},
		Target: &libvirtxml.DomainDiskTarget{Dev: "vdb", Bus: "virtio"},
	}}}}
	d, _ := build(t, base, Spec{Name: "a", Type: "kvm", VCPU: 1, MemoryKiB: 256 * KiBPerMiB,
		Disks: []Disk{
			{Path: "/pool/a.qcow2", Format: "qcow2", Target: "vda", Bus: "virtio"},
			{Path: "/pool/guest.raw", Format: "raw", Target: "vdb", Bus: "virtio"},
			{Path: "/pool/unknown.img", Target: "vdc", Bus: "virtio"},
		},
		CloudInit: &CloudInit{ID: "default/seed.iso", Path: "/pool/seed.iso"},
	})
	want := map[string]string{"vda": "qcow2", "vdb": "raw", "vdc": "raw"}
	seen := 0
	for _, x := range d.Devices.Disks {
		if x.Driver == nil || x.Driver.Type == "" {
			t.Fatalf("disk %s has no driver type: libvirt would be left to guess", x.Target.Dev)
		}
		if x.Device == DeviceCDROM {
			if x.Driver.Type != "raw" {
				t.Errorf("cloud-init seed %s: driver type %q, want raw", x.Target.Dev, x.Driver.Type)
			}
			seen++
			continue
		}
		if w := want[x.Target.Dev]; x.Driver.Type != w {
			t.Errorf("disk %s: driver type %q, want %q", x.Target.Dev, x.Driver.Type, w)
		}
		seen++
	}
	if seen != 4 {
		t.Fatalf("%d disks written, want 4", seen)
	}
}
