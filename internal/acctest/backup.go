package acctest

import (
	"context"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// Fixtures of the incremental export tests: the tiny guest with a data disk, and the
// domain's checkpoints as libvirt lists them.

// DataVolume makes an empty qcow2 volume of size bytes and qcow2 compat level compat
// ("1.1": version 3, which checkpoints need; "0.10": version 2) in the test pool (removed
// when the test ends) and returns its key (its path).
func DataVolume(t testing.TB, name string, size uint64, compat string) string {
	t.Helper()
	v := libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: size},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "qcow2"}, Compat: compat},
	}
	doc, err := v.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return CreateVolume(t, name, doc, nil)
}

// DefineGuestWithData defines and starts the tiny guest on root (vda) with data, a qcow2
// path, as its second disk vdb; it is removed when the test ends.
func DefineGuestWithData(t testing.TB, name, root, data string) {
	t.Helper()
	doc, err := guestXML(name, root)
	if err != nil {
		t.Fatal(err)
	}
	var d libvirtxml.Domain
	if err := d.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	d.Devices.Disks = append(d.Devices.Disks, libvirtxml.DomainDisk{
		Device: "disk",
		Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2"},
		Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: data}},
		Target: &libvirtxml.DomainDiskTarget{Dev: "vdb", Bus: "virtio"},
	})
	if doc, err = d.Marshal(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = Client(t).Write(ctx, "define domain "+name, func(l *golibvirt.Libvirt) error {
		dom, err := l.DomainDefineXML(doc)
		if err != nil {
			return err
		}
		return l.DomainCreate(dom)
	})
	t.Cleanup(func() { RemoveDomain(t, name) })
	if err != nil {
		t.Fatalf("define domain %s: %v", name, err)
	}
}

// Checkpoints are the names of the checkpoints of domain that start with prefix.
func Checkpoints(t testing.TB, domain, prefix string) ([]string, error) {
	return Client(t).Checkpoints(Ctx(t), domain, prefix)
}

// DeleteCheckpoint removes a checkpoint of domain behind the provider's back (what
// `virsh checkpoint-delete` does).
func DeleteCheckpoint(t testing.TB, domain, name string) {
	t.Helper()
	if _, err := Client(t).DeleteCheckpoints(Ctx(t), domain, []string{name}); err != nil {
		t.Fatalf("delete checkpoint %s of %s: %v", name, domain, err)
	}
}
