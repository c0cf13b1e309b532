package domainxml

import (
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Hot-plug of host devices and shared folders on a running domain (the hostdev and
// filesystem families' live hooks). As for disks (hotplug.go), a device is known by a key
// (a hostdev by its source, HostdevName; a share by its mount tag): devices appended to
// the list are attached, devices gone from it detached; a device that stays keeps its
// place and its settings, else the domain restarts.
//
// What libvirt 9.0 can plug (src/qemu/qemu_hotplug.c): qemuDomainAttachHostDevice takes
// every subsystem hostdev this provider writes (PCI, USB, SCSI, and mdev of each model:
// vfio-pci and vfio-ccw get an address, vfio-ap none), and qemuDomainRemoveHostDevice
// every one of them; for shares see filesystemLive.

// keyedList is a device list hot-plugged by key.
type keyedList[T any] struct {
	noun   string // for LiveOp.Noun and messages: "hostdev", "filesystem"
	plural string // "hostdevs"
	key    func(T) string
	// same: a kept device needs nothing done.
	same func(x, y T) bool
	// attach / detach: the device's XML, or why it cannot be plugged / unplugged live.
	attach, detach func(T) (xml, why string)
}

// plan is the detaches of the devices of a missing from b and the attaches of the
// devices appended to b, or why the change needs a restart.
func (l keyedList[T]) plan(a, b []T) ([]LiveOp, string) {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, x := range a {
		inA[l.key(x)] = true
	}
	for _, y := range b {
		inB[l.key(y)] = true
	}
	var ops []LiveOp
	var kept []T
	for _, x := range a {
		if inB[l.key(x)] {
			kept = append(kept, x)
			continue
		}
		text, why := l.detach(x)
		if why != "" {
			return nil, why
		}
		ops = append(ops, LiveOp{Kind: LiveDetach, Noun: l.noun, Device: l.key(x), XML: text})
	}
	for i, y := range b {
		switch {
		case inA[l.key(y)] && (i >= len(kept) || l.key(kept[i]) != l.key(y)):
			return nil, l.plural + " are reordered"
		case inA[l.key(y)]:
			if !l.same(kept[i], y) {
				return nil, l.noun + " " + l.key(y) + " changes (only " + l.plural + " added at the end or removed apply live)"
			}
		case i < len(kept):
			return nil, l.noun + " " + l.key(y) + " is added before others (only appended " + l.plural + " are hot-plugged)"
		default:
			text, why := l.attach(y)
			if why != "" {
				return nil, why
			}
			ops = append(ops, LiveOp{Kind: LiveAttach, Noun: l.noun, Device: l.key(y), XML: text})
		}
	}
	return ops, ""
}

// hostdevLive says how a hostdev change reaches the running domain.
func hostdevLive(old, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
	l := keyedList[Hostdev]{
		noun: "hostdev", plural: "hostdevs", key: HostdevName,
		same: func(x, y Hostdev) bool {
			return sameHostdevs(Spec{Hostdevs: []Hostdev{x}}, Spec{Hostdevs: []Hostdev{y}})
		},
		attach: func(h Hostdev) (string, string) {
			if h.BootOrder > 0 {
				return "", "hostdev " + HostdevName(h) + ": a boot_order needs a restart"
			}
			return hostdevXML(cur, h), ""
		},
		detach: func(h Hostdev) (string, string) { return hostdevXML(cur, h), "" },
	}
	return l.plan(old.Hostdevs, next.Hostdevs)
}

// hostdevXML is the <hostdev> element the definition would hold for h (what cur has for
// its source kept, as Build keeps it: the guest address a detach matches).
func hostdevXML(cur *libvirtxml.Domain, h Hostdev) string {
	var existing []libvirtxml.DomainHostdev
	if cur != nil && cur.Devices != nil {
		existing = cur.Devices.Hostdevs
	}
	x := buildHostdevs(existing, []Hostdev{h}, nil)[0]
	text, _ := x.Marshal() // a struct built here always marshals
	return text
}

// filesystemLive says how a shared-folder change reaches the running domain: a virtiofs
// share removed is detached live; a share added restarts. libvirt 9.0 can attach only
// virtiofs (qemuDomainAttachFSDevice), and even that crashes libvirtd when the domain runs
// without a cgroup of its own (no systemd or cgroup controllers, as on the test host):
// qemuVirtioFSSetupCgroup hands a NULL cgroup to virCgroupAddProcess (later libvirt checks
// for it). A plan cannot tell whether the host has cgroups, and a crashed daemon is worse
// than a restart. (A live attach would also need the shared memory virtiofsd maps,
// already in the definition the domain started from.) Detaching (qemuDomainRemoveFSDevice:
// the chardev, then virtiofsd stopped) touches no cgroup. With the last virtiofs share
// gone, the shared memory Build added for it leaves the definition (LiveRedefine).
func filesystemLive(old, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
	l := keyedList[Filesystem]{
		noun: "filesystem", plural: "filesystems", key: func(f Filesystem) string { return f.Target },
		same: func(x, y Filesystem) bool {
			return sameFilesystems(Spec{Filesystems: []Filesystem{x}}, Spec{Filesystems: []Filesystem{y}})
		},
		attach: func(f Filesystem) (string, string) {
			if driverOf(f) == FS9p {
				return "", "filesystem " + f.Target + ": 9p shares cannot be hot-plugged"
			}
			return "", "filesystem " + f.Target + ": adding a virtiofs share needs a restart (libvirt 9.0's virtiofs hot-plug " +
				"crashes libvirtd on hosts without cgroups)"
		},
		detach: func(f Filesystem) (string, string) {
			if driverOf(f) == FS9p {
				return "", "filesystem " + f.Target + ": 9p shares cannot be hot-plugged"
			}
			return filesystemXML(cur, f), ""
		},
	}
	ops, why := l.plan(old.Filesystems, next.Filesystems)
	if why == "" && len(ops) > 0 && cur != nil && !hasVirtiofs(next) && readRecord(cur).VirtiofsMemory != nil &&
		isVirtiofsMemory(cur.MemoryBacking) {
		ops = append(ops, LiveOp{Kind: LiveRedefine, Noun: "filesystem", Device: "shared memory"})
	}
	return ops, why
}

func hasVirtiofs(s Spec) bool {
	for _, f := range s.Filesystems {
		if driverOf(f) == FSVirtiofs {
			return true
		}
	}
	return false
}

// filesystemXML is the <filesystem> element the definition would hold for f.
func filesystemXML(cur *libvirtxml.Domain, f Filesystem) string {
	var existing []libvirtxml.DomainFilesystem
	if cur != nil && cur.Devices != nil {
		existing = cur.Devices.Filesystems
	}
	all := buildFilesystems(existing, []Filesystem{f}, nil)
	x := all[len(all)-1]   // buildFilesystems puts the shares it does not manage first
	text, _ := x.Marshal() // a struct built here always marshals
	return text
}

// liveHostdevAlias and liveFilesystemAlias find a hostdev (by its source) and a share (by
// its mount tag) in a live definition, for LiveDeviceAlias.
func liveHostdevAlias(live *libvirtxml.Domain, device string) (string, bool) {
	for i := range live.Devices.Hostdevs {
		if h, ok := parseHostdev(&live.Devices.Hostdevs[i]); ok && HostdevName(h) == device {
			return aliasName(live.Devices.Hostdevs[i].Alias), true
		}
	}
	return "", false
}

func liveFilesystemAlias(live *libvirtxml.Domain, device string) (string, bool) {
	for _, x := range live.Devices.Filesystems {
		if x.Target != nil && x.Target.Dir == device {
			return aliasName(x.Alias), true
		}
	}
	return "", false
}

// pciHotplug reports whether the attach o takes a PCI slot (hotplug_pci.go): a PCI or
// vfio-pci mdev hostdev. USB and SCSI hostdevs sit on their controllers.
func pciHotplug(o LiveOp) bool {
	return o.Noun == "hostdev" &&
		(strings.HasPrefix(o.Device, "pci ") || (strings.HasPrefix(o.Device, "mdev ") && strings.Contains(o.XML, `model="vfio-pci"`)))
}
