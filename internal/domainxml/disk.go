package domainxml

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Disks: the `disk` blocks (a volume or a path, disk or cdrom, bus, target, boot order)
// and the cloud-init seed, attached as a read-only SATA cdrom.

// Disk is one disk or cdrom. Exactly one of VolumeID, Path and Network names the source;
// Path is the resolved file (what goes into the XML) unless the disk is on the network.
type Disk struct {
	VolumeID  string // user's reference (volume key or pool/name), recorded in metadata
	Path      string
	Device    string // disk or cdrom
	Bus       string // virtio, sata, scsi, ide, usb
	Target    string // vda, sda, ...
	Format    string // qcow2, raw, ... (driver type); empty: libvirt probes nothing, raw
	BootOrder uint
	// Network is the source of a disk QEMU reaches over the network (disk_network.go).
	Network *NetworkSource
	// Encryption is the encrypted volume's (disk_encryption.go), filled by resolve.
	Encryption *DiskEncryption
	DiskTuning
}

// CloudInit is the seed ISO: the user's reference, its path and the target it sits on.
type CloudInit struct {
	ID     string
	Path   string
	Target string
}

var diskFamily = family{
	name:    "disk",
	untyped: untypedDisks,
	inexact: inexactDisks,
	validate: func(s *Spec) error {
		seen := map[string]bool{}
		for _, d := range fragmentDisks(s.DeviceXML) {
			seen[d.Target] = d.Target != ""
		}
		for i, d := range s.Disks {
			switch {
			case d.Path == "" && d.Network == nil:
				return fmt.Errorf("disk %d has no source", i)
			case d.Path != "" && d.Network != nil:
				return fmt.Errorf("disk %d has both a path and a network_source: keep one", i)
			case d.Network != nil:
				if err := ValidateNetworkSource(fmt.Sprintf("disk %d", i), d.Network); err != nil {
					return err
				}
			}
			if d.Target != "" && seen[d.Target] {
				return fmt.Errorf("disk target %s is used twice (by the disk blocks or a device_xml disk)", d.Target)
			}
			seen[d.Target] = true
			if err := validateTuning(d); err != nil {
				return err
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.Devices.Disks = buildDisks(d.Devices.Disks, s.Disks, s.CloudInit, s.DeviceXML)
		ensureSCSIController(d, append(slices.Clone(s.Disks), fragmentDisks(s.DeviceXML)...))
		setBootDevices(d, s) // boot.go: covers every device with a boot order
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		if d.Devices == nil {
			return
		}
		s := &p.Spec
		for _, x := range d.Devices.Disks {
			switch {
			case !typedDisk(&x):
				continue // device_xml's (typedDisk), kept by buildDisks
			case p.adopting && diskEncrypted(&x) && !recordedVolume(rec, &x), claimedByFragment(&x, p.claims(rec)):
				continue // escaped into device_xml (adopt_exact.go, inexactDisks)
			}
			dk := parseDisk(&x)
			if c := rec.CloudInit; c != nil && c.Target == dk.Target && c.Path == dk.Path && dk.Path != "" {
				s.CloudInit = &CloudInit{ID: c.ID, Path: c.Path, Target: c.Target}
				continue
			}
			for _, m := range rec.Disks {
				if m.Target == dk.Target && m.Path == dk.Path && dk.Path != "" {
					dk.VolumeID = m.Volume
				}
			}
			s.Disks = append(s.Disks, dk)
		}
	},
	same:   sameDisks,
	live:   diskLive,
	derive: deriveDisks,
}

// parseDisk reads one typed disk (without the references the record keeps).
func parseDisk(x *libvirtxml.DomainDisk) Disk {
	dk := Disk{Device: x.Device, DiskTuning: parseTuning(x)}
	if dk.Device == "" {
		dk.Device = DeviceDisk
	}
	if x.Target != nil {
		dk.Target, dk.Bus = x.Target.Dev, x.Target.Bus
	}
	if x.Driver != nil {
		dk.Format = x.Driver.Type
	}
	if x.Boot != nil {
		dk.BootOrder = x.Boot.Order
	}
	dk.Path, dk.Network, dk.Encryption = diskSourcePath(x), parseNetworkSource(x), parseEncryption(x)
	if base, format, ok := snapshotBase(x); ok {
		dk.Path, dk.Format = base, format // on a quiesced snapshot's overlay: the disk is the image below
	}
	return dk
}

// deriveDisks puts every disk of the source on the clone's own file (s.Disks, by
// target), without what identifies the source's disks (serial, wwn) or was the source's
// storage (backing chain, mirror); the source's cdroms go, the clone's cloud-init seed
// (if any) comes on the first free sd target, which s.CloudInit (a copy) then names.
func deriveDisks(d *libvirtxml.Domain, s *CloneSpec) error {
	byTarget := map[string]CloneDisk{}
	for _, cd := range s.Disks {
		byTarget[cd.Target] = cd
	}
	var disks []libvirtxml.DomainDisk
	used := map[string]bool{}
	for _, x := range d.Devices.Disks {
		if x.Device == DeviceCDROM {
			continue
		}
		if x.Target == nil {
			return fmt.Errorf("clone %s: a disk of the source has no target", s.Name)
		}
		cd, ok := byTarget[x.Target.Dev]
		if !ok {
			return fmt.Errorf("clone %s: no clone disk for the source's disk %s", s.Name, x.Target.Dev)
		}
		delete(byTarget, x.Target.Dev)
		x.Source = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: cd.Path}}
		if x.Driver == nil {
			x.Driver = &libvirtxml.DomainDiskDriver{Name: "qemu"}
		}
		x.Driver.Type = cd.Format
		x.BackingStore, x.Alias, x.Mirror = nil, nil, nil
		x.Serial, x.WWN = "", "" // identities of the source's disks
		used[x.Target.Dev] = true
		disks = append(disks, x)
	}
	for t := range byTarget {
		return fmt.Errorf("clone %s: disk %s is not a disk of the source", s.Name, t)
	}
	if s.CloudInit != nil {
		ci := *s.CloudInit
		for n := 0; ci.Target == ""; n++ {
			if t := TargetName("sd", n); !used[t] {
				ci.Target = t
			}
		}
		s.CloudInit = &ci
		disks = append(disks, buildDisk(nil, Disk{Path: ci.Path, Device: DeviceCDROM, Bus: "sata", Target: ci.Target, Format: "raw"}, true))
	}
	d.Devices.Disks = disks
	return nil
}

// sameDisks: sources compare by the user's reference when there is one (the resolved path may not
// be known at plan time); a format or target libvirt filled in matches one left empty.
func sameDisks(a, b Spec) bool {
	if len(a.Disks) != len(b.Disks) || (a.CloudInit == nil) != (b.CloudInit == nil) {
		return false
	}
	if a.CloudInit != nil && (a.CloudInit.ID != b.CloudInit.ID ||
		a.CloudInit.Target != "" && b.CloudInit.Target != "" && a.CloudInit.Target != b.CloudInit.Target) {
		return false
	}
	for i := range a.Disks {
		x, y := a.Disks[i], b.Disks[i]
		if diskSource(x) != diskSource(y) || x.Device != y.Device || busOf(x) != busOf(y) ||
			(x.Target != "" && y.Target != "" && x.Target != y.Target) ||
			x.BootOrder != y.BootOrder || (x.Format != "" && y.Format != "" && x.Format != y.Format) ||
			!sameTuning(x, y) || !sameIOTune(x.IOTune, y.IOTune) || !sameEncryption(x.Encryption, y.Encryption) {
			return false
		}
	}
	return true
}

// busOf is the bus a disk ends up on: the one asked for, else the device's default.
func busOf(d Disk) string {
	if d.Bus != "" {
		return d.Bus
	}
	return DefaultBus(d.Device)
}

// DefaultBus is virtio for a disk, sata for a cdrom and scsi for a lun.
func DefaultBus(device string) string {
	switch device {
	case DeviceCDROM:
		return "sata"
	case DeviceLUN:
		return "scsi"
	}
	return "virtio"
}

// TargetPrefix is the device-name prefix libvirt uses for a bus.
func TargetPrefix(bus string) string {
	switch bus {
	case "virtio":
		return "vd"
	case "ide":
		return "hd"
	case "xen":
		return "xvd"
	default: // sata, scsi, usb
		return "sd"
	}
}

// TargetName is the n-th device name with a prefix: vda..vdz, vdaa, ...
func TargetName(prefix string, n int) string {
	s := ""
	for n >= 0 {
		s = string(rune('a'+n%26)) + s
		n = n/26 - 1
	}
	return prefix + s
}

// FillDiskDefaults gives every disk its device, bus and target when empty: bus from the
// device, targets the lowest free names of the bus's prefix in order, after the targets
// users chose. The cloud-init cdrom (when ci is not nil) gets the next free sd* name.
// The plan and Build use this one function, so plans show what libvirt will get.
func FillDiskDefaults(disks []Disk, ci *CloudInit) {
	used := map[string]bool{}
	for _, d := range disks {
		if d.Target != "" {
			used[d.Target] = true
		}
	}
	if ci != nil && ci.Target != "" {
		used[ci.Target] = true
	}
	next := func(prefix string) string {
		for n := 0; ; n++ {
			t := TargetName(prefix, n)
			if !used[t] {
				used[t] = true
				return t
			}
		}
	}
	for i := range disks {
		d := &disks[i]
		if d.Device == "" {
			d.Device = DeviceDisk
		}
		if d.Bus == "" {
			d.Bus = DefaultBus(d.Device)
		}
		if d.Target == "" {
			d.Target = next(TargetPrefix(d.Bus))
		}
	}
	if ci != nil && ci.Target == "" {
		ci.Target = next("sd")
	}
}

// withDiskDefaults is s with its disks and seed copied and their defaults filled in,
// beside the disks of device_xml.
func withDiskDefaults(s Spec) Spec {
	s.Disks = slices.Clone(s.Disks)
	if s.CloudInit != nil {
		c := *s.CloudInit
		s.CloudInit = &c
	}
	FillDiskDefaultsBeside(s.Disks, s.CloudInit, s.DeviceXML)
	return s
}

// diskSource is what a disk points at as the user wrote it: the volume reference, else
// the network source, else the path. A volume key of a dir pool is its path, so
// volume_id = "/p/x.qcow2" and path = "/p/x.qcow2" are the same disk (e.g. after
// importing a domain made elsewhere).
func diskSource(d Disk) string {
	switch {
	case d.VolumeID != "":
		return d.VolumeID
	case d.Network != nil:
		return d.Network.key()
	}
	return d.Path
}

// SameDiskRefs reports whether two specs write every disk source the same way (not just
// point at the same file). When they do not, the definition's metadata needs rewriting
// even though the domain itself does not change.
func SameDiskRefs(a, b Spec) bool {
	if len(a.Disks) != len(b.Disks) || (a.CloudInit == nil) != (b.CloudInit == nil) ||
		a.CloudInit != nil && a.CloudInit.ID != b.CloudInit.ID { // the seed's reference is recorded too
		return false
	}
	for i := range a.Disks {
		if a.Disks[i].VolumeID != b.Disks[i].VolumeID {
			return false
		}
	}
	return true
}

func diskSourcePath(d *libvirtxml.DomainDisk) string {
	if d.Source == nil {
		return ""
	}
	switch {
	case d.Source.File != nil:
		return d.Source.File.File
	case d.Source.Block != nil:
		return d.Source.Block.Dev
	}
	return ""
}

// buildDisks is the disks of the spec, the seed, then the ones this family does not type
// and no spec disk replaces (typedDisk: floppies, empty cdrom trays, nvme or
// vhost-user disks, ...; parse skips them, device_xml holds them): a domain defined with
// one, as virsh users do, must not lose it on its first rewrite. The typed disks come
// first, so a caller building one disk finds it at [0].
func buildDisks(existing []libvirtxml.DomainDisk, disks []Disk, ci *CloudInit, fragments []string) []libvirtxml.DomainDisk {
	byTarget := map[string]libvirtxml.DomainDisk{}
	for _, e := range existing {
		if e.Target != nil {
			byTarget[e.Target.Dev] = e
		}
	}
	wanted := map[string]bool{}
	for _, dk := range disks {
		wanted[dk.Target] = true
	}
	if ci != nil {
		wanted[ci.Target] = true
	}
	var out []libvirtxml.DomainDisk
	for _, dk := range disks {
		out = append(out, buildDisk(byTarget, dk, false))
	}
	if ci != nil {
		out = append(out, buildDisk(byTarget, Disk{Path: ci.Path, Device: DeviceCDROM, Bus: "sata", Target: ci.Target, Format: "raw"}, true))
	}
	for _, e := range existing {
		if (e.Target == nil || !wanted[e.Target.Dev]) && (!typedDisk(&e) || claimedByFragment(&e, fragments)) {
			out = append(out, e)
		}
	}
	return out
}

func buildDisk(byTarget map[string]libvirtxml.DomainDisk, dk Disk, readonly bool) libvirtxml.DomainDisk {
	x, ok := byTarget[dk.Target]
	if !ok || x.Target.Bus != dk.Bus || x.Device != dk.Device {
		x = libvirtxml.DomainDisk{}
	}
	x.Device = dk.Device
	if x.Driver == nil {
		x.Driver = &libvirtxml.DomainDiskDriver{}
	}
	x.Driver.Name = "qemu"
	x.Driver.Type = dk.Format
	if x.Driver.Type == "" {
		x.Driver.Type = "raw"
	}
	besideSource := ok && x.Auth != nil // auth where an older definition has it
	x.Auth = nil                        // written inside a network <source>
	prev := x.Source
	switch {
	case dk.Network != nil:
		x.Source = networkSourceXML(dk.Network)
		if besideSource {
			x.Auth, x.Source.Network.Auth = x.Source.Network.Auth, nil // stays where it was
		}
	case strings.HasPrefix(dk.Path, "/dev/"):
		x.Source = &libvirtxml.DomainDiskSource{Block: &libvirtxml.DomainDiskSourceBlock{Dev: dk.Path}}
	default:
		x.Source = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: dk.Path}}
	}
	if prev != nil && ok && dk.Network == nil && keepSnapshotOverlay(&libvirtxml.DomainDisk{Source: prev, BackingStore: x.BackingStore}, dk.Path) {
		x.Source, x.Driver.Type = prev, "qcow2" // the guest writes into a snapshot's overlay until the snapshot is deleted
	}
	buildEncryption(&x, dk, prev)
	x.BackingStore = nil // libvirt reads the chain from the image itself
	x.Target = &libvirtxml.DomainDiskTarget{Dev: dk.Target, Bus: dk.Bus}
	if readonly || readOnly(dk) {
		x.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
	} else {
		x.ReadOnly = nil
	}
	x.Boot = nil
	if dk.BootOrder > 0 {
		x.Boot = &libvirtxml.DomainDeviceBoot{Order: dk.BootOrder}
	}
	x.Alias = nil
	buildTuning(&x, dk)
	return x
}

// DiskFormats are the image formats `format` takes; DiskBuses the buses `bus` takes.
var (
	DiskFormats       = []string{"qcow2", "raw", "vmdk", "qed", "vdi", "vpc"}
	DiskBuses         = []string{"virtio", "sata", "scsi", "ide", "usb"}
	DiskTargetPattern = regexp.MustCompile(`^(vd|sd|hd|xvd)[a-z]+$`)
)
