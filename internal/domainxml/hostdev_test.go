package domainxml

import (
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// hostdevSpec is what the configuration behind testdata/hostdevs_libvirt.xml asks for,
// written the ways users write it (upper-case hex, no PCI domain, zero-padded USB bus).
func hostdevSpec() Spec {
	return Spec{
		Name: "hd-1", Type: "qemu", VCPU: 1, MemoryKiB: 256 * KiBPerMiB,
		Hostdevs: []Hostdev{
			{PCI: "7F:1F.7", Managed: true, BootOrder: 1, ROM: &HostdevROM{Bar: "off", File: "/tmp/x.rom"}},
			{USBVendor: "10DE", USBProduct: "0x1234", Managed: true},
			{USBAddress: "001:005"},
			{MDev: "C2177883-F1BB-47F0-914D-32A22E3A8804", Managed: true},
			{SCSI: &HostdevSCSI{Adapter: "scsi_host0"}, Managed: true},
		},
	}
}

func libvirtHostdevs(t *testing.T) *libvirtxml.Domain {
	return domainFixture(t, "hostdevs_libvirt.xml")
}

func TestHostdev_build(t *testing.T) {
	_, text := build(t, nil, hostdevSpec())
	for _, want := range []string{
		`<hostdev mode="subsystem" type="pci" managed="yes">`,
		`<address domain="0x0000" bus="0x7f" slot="0x1f" function="0x7"></address>`,
		`<boot order="1"></boot>`, `<rom bar="off" file="/tmp/x.rom"></rom>`,
		`<vendor id="0x10de"></vendor>`, `<product id="0x1234"></product>`,
		`<hostdev mode="subsystem" type="usb" managed="no">`, `<address bus="1" device="5"></address>`,
		`<hostdev mode="subsystem" type="mdev" model="vfio-pci" managed="yes">`,
		`<address uuid="c2177883-f1bb-47f0-914d-32a22e3a8804"></address>`,
		`<adapter name="scsi_host0"></adapter>`, `<address bus="0" target="0" unit="0"></address>`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, `<boot dev=`) {
		t.Errorf("a hostdev boot order excludes <os><boot dev>:\n%s", text)
	}
}

// What libvirt fills in (guest addresses, driver vfio, alias, the bus/device of a USB
// device found by ids, mdev display, lower-case hex) is no change.
func TestHostdev_parseLibvirtFilled(t *testing.T) {
	p, err := FromDomain(libvirtHostdevs(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []Hostdev{
		{PCI: "0000:7f:1f.7", Managed: true, BootOrder: 1, ROM: &HostdevROM{Bar: "off", File: "/tmp/x.rom"}},
		{USBVendor: "0x10de", USBProduct: "0x1234", Managed: true},
		{USBAddress: "1:5"},
		{MDev: "c2177883-f1bb-47f0-914d-32a22e3a8804", MDevModel: "vfio-pci", Managed: true},
		{SCSI: &HostdevSCSI{Adapter: "scsi_host0"}, Managed: true},
	}
	if !reflect.DeepEqual(p.Spec.Hostdevs, want) {
		t.Fatalf("parsed %+v\nwant   %+v", p.Spec.Hostdevs, want)
	}
	if !hostdevFamily.same(p.Spec, hostdevSpec()) {
		t.Error("libvirt's definition differs from the spec that made it")
	}
}

// Rebuilt onto libvirt's definition, every hostdev keeps its guest address and driver;
// the capabilities-mode hostdev the family does not manage stays.
func TestHostdev_mergeKeepsAddresses(t *testing.T) {
	base := libvirtHostdevs(t)
	d, _ := build(t, base, hostdevSpec())
	hs := d.Devices.Hostdevs
	if len(hs) != 6 {
		t.Fatalf("%d hostdevs, want 5 managed + 1 kept", len(hs))
	}
	for i := 0; i < 5; i++ {
		if !reflect.DeepEqual(hs[i].Address, base.Devices.Hostdevs[i].Address) {
			t.Errorf("hostdev %d: address %+v, want %+v", i, hs[i].Address, base.Devices.Hostdevs[i].Address)
		}
		if hs[i].Alias != nil {
			t.Errorf("hostdev %d keeps alias", i)
		}
	}
	if hs[0].SubsysPCI.Driver == nil || hs[0].SubsysPCI.Driver.Name != "vfio" {
		t.Error("pci driver not kept")
	}
	if hs[5].CapsMisc == nil {
		t.Error("unmanaged hostdev dropped")
	}
	// A new source is a new device: no address carried over.
	s := hostdevSpec()
	s.Hostdevs[0].PCI = "0000:01:00.0"
	d, _ = build(t, base, s)
	if d.Devices.Hostdevs[0].Address != nil {
		t.Error("a different PCI device kept the old one's guest address")
	}
	// Removing every hostdev keeps only the unmanaged one.
	s.Hostdevs = nil
	d, _ = build(t, base, s)
	if len(d.Devices.Hostdevs) != 1 {
		t.Errorf("%d hostdevs left", len(d.Devices.Hostdevs))
	}
}

func TestHostdev_same(t *testing.T) {
	base := hostdevSpec()
	changes := map[string]func(s *Spec){
		"pci":         func(s *Spec) { s.Hostdevs[0].PCI = "0000:7f:1f.6" },
		"managed":     func(s *Spec) { s.Hostdevs[1].Managed = false },
		"boot order":  func(s *Spec) { s.Hostdevs[0].BootOrder = 2 },
		"rom":         func(s *Spec) { s.Hostdevs[0].ROM = nil },
		"mdev model":  func(s *Spec) { s.Hostdevs[3].MDevModel = "vfio-ccw" },
		"scsi unit":   func(s *Spec) { s.Hostdevs[4].SCSI = &HostdevSCSI{Adapter: "scsi_host0", Unit: 1} },
		"usb address": func(s *Spec) { s.Hostdevs[2].USBAddress = "1:6" },
		"removed":     func(s *Spec) { s.Hostdevs = s.Hostdevs[:4] },
	}
	for name, change := range changes {
		s := hostdevSpec()
		s.Hostdevs = append([]Hostdev(nil), s.Hostdevs...)
		change(&s)
		if hostdevFamily.same(base, s) {
			t.Errorf("%s: no change seen", name)
		}
		// The last hostdev replaced or removed is a hot-plug (hotplug_devices.go).
		want := ChangeRestart
		if name == "scsi unit" || name == "removed" {
			want = ChangeLive
		}
		if got := Classify(base, s, true, true); got != want {
			t.Errorf("%s on a running domain: %s, want %s", name, got, want)
		}
	}
	same := hostdevSpec()
	same.Hostdevs[0].PCI = "0000:7f:1f.7"
	same.Hostdevs[3].MDevModel = "vfio-pci"
	if !hostdevFamily.same(base, same) {
		t.Error("written forms of the same sources differ")
	}
}

func TestHostdev_validate(t *testing.T) {
	cases := map[string]struct {
		h    []Hostdev
		want string
	}{
		"no source":     {[]Hostdev{{Managed: true}}, "exactly one of pci, usb, usb_address, mdev and scsi"},
		"two sources":   {[]Hostdev{{PCI: "0000:03:00.0", USBAddress: "1:2"}}, "exactly one of"},
		"bad pci":       {[]Hostdev{{PCI: "03:00"}}, `pci = "03:00" is not a PCI address`},
		"bad usb id":    {[]Hostdev{{USBVendor: "nvidia", USBProduct: "0x1234"}}, "4 hex digits"},
		"usb half":      {[]Hostdev{{USBVendor: "0x10de"}}, "needs a vendor and a product"},
		"bad usb addr":  {[]Hostdev{{USBAddress: "1-5"}}, "is not bus:device"},
		"bad mdev":      {[]Hostdev{{MDev: "nope"}}, "is not a uuid"},
		"model no mdev": {[]Hostdev{{PCI: "0000:03:00.0", MDevModel: "vfio-pci"}}, "mdev_model is only for an mdev"},
		"bad model":     {[]Hostdev{{MDev: "c2177883-f1bb-47f0-914d-32a22e3a8804", MDevModel: "gvt"}}, "is not one of"},
		"rom not pci":   {[]Hostdev{{USBAddress: "1:5", ROM: &HostdevROM{Bar: "off"}}}, "rom is only for a pci"},
		"scsi adapter":  {[]Hostdev{{SCSI: &HostdevSCSI{Adapter: "host0"}}}, "scsi_host0"},
		"twice":         {[]Hostdev{{PCI: "03:00.0"}, {PCI: "0000:03:00.0"}}, "hostdev 0 and hostdev 1 both pass through pci 0000:03:00.0"},
		"boot shared":   {[]Hostdev{{PCI: "03:00.0", BootOrder: 1}}, "disk vda and hostdev 0 (pci 0000:03:00.0) both have boot_order 1"},
	}
	for name, c := range cases {
		s := Spec{Name: "x", Disks: []Disk{{Path: "/p/a.qcow2", Target: "vda", BootOrder: 1}}, Hostdevs: c.h}
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestHostdev_norm(t *testing.T) {
	if got := NormPCIAddress("3B:00.1"); got != "0000:3b:00.1" {
		t.Error(got)
	}
	if got := NormUSBID("0X10DE"); got != "0x10de" {
		t.Error(got)
	}
	if got := NormUSBAddress("001:010"); got != "1:10" {
		t.Error(got)
	}
}
