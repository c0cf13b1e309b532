package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// liveCase is one change of a running domain: the method, the operations (kind, device,
// what the XML holds) or the restart reason.
type liveCase struct {
	name   string
	old    Spec
	next   Spec
	cur    *libvirtxml.Domain // the current definition (nil: at plan time)
	want   Change
	ops    []op
	reason string
}

func checkLiveCases(t *testing.T, cases []liveCase) {
	t.Helper()
	for _, c := range cases {
		p := PlanChange(c.old, c.next, true, true, c.cur)
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
		if got := PlanChange(c.old, c.next, false, false, c.cur).Change; got != ChangeDefinition {
			t.Errorf("%s stopped: %s, want definition", c.name, got)
		}
	}
}

// TestPlanChangeHostdevs: hostdevs appended attach (every kind libvirt 9.0 plugs),
// removed ones detach (by the definition's own XML, guest address kept); a boot order,
// a kept hostdev changed, one added in front or a reorder restart with the device named.
func TestPlanChangeHostdevs(t *testing.T) {
	base := hostdevSpec()
	mod := func(f func(*Spec)) Spec {
		s := hostdevSpec()
		s.Hostdevs = append([]Hostdev(nil), s.Hostdevs...)
		f(&s)
		return s
	}
	add := func(h Hostdev) Spec { return mod(func(s *Spec) { s.Hostdevs = append(s.Hostdevs, h) }) }
	cur := libvirtHostdevs(t)
	const mdev2 = "0b2b5c1e-3f4a-4c36-9f43-6d9a1c7e2b10"
	checkLiveCases(t, []liveCase{
		{name: "pci added", old: base, next: add(Hostdev{PCI: "03:00.0", Managed: true}), want: ChangeLive,
			ops: []op{{LiveAttach, "pci 0000:03:00.0", `<address domain="0x0000" bus="0x03" slot="0x00" function="0x0">`}}},
		{name: "pci added, managed written", old: base, next: add(Hostdev{PCI: "03:00.0"}), want: ChangeLive,
			ops: []op{{LiveAttach, "pci 0000:03:00.0", `managed="no"`}}},
		{name: "usb ids added", old: base, next: add(Hostdev{USBVendor: "046d", USBProduct: "C52B", Managed: true}), want: ChangeLive,
			ops: []op{{LiveAttach, "usb 0x046d:0xc52b", `<vendor id="0x046d">`}}},
		{name: "usb address added", old: base, next: add(Hostdev{USBAddress: "2:3"}), want: ChangeLive,
			ops: []op{{LiveAttach, "usb_address 2:3", `<address bus="2" device="3">`}}},
		{name: "mdev added", old: base, next: add(Hostdev{MDev: mdev2, MDevModel: "vfio-ccw", Managed: true}), want: ChangeLive,
			ops: []op{{LiveAttach, "mdev " + mdev2, `model="vfio-ccw"`}}},
		{name: "scsi added", old: base, next: add(Hostdev{SCSI: &HostdevSCSI{Adapter: "scsi_host1", Unit: 2}}), want: ChangeLive,
			ops: []op{{LiveAttach, "scsi scsi_host1:0:0:2", `<adapter name="scsi_host1">`}}},
		{name: "added with a boot order", old: base, next: add(Hostdev{PCI: "03:00.0", BootOrder: 3}), want: ChangeRestart,
			reason: "hostdev pci 0000:03:00.0: a boot_order needs a restart"},
		{name: "added in front", old: base, next: mod(func(s *Spec) { s.Hostdevs = append([]Hostdev{{PCI: "03:00.0"}}, s.Hostdevs...) }),
			want: ChangeRestart, reason: "hostdev pci 0000:03:00.0 is added before others"},
		{name: "reordered", old: base, next: mod(func(s *Spec) { s.Hostdevs[3], s.Hostdevs[4] = s.Hostdevs[4], s.Hostdevs[3] }),
			want: ChangeRestart, reason: "hostdevs are reordered"},
		{name: "kept one changes", old: base, next: mod(func(s *Spec) { s.Hostdevs[1].Managed = false }), want: ChangeRestart,
			reason: "hostdev usb 0x10de:0x1234 changes"},
		{name: "kept one's rom changes", old: base, next: mod(func(s *Spec) { s.Hostdevs[0].ROM = nil }), want: ChangeRestart,
			reason: "hostdev pci 0000:7f:1f.7 changes"},
		{name: "removed, with the definition", old: base, next: mod(func(s *Spec) { s.Hostdevs = append(s.Hostdevs[:3], s.Hostdevs[4]) }),
			cur: cur, want: ChangeLive,
			ops: []op{{LiveDetach, "mdev c2177883-f1bb-47f0-914d-32a22e3a8804", `<address type="pci" domain="0x0000" bus="0x00" slot="0x04"`}}},
		{name: "pci with a boot order removed", old: base, next: mod(func(s *Spec) { s.Hostdevs = s.Hostdevs[1:] }), cur: cur, want: ChangeLive,
			ops: []op{{LiveDetach, "pci 0000:7f:1f.7", `slot="0x03"`}}},
		{name: "last replaced: detach first", old: base, next: mod(func(s *Spec) { s.Hostdevs[4] = Hostdev{USBAddress: "2:3"} }),
			want: ChangeLive, ops: []op{{LiveDetach, "scsi scsi_host0:0:0:0", ""}, {LiveAttach, "usb_address 2:3", ""}}},
		{name: "all removed", old: base, next: mod(func(s *Spec) { s.Hostdevs = nil }), want: ChangeLive,
			ops: []op{{LiveDetach, "pci 0000:7f:1f.7", ""}, {LiveDetach, "usb 0x10de:0x1234", ""}, {LiveDetach, "usb_address 1:5", ""},
				{LiveDetach, "mdev c2177883-f1bb-47f0-914d-32a22e3a8804", ""}, {LiveDetach, "scsi scsi_host0:0:0:0", ""}}},
	})
}

// TestPlanChangeUSBHostdevXML: a USB hostdev's attach XML names it by its ids (the fix of
// their order for libvirt's schema is internal/libvirt's, on every device XML it sends).
func TestPlanChangeUSBHostdevXML(t *testing.T) {
	next := hostdevSpec()
	next.Hostdevs = append(append([]Hostdev(nil), next.Hostdevs...), Hostdev{USBVendor: "046D", USBProduct: "c52b", Managed: true})
	p := PlanChange(hostdevSpec(), next, true, true, nil)
	if p.Change != ChangeLive || len(p.Ops) != 1 || p.Ops[0].Device != "usb 0x046d:0xc52b" ||
		!strings.Contains(p.Ops[0].XML, `<vendor id="0x046d">`) || !strings.Contains(p.Ops[0].XML, `<product id="0xc52b">`) ||
		strings.Contains(p.Ops[0].XML, "<address") {
		t.Fatalf("%+v", p)
	}
}

// hotFSSpec is a running domain with one virtiofs share.
func hotFSSpec() Spec {
	s := hotSpec()
	s.Filesystems = []Filesystem{{Source: "/srv/data", Target: "data"}}
	return s
}

// TestPlanChangeFilesystems: a virtiofs share removed detaches (by the definition's own
// XML); a share added (virtiofs: libvirt 9.0 crashes without cgroups; 9p: never), a 9p
// share removed, a kept share changed, one added in front or a reorder restart with the
// share named.
func TestPlanChangeFilesystems(t *testing.T) {
	mod := func(base Spec, f func(*Spec)) Spec {
		s := base
		s.Filesystems = append([]Filesystem(nil), s.Filesystems...)
		f(&s)
		return s
	}
	logs := Filesystem{Source: "/var/log/app", Target: "logs"}
	nine := Filesystem{Source: "/srv/nine", Target: "nine", Driver: FS9p}
	addLogs := mod(hotFSSpec(), func(s *Spec) { s.Filesystems = append(s.Filesystems, logs) })
	cur, err := Build(nil, addLogs)
	if err != nil {
		t.Fatal(err)
	}
	slot := uint(9)
	cur.Devices.Filesystems[1].Address = &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Slot: &slot}}
	userMemory := *cur
	userMemory.Metadata = nil // no record: the memory backing is someone else's
	none := hotSpec()
	checkLiveCases(t, []liveCase{
		{name: "virtiofs removed", old: addLogs, next: hotFSSpec(), want: ChangeLive,
			ops: []op{{LiveDetach, "logs", `<source dir="/var/log/app">`}}},
		{name: "virtiofs removed, with the definition", old: addLogs, next: hotFSSpec(), cur: cur, want: ChangeLive,
			ops: []op{{LiveDetach, "logs", `slot="0x09"`}}},
		{name: "last virtiofs removed: its shared memory leaves the definition", old: hotFSSpec(), next: none, cur: cur, want: ChangeLive,
			ops: []op{{LiveDetach, "data", `<target dir="data">`}, {LiveRedefine, "shared memory", ""}}},
		{name: "last virtiofs removed, the memory backing not the provider's", old: hotFSSpec(), next: none, cur: &userMemory,
			want: ChangeLive, ops: []op{{LiveDetach, "data", ""}}},
		{name: "one of two virtiofs removed", old: addLogs, next: hotFSSpec(), cur: cur, want: ChangeLive, ops: []op{{LiveDetach, "logs", ""}}},
		{name: "both removed", old: addLogs, next: none, want: ChangeLive, ops: []op{{LiveDetach, "data", ""}, {LiveDetach, "logs", ""}}},
		{name: "virtiofs added", old: hotFSSpec(), next: addLogs, cur: cur, want: ChangeRestart,
			reason: "filesystem logs: adding a virtiofs share needs a restart (libvirt 9.0's virtiofs hot-plug crashes libvirtd"},
		{name: "first virtiofs added", old: none, next: hotFSSpec(), want: ChangeRestart, reason: "filesystem data: adding a virtiofs share"},
		{name: "9p added", old: hotFSSpec(), next: mod(hotFSSpec(), func(s *Spec) { s.Filesystems = append(s.Filesystems, nine) }),
			want: ChangeRestart, reason: "filesystem nine: 9p shares cannot be hot-plugged"},
		{name: "9p removed", old: mod(hotFSSpec(), func(s *Spec) { s.Filesystems = append(s.Filesystems, nine) }), next: hotFSSpec(),
			want: ChangeRestart, reason: "filesystem nine: 9p shares cannot be hot-plugged"},
		{name: "source changes", old: hotFSSpec(), next: mod(hotFSSpec(), func(s *Spec) { s.Filesystems[0].Source = "/srv/other" }),
			want: ChangeRestart, reason: "filesystem data changes"},
		{name: "driver changes", old: hotFSSpec(), next: mod(hotFSSpec(), func(s *Spec) { s.Filesystems[0].Driver = FS9p }),
			want: ChangeRestart, reason: "filesystem data changes"},
		{name: "added in front", old: hotFSSpec(), next: mod(hotFSSpec(), func(s *Spec) { s.Filesystems = append([]Filesystem{logs}, s.Filesystems...) }),
			want: ChangeRestart, reason: "filesystem logs is added before others"},
		{name: "reordered", old: addLogs, next: mod(addLogs, func(s *Spec) { s.Filesystems[0], s.Filesystems[1] = s.Filesystems[1], s.Filesystems[0] }),
			want: ChangeRestart, reason: "filesystems are reordered"},
		{name: "replaced", old: hotFSSpec(), next: mod(hotFSSpec(), func(s *Spec) { s.Filesystems[0] = logs }),
			want: ChangeRestart, reason: "filesystem logs: adding a virtiofs share"},
	})
}

// TestPlanChangeDevicesRootPorts: on q35 a PCI hostdev (or a vfio-pci mdev) needs a free
// pcie-root-port; a USB hostdev needs none.
func TestPlanChangeDevicesRootPorts(t *testing.T) {
	cur, err := Build(nil, hotSpec())
	if err != nil {
		t.Fatal(err)
	}
	cur.OS.Type.Machine = "pc-q35-7.2" // no pcie-root-port at all
	next := hotSpec()
	next.Hostdevs = []Hostdev{{PCI: "0000:03:00.0"}}
	if p := PlanChange(hotSpec(), next, true, true, cur); p.Change != ChangeRestart || !strings.Contains(p.Reason, "no free pcie-root-port") {
		t.Errorf("pci hostdev: %+v", p)
	}
	next.Hostdevs = []Hostdev{{MDev: "0b2b5c1e-3f4a-4c36-9f43-6d9a1c7e2b10"}}
	if p := PlanChange(hotSpec(), next, true, true, cur); p.Change != ChangeRestart {
		t.Errorf("vfio-pci mdev: %+v", p)
	}
	next.Hostdevs = []Hostdev{{USBAddress: "1:2"}}
	if p := PlanChange(hotSpec(), next, true, true, cur); p.Change != ChangeLive {
		t.Errorf("usb hostdev: %+v", p)
	}
}

// TestLiveDeviceAliasHostdevFilesystem: a hostdev is found by its source (a USB device
// named by ids although live XML adds its bus/device), a share by its mount tag.
func TestLiveDeviceAliasHostdevFilesystem(t *testing.T) {
	d := libvirtHostdevs(t)
	d.Devices.Hostdevs[1].Alias = &libvirtxml.DomainAlias{Name: "hostdev1"}
	d.Devices.Filesystems = []libvirtxml.DomainFilesystem{{
		Source: &libvirtxml.DomainFilesystemSource{Mount: &libvirtxml.DomainFilesystemSourceMount{Dir: "/srv/data"}},
		Target: &libvirtxml.DomainFilesystemTarget{Dir: "data"}, Alias: &libvirtxml.DomainAlias{Name: "fs0"},
	}}
	checkAliases(t, d, []aliasCase{
		{LiveOp{Noun: "hostdev", Device: "pci 0000:7f:1f.7"}, "hostdev0", true},
		{LiveOp{Noun: "hostdev", Device: "usb 0x10de:0x1234"}, "hostdev1", true},
		{LiveOp{Noun: "hostdev", Device: "usb_address 1:5"}, "", true},
		{LiveOp{Noun: "hostdev", Device: "pci 0000:03:00.0"}, "", false},
		{LiveOp{Noun: "filesystem", Device: "data"}, "fs0", true},
		{LiveOp{Noun: "filesystem", Device: "logs"}, "", false},
	})
}

// aliasCase is a device LiveDeviceAlias looks for and what it should find.
type aliasCase struct {
	op      LiveOp
	alias   string
	present bool
}

func checkAliases(t *testing.T, d *libvirtxml.Domain, cases []aliasCase) {
	t.Helper()
	for _, c := range cases {
		if a, ok := LiveDeviceAlias(d, c.op); a != c.alias || ok != c.present {
			t.Errorf("%s %s: %q %v, want %q %v", c.op.Noun, c.op.Device, a, ok, c.alias, c.present)
		}
	}
}
