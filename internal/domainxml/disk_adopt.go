package domainxml

import (
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// The disks the `disk` blocks cannot say exactly go whole into device_xml (the untyped
// hook, device_xml_adopt.go): an import escapes them, parse skips them and buildDisks
// keeps them. A disk is typed when reading it and building it again gives it back: its
// source is a file, a block device or a network image the blocks model, and it has
// nothing beyond what the blocks hold (disk.go, disk_network.go, disk_tuning.go,
// disk_encryption.go) but what libvirt assigns or fills in itself (an alias, a PCI
// address, the drive address libvirt gives the target, a burst length).

// inexactDisks: the disk family's inexact hook. A disk block carries encryption only with
// the volume it comes from (volume_id): an encrypted disk an import finds, with no record
// of a volume, would lose its <encryption> in a block, so it goes whole into device_xml.
func inexactDisks(l *libvirtxml.DomainDeviceList, rec *record) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Disks {
		if typedDisk(&x) && diskEncrypted(&x) && !recordedVolume(rec, &x) {
			out.Disks = append(out.Disks, x)
		}
	}
	return &out
}

// recordedVolume says the record lists x as a volume's disk: its encryption comes with
// the volume (volume_id), so the block says it.
func recordedVolume(rec *record, x *libvirtxml.DomainDisk) bool {
	if x.Target == nil {
		return false
	}
	path := diskSourcePath(x)
	for _, m := range rec.Disks {
		if m.Target == x.Target.Dev && m.Path == path && path != "" && m.Volume != "" {
			return true
		}
	}
	return false
}

func diskEncrypted(x *libvirtxml.DomainDisk) bool {
	return x.Encryption != nil || x.Source != nil && x.Source.Encryption != nil
}

// untypedDisks: the disk family's untyped hook.
func untypedDisks(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Disks {
		if !typedDisk(&x) {
			out.Disks = append(out.Disks, x)
		}
	}
	return &out
}

// typedDisk says whether the disk blocks say x exactly.
func typedDisk(x *libvirtxml.DomainDisk) bool { return untypedReason(x) == "" }

// untypedReason is why the disk blocks cannot say x ("" when they can): the first thing
// of x they do not hold, for tests and messages.
func untypedReason(x *libvirtxml.DomainDisk) string {
	if x.Target == nil || x.Target.Dev == "" {
		return "" // no form libvirt takes: a fragment of it is refused as the disk blocks'
	}
	if r := untypedDiskShape(x); r != "" {
		return r
	}
	if r := untypedSource(x); r != "" {
		return r
	}
	if r := untypedDriver(x); r != "" {
		return r
	}
	if r := untypedTuning(x); r != "" {
		return r
	}
	// What the blocks hold must also pass their checks: a disk libvirt takes that the
	// provider would refuse (io native with the host cache, say) is device_xml's.
	dk := parseDisk(x)
	if dk.Network != nil {
		if err := ValidateNetworkSource("disk", dk.Network); err != nil {
			return err.Error()
		}
	}
	if err := dk.ValidateTuning("disk"); err != nil {
		return err.Error()
	}
	return ""
}

// untypedDiskShape: the disk's device, target and the elements beside its source.
func untypedDiskShape(x *libvirtxml.DomainDisk) string {
	switch {
	case x.Device != "" && x.Device != DeviceDisk && x.Device != DeviceCDROM && x.Device != DeviceLUN:
		return "device " + x.Device
	case x.RawIO != "", x.Snapshot != "", x.Model != "":
		return "rawio, snapshot or model"
	case !DiskTargetPattern.MatchString(x.Target.Dev) || !slices.Contains(DiskBuses, x.Target.Bus):
		return "target"
	case x.Target.Tray != "" || x.Target.Removable != "" || x.Target.RotationRate != 0 || x.Target.DPOFUA != "":
		return "target tray, removable, rotation_rate or dpofua"
	case x.BackingStore != nil && !libvirtChain(x):
		return "backingStore"
	case x.BackendDomain != nil, x.Geometry != nil, x.BlockIO != nil, x.ThrottleFilters != nil,
		x.Transient != nil, x.Vendor != "", x.Product != "", x.ACPI != nil:
		return "backenddomain, geometry, blockio, throttlefilters, transient, vendor, product or acpi"
	case x.Boot != nil && x.Boot.LoadParm != "":
		return "boot loadparm"
	case x.Device == DeviceCDROM && x.ReadOnly == nil:
		return "a writable cdrom"
	case x.Address != nil && x.Address.Drive != nil && !defaultDriveAddress(x.Target, x.Address.Drive):
		return "a drive address libvirt would not give the target"
	}
	return ""
}

// libvirtChain says x's backing chain is libvirt's, not the user's: the chain of a
// provider snapshot's overlay (snapshot_overlay.go), or one libvirt detected from the
// images (a live definition numbers its layers: index on <source> and <backingStore>).
// A <mirror> is a block job's, never the user's either.
func libvirtChain(x *libvirtxml.DomainDisk) bool {
	_, _, overlay := snapshotBase(x)
	return overlay || x.BackingStore.Index != 0 || x.Source != nil && x.Source.Index != 0
}

// untypedSource: a file, a block device under /dev (a path elsewhere builds as a file)
// or a network image, with nothing but the path (and the encryption) on it.
func untypedSource(x *libvirtxml.DomainDisk) string {
	s := x.Source
	switch {
	case s == nil:
		return "no source"
	case s.File != nil && (s.File.File == "" || strings.HasPrefix(s.File.File, "/dev/") || s.File.FDGroup != "" || len(s.File.SecLabel) > 0):
		return "file source"
	case s.Block != nil && (!strings.HasPrefix(s.Block.Dev, "/dev/") || len(s.Block.SecLabel) > 0):
		return "block source"
	case s.File == nil && s.Block == nil && s.Network == nil:
		return "source type (volume, dir, nvme, vhostuser, vhostvdpa)"
	case s.StartupPolicy != "" || s.Reservations != nil || s.Slices != nil || s.SSL != nil ||
		s.Cookies != nil || s.Readahead != nil || s.Timeout != nil || s.DataStore != nil:
		return "source startupPolicy, reservations, slices, ssl, cookies, readahead, timeout or dataStore"
	}
	if r := untypedNetworkSource(x); r != "" {
		return r
	}
	return untypedEncryption(x)
}

// untypedDriver: the driver is QEMU's with a format `format` takes (buildDisk writes both).
func untypedDriver(x *libvirtxml.DomainDisk) string {
	d := x.Driver
	switch {
	case d == nil || d.Name != "qemu" || !slices.Contains(DiskFormats, d.Type):
		return "driver name or type"
	case d.ErrorPolicy != "" || d.RErrorPolicy != "" || d.IOEventFD != "" || d.EventIDX != "" || d.CopyOnRead != "" ||
		d.DiscardNoUnref != "" || d.IOThreads != nil || d.QueueSize != nil || d.IOMMU != "" || d.ATS != "" ||
		d.Packed != "" || d.PagePerVQ != "" || d.MetadataCache != nil || d.Statistics != nil:
		return "driver options"
	}
	return ""
}

// defaultDriveAddress says a is the drive address libvirt gives target t when the
// definition names none (virDomainDiskDefAssignAddress): the disk's index on the bus,
// two units a bus and two buses a controller for ide, six units a controller for sata,
// seven for scsi.
func defaultDriveAddress(t *libvirtxml.DomainDiskTarget, a *libvirtxml.DomainAddressDrive) bool {
	idx := diskIndex(t.Dev)
	if idx < 0 {
		return false
	}
	var want [4]uint // controller, bus, target, unit
	switch t.Bus {
	case "ide":
		want = [4]uint{uint(idx / 4), uint(idx % 4 / 2), 0, uint(idx % 2)}
	case "sata":
		want = [4]uint{uint(idx / 6), 0, 0, uint(idx % 6)}
	case "scsi":
		want = [4]uint{uint(idx / 7), 0, 0, uint(idx % 7)}
	default:
		return false
	}
	got := [4]uint{derefUint(a.Controller), derefUint(a.Bus), derefUint(a.Target), derefUint(a.Unit)}
	return got == want
}

// userDriveAddress says n is a <disk> whose drive address is not the one libvirt gives
// its target: the user's, which an escaped disk keeps.
func userDriveAddress(n xmlNode) bool {
	if n.XMLName.Local != "disk" {
		return false
	}
	l, err := nodesToDevices([]xmlNode{n})
	if err != nil || len(l.Disks) != 1 {
		return false
	}
	x := l.Disks[0]
	return x.Address != nil && x.Address.Drive != nil && (x.Target == nil || !defaultDriveAddress(x.Target, x.Address.Drive))
}

// diskIndex is the index a target name stands for (sda 0, sdz 25, sdaa 26), -1 when it
// is not one.
func diskIndex(dev string) int {
	m := DiskTargetPattern.FindStringSubmatch(dev)
	if m == nil {
		return -1
	}
	idx := 0
	for _, c := range dev[len(m[1]):] {
		idx = idx*26 + int(c-'a'+1)
	}
	return idx - 1
}

// FillDiskDefaultsBeside is FillDiskDefaults where device_xml holds disks too: their
// targets are taken.
func FillDiskDefaultsBeside(disks []Disk, ci *CloudInit, deviceXML []string) {
	frag := fragmentDisks(deviceXML)
	if len(frag) == 0 {
		FillDiskDefaults(disks, ci)
		return
	}
	all := append(slices.Clone(disks), frag...)
	FillDiskDefaults(all, ci)
	copy(disks, all)
}

// fragmentDisks are the disks of device_xml fragments (the ones the disk family does not
// type), read as far as the family's other devices need: target, bus, boot order. A
// fragment that does not parse is the device_xml family's to refuse.
func fragmentDisks(fragments []string) []Disk {
	var out []Disk
	for _, f := range fragments {
		n, err := parseNode(f)
		if err != nil || n.XMLName.Local != "disk" {
			continue
		}
		l, err := nodesToDevices([]xmlNode{*n})
		if err != nil {
			continue
		}
		for _, x := range l.Disks {
			dk := Disk{Device: x.Device}
			if x.Target != nil {
				dk.Target, dk.Bus = x.Target.Dev, x.Target.Bus
			}
			if x.Boot != nil {
				dk.BootOrder = x.Boot.Order
			}
			out = append(out, dk)
		}
	}
	return out
}
