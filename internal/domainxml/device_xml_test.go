package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestDeviceXML: fragments are appended, read back as written while the definition has a
// device with all they say (libvirt's fills added), replaced without touching devices made
// elsewhere, and refused when they are not one device element or belong to a family.
func TestDeviceXML(t *testing.T) {
	shmem := `<shmem name="ivshmem0"><model type="ivshmem-plain"/><size unit="M">4</size></shmem>`
	base := func() Spec {
		return Spec{Name: "d", VCPU: 1, MemoryKiB: 64 * KiBPerMiB, Type: "qemu", Graphics: Graphics{Type: GraphicsNone}}
	}
	s := base()
	s.DeviceXML = []string{shmem, `<iommu model="intel"/>`}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Devices.Shmems) != 1 || d.Devices.IOMMU == nil {
		t.Fatalf("built devices: %+v", d.Devices)
	}
	// What libvirt returns: an address, an alias and the size in its own unit for shmem
	// (a rewritten value: the fragment then no longer matches) — here kept as written.
	text, _ := d.Marshal()
	text = strings.Replace(text, `<model type="ivshmem-plain"></model>`,
		`<model type="ivshmem-plain"></model><alias name="shmem0"></alias><address type="pci" domain="0x0000" bus="0x00" slot="0x05" function="0x0"></address>`, 1)
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Spec.DeviceXML; len(got) != 2 || got[0] != shmem {
		t.Fatalf("read back %q", got)
	}

	// Replacing the fragments: the old shmem goes, a shmem made elsewhere stays.
	var lv libvirtxml.Domain
	if err := lv.Unmarshal(text); err != nil {
		t.Fatal(err)
	}
	lv.Devices.Shmems = append(lv.Devices.Shmems, libvirtxml.DomainShmem{Name: "theirs"})
	next := base()
	next.DeviceXML = []string{`<iommu model="intel"/>`}
	d2, err := Build(&lv, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(d2.Devices.Shmems) != 1 || d2.Devices.Shmems[0].Name != "theirs" || d2.Devices.IOMMU == nil {
		t.Errorf("after replacing: shmems %+v iommu %v", d2.Devices.Shmems, d2.Devices.IOMMU)
	}
	if PlanChange(s, next, true, true, nil).Change != ChangeRestart {
		t.Error("a device_xml change should restart a running domain")
	}

	for frag, want := range map[string]string{
		`<shmem name="a"/><shmem name="b"/>`: "more than one element",
		`<shmem name="a">`:                   "not one XML element",
		`<disk type="file"/>`:                "managed by disk",
		`<interface type="network"><source network="default"/><model type="virtio"/></interface>`: "managed by network_interface",
		`<nosuchdevice/>`: "not a device element",
		`just text`:       "not one XML element",
		// The emulator is the emulator attribute's, checked against the host.
		`<emulator>/usr/bin/qemu-system-x86_64</emulator>`: "managed by the emulator attribute",
		// The character devices own serials and consoles (a fragment was read as a block).
		`<serial type="pty"/>`:                                  "managed by devices.serial",
		`<console type="pty"><target type="virtio"/></console>`: "managed by devices.console",
		`<channel type="unix"/>`:                                "managed by devices.channel",
		// Anything but one plain element.
		`<!-- note --><shmem name="a"/>`:                        "a comment",
		`<shmem name="a"><!-- inside --></shmem>`:               "a comment",
		`<?xml version="1.0"?><shmem name="a"/>`:                "processing instruction",
		`<shmem name="a"><?pi x?></shmem>`:                      "processing instruction",
		`<!DOCTYPE shmem [<!ENTITY e "x">]><shmem name="&e;"/>`: "directive",
		`<cpu mode="host-passthrough"/>`:                        "not a device element",
		`<os><type>hvm</type></os>`:                             "not a device element",
		`<devices><shmem name="a"/></devices>`:                  "not a device element",
	} {
		if _, err := ParseDeviceFragment(frag); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", frag, err, want)
		}
	}
	// A NIC on a network that the block cannot say exactly (coalescing, no model: libvirt's
	// default model is not the provider's) is device_xml's; an import escapes it so.
	for _, frag := range []string{
		`<interface type="network"><source network="default"/><model type="virtio"/><coalesce><rx><frames max="7"/></rx></coalesce></interface>`,
		`<interface type="network"><source network="default"/></interface>`,
	} {
		if _, err := ParseDeviceFragment(frag); err != nil {
			t.Errorf("%s: %v", frag, err)
		}
	}
	// A parallel port has no family: it is a device_xml device like any other.
	if _, err := ParseDeviceFragment(`<parallel type="pty"/>`); err != nil {
		t.Errorf("parallel: %v", err)
	}
}
