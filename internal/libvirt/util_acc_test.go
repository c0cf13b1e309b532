package libvirt_test

import (
	"os"
	"strconv"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func writeString(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

func itoa(i int) string { return strconv.Itoa(i) }

// diskGuestXML is a domain of type typ that runs from the qcow2 image at path (vda), with
// mib MiB of memory; booted from that disk, with a pty serial console, when boot is set.
func diskGuestXML(t *testing.T, typ, name, path string, mib uint, boot bool) string {
	t.Helper()
	d := libvirtxml.Domain{
		Type: typ, Name: name,
		Memory: &libvirtxml.DomainMemory{Value: mib, Unit: "MiB"},
		VCPU:   &libvirtxml.DomainVCPU{Value: 1},
		OS:     &libvirtxml.DomainOS{Type: &libvirtxml.DomainOSType{Arch: "x86_64", Type: "hvm"}},
		Devices: &libvirtxml.DomainDeviceList{Disks: []libvirtxml.DomainDisk{{
			Device: "disk",
			Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2"},
			Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: path}},
			Target: &libvirtxml.DomainDiskTarget{Dev: "vda", Bus: "virtio"},
		}}},
	}
	if boot {
		d.OS.BootDevices = []libvirtxml.DomainBootDevice{{Dev: "hd"}}
		d.Devices.Serials = []libvirtxml.DomainSerial{{Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}}}
		d.Devices.Consoles = []libvirtxml.DomainConsole{{Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}}}
	}
	doc, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
