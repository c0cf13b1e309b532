package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// hotSpec is a running domain's spec: a virtio root disk, a SATA cdrom with an ISO and
// one NIC with a MAC.
func hotSpec() Spec {
	return Spec{Name: "web-1", Type: "qemu", VCPU: 1, MemoryKiB: 256 * KiBPerMiB, Firmware: FirmwareBIOS, Graphics: Graphics{Type: GraphicsNone},
		Disks: []Disk{
			{Path: "/pool/root.qcow2", Device: DeviceDisk, Bus: "virtio", Target: "vda", Format: "qcow2"},
			{Path: "/iso/a.iso", Device: DeviceCDROM, Bus: "sata", Target: "sda", Format: "raw"},
		},
		Interfaces: []Interface{{Network: "default", MAC: "52:54:00:aa:00:01"}},
	}
}

// op is one expected live operation: its kind, device and what its XML must contain.
type op struct {
	kind   LiveOpKind
	device string
	xml    string
}

// TestPlanChangeHotplug: appended devices attach, removed ones detach (detaches first),
// in-place changes are libvirt's updates; everything else restarts with a reason.
func TestPlanChangeHotplug(t *testing.T) {
	mod := func(f func(*Spec)) Spec { s := hotSpec(); f(&s); return s }
	data := Disk{Path: "/pool/data.raw", Device: DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw"}
	nic2 := Interface{Network: "default"}
	withData := mod(func(s *Spec) { s.Disks = append(s.Disks, data) })
	withNIC2 := mod(func(s *Spec) {
		s.Interfaces = append(s.Interfaces, Interface{Network: "default", MAC: "52:54:00:aa:00:02"})
	})
	cases := []struct {
		name   string
		old    Spec
		next   Spec
		want   Change
		ops    []op
		reason string
	}{
		{"link down", hotSpec(), mod(func(s *Spec) { s.Interfaces[0].LinkState = LinkStateDown }), ChangeLive,
			[]op{{LiveUpdateDevice, "52:54:00:aa:00:01", `<link state="down">`}}, ""},
		{"link down, mac unknown in the plan", hotSpec(), mod(func(s *Spec) { s.Interfaces[0].LinkState = LinkStateDown; s.Interfaces[0].MAC = "" }), ChangeLive,
			[]op{{LiveUpdateDevice, "52:54:00:aa:00:01", `<mac address="52:54:00:aa:00:01">`}}, ""},
		{"bandwidth", hotSpec(), mod(func(s *Spec) {
			s.Interfaces[0].Bandwidth = &Bandwidth{Outbound: &BandwidthLimit{Average: 100}}
		}), ChangeLive, []op{{LiveSetBandwidth, "52:54:00:aa:00:01", ""}}, ""},
		{"link and model", hotSpec(), mod(func(s *Spec) { s.Interfaces[0].LinkState = LinkStateDown; s.Interfaces[0].Model = "e1000" }),
			ChangeRestart, nil, "changes beyond link_state and bandwidth"},
		{"cdrom medium", hotSpec(), mod(func(s *Spec) { s.Disks[1].Path = "/iso/b.iso" }), ChangeLive,
			[]op{{LiveUpdateDevice, "sda", `<source file="/iso/b.iso">`}}, ""},
		{"cdrom medium and bus", hotSpec(), mod(func(s *Spec) { s.Disks[1].Path = "/iso/b.iso"; s.Disks[1].Bus = "scsi" }), ChangeRestart, nil,
			"disk sda changes beyond its iotune and medium"},
		{"cloud-init seed changed", mod(func(s *Spec) { s.CloudInit = &CloudInit{ID: "default/a.iso", Path: "/pool/a.iso"} }),
			mod(func(s *Spec) { s.CloudInit = &CloudInit{ID: "default/b.iso", Path: "/pool/b.iso"} }), ChangeLive,
			[]op{{LiveUpdateDevice, "sdb", `<source file="/pool/b.iso">`}}, ""},
		{"cloud-init seed added", hotSpec(), mod(func(s *Spec) { s.CloudInit = &CloudInit{ID: "default/b.iso", Path: "/pool/b.iso"} }), ChangeRestart, nil,
			"the cloud-init disk is added"},
		{"disk path of a disk", hotSpec(), mod(func(s *Spec) { s.Disks[0].Path = "/pool/other.qcow2" }), ChangeRestart, nil, "disk vda changes"},
		{"virtio disk added", hotSpec(), withData, ChangeLive, []op{{LiveAttach, "vdb", `<target dev="vdb" bus="virtio">`}}, ""},
		{"usb disk added", hotSpec(), mod(func(s *Spec) { d := data; d.Bus, d.Target = "usb", "sdc"; s.Disks = append(s.Disks, d) }), ChangeLive,
			[]op{{LiveAttach, "sdc", `bus="usb"`}}, ""},
		{"sata disk added", hotSpec(), mod(func(s *Spec) { d := data; d.Bus, d.Target = "sata", "sdb"; s.Disks = append(s.Disks, d) }), ChangeRestart, nil,
			"disk sdb: bus sata has no hot-plug"},
		{"disk added with a boot order", hotSpec(), mod(func(s *Spec) { d := data; d.BootOrder = 2; s.Disks = append(s.Disks, d) }), ChangeRestart, nil,
			"boot_order needs a restart"},
		{"disk added in front", hotSpec(), mod(func(s *Spec) { s.Disks = append([]Disk{data}, s.Disks...) }), ChangeRestart, nil, "added before others"},
		{"disks reordered", hotSpec(), mod(func(s *Spec) { s.Disks[0], s.Disks[1] = s.Disks[1], s.Disks[0] }), ChangeRestart, nil, "reordered"},
		{"virtio disk removed", withData, hotSpec(), ChangeLive, []op{{LiveDetach, "vdb", `<source file="/pool/data.raw">`}}, ""},
		{"sata cdrom removed", hotSpec(), mod(func(s *Spec) { s.Disks = s.Disks[:1] }), ChangeRestart, nil, "disk sda: bus sata has no hot-plug"},
		{"nic added without a mac", hotSpec(), mod(func(s *Spec) { s.Interfaces = append(s.Interfaces, nic2) }), ChangeLive,
			[]op{{LiveAttach, "", `<source network="default">`}}, ""},
		{"nic removed", withNIC2, hotSpec(), ChangeLive, []op{{LiveDetach, "52:54:00:aa:00:02", `<mac address="52:54:00:aa:00:02">`}}, ""},
		{"nic swapped: detach first", withNIC2, mod(func(s *Spec) { s.Interfaces = []Interface{withNIC2.Interfaces[1], nic2} }), ChangeLive,
			[]op{{LiveDetach, "52:54:00:aa:00:01", ""}, {LiveAttach, "", ""}}, ""},
		{"nics reordered", withNIC2, mod(func(s *Spec) { s.Interfaces = []Interface{withNIC2.Interfaces[1], withNIC2.Interfaces[0]} }), ChangeRestart, nil,
			"reordered"},
		{"disk and nic added, link down", hotSpec(), mod(func(s *Spec) {
			s.Disks = append(s.Disks, data)
			s.Interfaces[0].LinkState = LinkStateDown
			s.Interfaces = append(s.Interfaces, nic2)
		}), ChangeLive, []op{{LiveAttach, "vdb", ""}, {LiveAttach, "", ""}, {LiveUpdateDevice, "52:54:00:aa:00:01", ""}}, ""},
	}
	for _, c := range cases {
		p := PlanChange(c.old, c.next, true, true, nil)
		if p.Change != c.want || !strings.Contains(p.Reason, c.reason) || len(p.Ops) != len(c.ops) {
			t.Errorf("%s: %s %+v (reason %q), want %s %d ops (reason %q)", c.name, p.Change, p.Ops, p.Reason, c.want, len(c.ops), c.reason)
			continue
		}
		for i, w := range c.ops {
			g := p.Ops[i]
			if g.Kind != w.kind || g.Device != w.device || !strings.Contains(g.XML, w.xml) {
				t.Errorf("%s: op %d %s %q\n%s\nwant %s %q with %s", c.name, i, g.Kind, g.Device, g.XML, w.kind, w.device, w.xml)
			}
		}
		if got := PlanChange(c.old, c.next, false, false, nil).Change; got != ChangeDefinition {
			t.Errorf("%s stopped: %s, want definition", c.name, got)
		}
	}
}

// TestPlanChangeHotplugKeepsAddress: with the current definition, the device XML of a
// detach or an update is the definition's own (address kept), as Build writes it.
func TestPlanChangeHotplugKeepsAddress(t *testing.T) {
	old := hotSpec()
	old.Disks = append(old.Disks, Disk{Path: "/pool/data.raw", Device: DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw"})
	cur, err := Build(nil, old)
	if err != nil {
		t.Fatal(err)
	}
	slot := uint(7)
	for i, d := range cur.Devices.Disks {
		if d.Target.Dev == "vdb" {
			cur.Devices.Disks[i].Address = &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Slot: &slot}}
		}
	}
	cur.Devices.Interfaces[0].Address = &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Slot: &slot}}
	next := hotSpec() // vdb removed, the NIC's link down
	next.Interfaces[0].LinkState = LinkStateDown
	p := PlanChange(old, next, true, true, cur)
	if p.Change != ChangeLive || len(p.Ops) != 2 {
		t.Fatalf("%+v", p)
	}
	for _, o := range p.Ops {
		if !strings.Contains(o.XML, `slot="0x07"`) {
			t.Errorf("%s %s lost its address:\n%s", o.Kind, o.Device, o.XML)
		}
	}
}

// TestLiveDeviceAlias: the alias of a disk by target and of a NIC by MAC, from the XML
// libvirt returns for a running domain.
func TestLiveDeviceAlias(t *testing.T) {
	const live = `<domain type="qemu"><name>web-1</name><devices>
  <disk type="file" device="disk"><source file="/pool/data.raw"/><target dev="vdb" bus="virtio"/><alias name="virtio-disk1"/></disk>
  <interface type="network"><mac address="52:54:00:AA:00:02"/><source network="default"/><target dev="vnet3"/><alias name="net1"/></interface>
</devices></domain>`
	var d libvirtxml.Domain
	if err := d.Unmarshal(live); err != nil {
		t.Fatal(err)
	}
	checkAliases(t, &d, []aliasCase{ // hotplug_devices_test.go
		{LiveOp{Noun: "disk", Device: "vdb"}, "virtio-disk1", true},
		{LiveOp{Noun: "interface", Device: "52:54:00:aa:00:02"}, "net1", true},
		{LiveOp{Noun: "disk", Device: "vdc"}, "", false},
		{LiveOp{Noun: "interface", Device: "52:54:00:aa:00:09"}, "", false},
	})
	if _, ok := LiveDeviceAlias(nil, LiveOp{Noun: "disk", Device: "vdb"}); ok {
		t.Error("no live XML: present")
	}
}

// TestWithLiveMACs: a NIC left to libvirt takes the MAC the definition now has, by place;
// a count that differs changes nothing.
func TestWithLiveMACs(t *testing.T) {
	s := hotSpec()
	s.Interfaces = append(s.Interfaces, Interface{Network: "default"})
	cur := &libvirtxml.Domain{Devices: &libvirtxml.DomainDeviceList{Interfaces: []libvirtxml.DomainInterface{
		{MAC: &libvirtxml.DomainInterfaceMAC{Address: "52:54:00:AA:00:01"}},
		{MAC: &libvirtxml.DomainInterfaceMAC{Address: "52:54:00:AA:00:07"}},
	}}}
	got := WithLiveMACs(s, cur)
	if got.Interfaces[0].MAC != "52:54:00:aa:00:01" || got.Interfaces[1].MAC != "52:54:00:aa:00:07" || s.Interfaces[1].MAC != "" {
		t.Errorf("%+v (input %+v)", got.Interfaces, s.Interfaces)
	}
	cur.Devices.Interfaces = cur.Devices.Interfaces[:1]
	if got := WithLiveMACs(s, cur); got.Interfaces[1].MAC != "" {
		t.Errorf("count differs: %+v", got.Interfaces)
	}
}

// TestPlanChangeRootPorts: on q35 a virtio disk or a NIC hot-plugs only onto a free
// pcie-root-port of the current definition; a usb disk needs none.
func TestPlanChangeRootPorts(t *testing.T) {
	old := hotSpec()
	next := hotSpec()
	next.Disks = append(next.Disks, Disk{Path: "/pool/data.raw", Device: DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw"})
	one, two := uint(1), uint(2)
	port := func(i *uint) libvirtxml.DomainController {
		return libvirtxml.DomainController{Type: "pci", Model: "pcie-root-port", Index: i}
	}
	onBus := func(b uint) *libvirtxml.DomainAddress {
		return &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Bus: &b}}
	}
	cur := &libvirtxml.Domain{OS: &libvirtxml.DomainOS{Type: &libvirtxml.DomainOSType{Machine: "pc-q35-7.2", Type: "hvm"}},
		Devices: &libvirtxml.DomainDeviceList{
			Controllers: []libvirtxml.DomainController{port(&one), port(&two)},
			Disks:       []libvirtxml.DomainDisk{{Target: &libvirtxml.DomainDiskTarget{Dev: "vda", Bus: "virtio"}, Address: onBus(1)}},
		}}
	if p := PlanChange(old, next, true, true, cur); p.Change != ChangeLive {
		t.Errorf("one port free: %+v", p)
	}
	cur.Devices.Interfaces = []libvirtxml.DomainInterface{{Address: onBus(2)}}
	if p := PlanChange(old, next, true, true, cur); p.Change != ChangeRestart || !strings.Contains(p.Reason, "no free pcie-root-port") {
		t.Errorf("none free: %+v", p)
	}
	next.Disks[2].Bus, next.Disks[2].Target = "usb", "sdb"
	if p := PlanChange(old, next, true, true, cur); p.Change != ChangeLive {
		t.Errorf("usb: %+v", p)
	}
	cur.OS.Type.Machine = "pc-i440fx-7.2"
	next.Disks[2].Bus, next.Disks[2].Target = "virtio", "vdb"
	if p := PlanChange(old, next, true, true, cur); p.Change != ChangeLive {
		t.Errorf("i440fx: %+v", p)
	}
}

// TestPlanChangeSCSIController: a SCSI disk attached to a domain without a SCSI
// controller brings the virtio-scsi one define would add, attached first.
func TestPlanChangeSCSIController(t *testing.T) {
	old := hotSpec()
	next := hotSpec()
	next.Disks = append(next.Disks, Disk{Path: "/pool/a.raw", Device: DeviceDisk, Bus: "scsi", Target: "sdb", Format: "raw"},
		Disk{Path: "/pool/b.raw", Device: DeviceDisk, Bus: "scsi", Target: "sdc", Format: "raw"})
	cur, err := Build(nil, old)
	if err != nil {
		t.Fatal(err)
	}
	p := PlanChange(old, next, true, true, cur)
	if p.Change != ChangeLive || len(p.Ops) != 3 || p.Ops[0].Noun != "controller" || !strings.Contains(p.Ops[0].XML, `model="virtio-scsi"`) ||
		p.Ops[1].Device != "sdb" || p.Ops[2].Device != "sdc" {
		t.Fatalf("%+v", p)
	}
	cur, err = Build(nil, next)
	if err != nil {
		t.Fatal(err)
	}
	next.Disks = append(next.Disks, Disk{Path: "/pool/c.raw", Device: DeviceDisk, Bus: "scsi", Target: "sdd", Format: "raw"})
	if p := PlanChange(next, next, true, true, cur); p.Change != ChangeNone {
		t.Errorf("same: %+v", p)
	}
	prev := next
	prev.Disks = next.Disks[:len(next.Disks)-1]
	if p := PlanChange(prev, next, true, true, cur); p.Change != ChangeLive || len(p.Ops) != 1 || p.Ops[0].Device != "sdd" {
		t.Errorf("controller there: %+v", p)
	}
}
