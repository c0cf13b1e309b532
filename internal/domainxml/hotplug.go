package domainxml

import (
	"slices"
	"strconv"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Hot-plug and in-place changes of disks and NICs on a running domain (the families'
// live hooks). A device is known by its target (disks) or MAC (NICs): devices appended
// to the list are attached, devices gone from it detached, and a device that stays keeps
// its place; reordering, or changing a kept device beyond what libvirt changes in
// place (a disk's iotune, a cdrom's medium, a NIC's link state and bandwidth), restarts.

// noHotplugBus: buses QEMU cannot plug a disk into while the guest runs.
var noHotplugBus = map[string]bool{"sata": true, "ide": true}

// diskLive says how a disk change reaches the running domain.
func diskLive(old, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
	a, b := withDiskDefaults(old), withDiskDefaults(next)
	ops, why := cloudInitLive(a.CloudInit, b.CloudInit, cur)
	if why != "" {
		return nil, why
	}
	inA, inB := targets(a.Disks), targets(b.Disks)
	var kept []Disk
	for _, x := range a.Disks {
		if inB[x.Target] {
			kept = append(kept, x)
			continue
		}
		if why := hotplugBus(x); why != "" {
			return nil, why
		}
		ops = append(ops, LiveOp{Kind: LiveDetach, Noun: "disk", Device: x.Target, XML: diskXML(cur, x)})
	}
	for i, y := range b.Disks {
		switch {
		case inA[y.Target] && i >= len(kept):
			return nil, "disks are reordered"
		case inA[y.Target]:
			fops, why := keptDiskLive(kept[i], y, cur)
			if why != "" {
				return nil, why
			}
			ops = append(ops, fops...)
		case i < len(kept):
			return nil, "disk " + y.Target + " is added before others (only appended disks are hot-plugged)"
		default:
			if why := hotplugBus(y); why != "" {
				return nil, why
			}
			if y.BootOrder > 0 {
				return nil, "disk " + y.Target + ": a boot_order needs a restart"
			}
			ops = append(ops, scsiControllerFor(cur, y, ops)...)
			ops = append(ops, LiveOp{Kind: LiveAttach, Noun: "disk", Device: y.Target, XML: diskXML(cur, y)})
		}
	}
	return ops, ""
}

// scsiControllerFor is the attach of the virtio-scsi controller a SCSI disk needs when the
// current definition has none (define adds the same one, ensureSCSIController; libvirt
// would add another model on its own), unless ops attaches it already.
func scsiControllerFor(cur *libvirtxml.Domain, d Disk, ops []LiveOp) []LiveOp {
	if busOf(d) != "scsi" || cur == nil || cur.Devices == nil ||
		slices.ContainsFunc(ops, func(o LiveOp) bool { return o.Noun == "controller" }) {
		return nil
	}
	probe := &libvirtxml.Domain{Devices: &libvirtxml.DomainDeviceList{Controllers: cur.Devices.Controllers}}
	ensureSCSIController(probe, []Disk{{Bus: "scsi"}})
	if len(probe.Devices.Controllers) == len(cur.Devices.Controllers) {
		return nil
	}
	text, _ := probe.Devices.Controllers[len(probe.Devices.Controllers)-1].Marshal() // built here: always marshals
	return []LiveOp{{Kind: LiveAttach, Noun: "controller", Device: "scsi", XML: text}}
}

// keptDiskLive: a disk that stays changes live only in its iotune and, for a cdrom, its
// medium (the medium first: libvirt ties the limits to the medium in the tray).
func keptDiskLive(x, y Disk, cur *libvirtxml.Domain) ([]LiveOp, string) {
	if x.Target != y.Target {
		return nil, "disks are reordered"
	}
	if !sameDisks(Spec{Disks: []Disk{withoutLive(x)}}, Spec{Disks: []Disk{withoutLive(y)}}) {
		return nil, "disk " + y.Target + " changes beyond its iotune" + cdromNote(y)
	}
	var ops []LiveOp
	if y.Device == DeviceCDROM && diskSource(x) != diskSource(y) {
		ops = append(ops, LiveOp{Kind: LiveUpdateDevice, Noun: "disk", Device: y.Target, XML: diskXML(cur, y), Force: true})
	}
	if sameIOTune(x.IOTune, y.IOTune) {
		return ops, ""
	}
	if y.Device == DeviceCDROM && y.Path == "" {
		return nil, "disk " + y.Target + ": iotune of an empty cdrom cannot change live"
	}
	if x.IOTune != nil && x.IOTune.GroupName != "" && y.IOTune.hasLimit() && y.IOTune.GroupName == "" {
		return nil, "disk " + y.Target + ": removing iotune group_name needs a restart"
	}
	var t *IOTune
	if y.IOTune.hasLimit() {
		c := *y.IOTune
		t = &c
	}
	return append(ops, LiveOp{Kind: LiveSetIOTune, Noun: "disk", Device: y.Target, IOTune: t}), ""
}

func cdromNote(d Disk) string {
	if d.Device == DeviceCDROM {
		return " and medium"
	}
	return ""
}

// withoutLive is d without what changes in place: its limits, and a cdrom's medium.
func withoutLive(d Disk) Disk {
	d.IOTune = nil
	if d.Device == DeviceCDROM {
		d.Path, d.VolumeID, d.Network, d.Format = "", "", nil, ""
	}
	return d
}

func hotplugBus(d Disk) string {
	if bus := busOf(d); noHotplugBus[bus] {
		return "disk " + d.Target + ": bus " + bus + " has no hot-plug"
	}
	return ""
}

// cloudInitLive: another seed ISO on the same cdrom is a medium change; adding or
// removing the seed (a SATA cdrom) or moving it restarts.
func cloudInitLive(a, b *CloudInit, cur *libvirtxml.Domain) ([]LiveOp, string) {
	switch {
	case sameDisks(Spec{CloudInit: a}, Spec{CloudInit: b}):
		return nil, ""
	case a == nil || b == nil || a.Target != b.Target:
		return nil, "the cloud-init disk is added, removed or moved (bus sata has no hot-plug)"
	}
	var existing []libvirtxml.DomainDisk
	if cur != nil && cur.Devices != nil {
		existing = cur.Devices.Disks
	}
	x := buildDisks(existing, nil, b, nil)[0]
	text, _ := x.Marshal() // a struct built here always marshals
	return []LiveOp{{Kind: LiveUpdateDevice, Noun: "disk", Device: b.Target, XML: text, Force: true}}, ""
}

func targets(disks []Disk) map[string]bool {
	m := map[string]bool{}
	for _, d := range disks {
		m[d.Target] = true
	}
	return m
}

// diskXML is the <disk> element the definition would hold for d (what cur has for its
// target kept, as Build keeps it).
func diskXML(cur *libvirtxml.Domain, d Disk) string {
	var existing []libvirtxml.DomainDisk
	if cur != nil && cur.Devices != nil {
		existing = cur.Devices.Disks
	}
	x := buildDisks(existing, []Disk{d}, nil, nil)[0]
	text, _ := x.Marshal() // a struct built here always marshals
	return text
}

// interfaceLive says how a NIC change reaches the running domain.
func interfaceLive(old, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
	inA := map[string]bool{}
	for _, x := range old.Interfaces {
		inA[strings.ToLower(x.MAC)] = x.MAC != ""
	}
	isNew := func(n Interface) bool { return n.MAC == "" || !inA[strings.ToLower(n.MAC)] }
	// When every NIC that stays in its place has the same MAC or none (unknown in the
	// plan, or left to libvirt: same matches it), NICs are matched by place, appended
	// ones attached; otherwise by MAC.
	byPlace := len(next.Interfaces) >= len(old.Interfaces)
	for i := range old.Interfaces {
		if byPlace && next.Interfaces[i].MAC != "" && !strings.EqualFold(next.Interfaces[i].MAC, old.Interfaces[i].MAC) {
			byPlace = false
		}
	}
	k := len(next.Interfaces) // next[k:] are appended
	if byPlace {
		k = len(old.Interfaces)
	}
	for !byPlace && k > 0 && isNew(next.Interfaces[k-1]) {
		k--
	}
	var kept []Interface
	var ops []LiveOp
	if byPlace {
		kept = old.Interfaces
	} else {
		inB := map[string]bool{}
		for _, y := range next.Interfaces[:k] {
			inB[strings.ToLower(y.MAC)] = true
		}
		for _, x := range old.Interfaces {
			if x.MAC != "" && inB[strings.ToLower(x.MAC)] {
				kept = append(kept, x)
				continue
			}
			if x.MAC == "" {
				return nil, "network_interface without a mac cannot be detached live"
			}
			ops = append(ops, LiveOp{Kind: LiveDetach, Noun: "interface", Device: strings.ToLower(x.MAC), XML: interfaceXML(cur, x)})
		}
	}
	if len(kept) != k {
		return nil, "network interfaces are reordered or changed"
	}
	for i, y := range next.Interfaces[:k] {
		x := kept[i]
		if y.MAC != "" && !strings.EqualFold(x.MAC, y.MAC) {
			return nil, "network interfaces are reordered"
		}
		if y.MAC == "" {
			y.MAC = x.MAC
		}
		link, bw, ok := NICLiveChange(x, y)
		if !ok {
			return nil, "network_interface " + nicName(y, i) + " changes beyond link_state and bandwidth"
		}
		if (link || bw) && y.MAC == "" {
			return nil, "network_interface " + nicName(y, i) + ": a live change needs its mac"
		}
		if link {
			ops = append(ops, LiveOp{Kind: LiveUpdateDevice, Noun: "interface", Device: strings.ToLower(y.MAC), XML: interfaceXML(cur, y)})
		}
		if bw {
			var lim Bandwidth
			if y.Bandwidth != nil {
				lim = *y.Bandwidth
			}
			ops = append(ops, LiveOp{Kind: LiveSetBandwidth, Noun: "interface", Device: strings.ToLower(y.MAC), Bandwidth: lim})
		}
	}
	for i, y := range next.Interfaces[k:] {
		if y.BootOrder > 0 {
			return nil, "network_interface " + nicName(y, k+i) + ": a boot_order needs a restart"
		}
		ops = append(ops, LiveOp{Kind: LiveAttach, Noun: "interface", Device: strings.ToLower(y.MAC), XML: interfaceXML(cur, y)})
	}
	return ops, ""
}

func nicName(n Interface, i int) string {
	if n.MAC != "" {
		return strings.ToLower(n.MAC)
	}
	return "#" + strconv.Itoa(i)
}

// interfaceXML is the <interface> element the definition would hold for n.
func interfaceXML(cur *libvirtxml.Domain, n Interface) string {
	var existing []libvirtxml.DomainInterface
	if cur != nil && cur.Devices != nil {
		existing = cur.Devices.Interfaces
	}
	x := buildInterfaces(existing, []Interface{n}, nil)[0]
	text, _ := x.Marshal() // a struct built here always marshals
	return text
}

// LiveDeviceAlias finds the device op names in a live definition: its alias (empty when
// libvirt gave none) and whether it is there at all.
func LiveDeviceAlias(live *libvirtxml.Domain, op LiveOp) (alias string, present bool) {
	if live == nil || live.Devices == nil {
		return "", false
	}
	switch op.Noun {
	case "disk":
		for _, d := range live.Devices.Disks {
			if d.Target != nil && d.Target.Dev == op.Device {
				return aliasName(d.Alias), true
			}
		}
	case "interface":
		for _, n := range live.Devices.Interfaces {
			if n.MAC != nil && strings.EqualFold(n.MAC.Address, op.Device) {
				return aliasName(n.Alias), true
			}
		}
	case "hostdev":
		return liveHostdevAlias(live, op.Device) // hotplug_devices.go
	case "filesystem":
		return liveFilesystemAlias(live, op.Device)
	}
	return "", false
}

func aliasName(a *libvirtxml.DomainAlias) string {
	if a == nil {
		return ""
	}
	return a.Name
}

// WithLiveMACs is s with the MAC of each NIC left to libvirt taken from cur by place,
// when cur has as many NICs: after a NIC was attached without a MAC, libvirt chose one
// for the running domain and its definition, and a definition written afterwards from s
// must keep it (a NIC without a MAC would get another one).
func WithLiveMACs(s Spec, cur *libvirtxml.Domain) Spec {
	if cur == nil || cur.Devices == nil || len(cur.Devices.Interfaces) != len(s.Interfaces) {
		return s
	}
	s.Interfaces = slices.Clone(s.Interfaces)
	for i, x := range cur.Devices.Interfaces {
		if s.Interfaces[i].MAC == "" && x.MAC != nil {
			s.Interfaces[i].MAC = strings.ToLower(x.MAC.Address)
		}
	}
	return s
}
