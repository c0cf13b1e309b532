package domainxml

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Clone modes of libvirt_clone.
const (
	CloneLinked = "linked"
	CloneFull   = "full"
)

// SourceDisk is one writable disk of a clone's source, as its definition says.
type SourceDisk struct {
	Target string // vda, sdb, ...
	Path   string // the file (for a <source pool volume> disk: empty, see Pool/Volume)
	Pool   string // <disk type='volume'>: the pool
	Volume string // <disk type='volume'>: the volume name
	Format string // driver type (qcow2, raw, ...); empty when the definition names none
}

// SourceDisks lists the disks of a source definition that a clone copies, in order:
// every <disk device='disk'> backed by a file or a pool volume. Cdroms are not copied
// (a clone gets its own cloud-init seed or none). Block devices, network disks and
// other devices are refused: a clone can only copy what libvirt's storage API copies.
func SourceDisks(d *libvirtxml.Domain) ([]SourceDisk, error) {
	var out []SourceDisk
	if d.Devices == nil {
		return nil, nil
	}
	for _, x := range d.Devices.Disks {
		dev := x.Device
		if dev == "" {
			dev = DeviceDisk
		}
		if dev == DeviceCDROM {
			continue
		}
		target := ""
		if x.Target != nil {
			target = x.Target.Dev
		}
		if dev != DeviceDisk {
			return nil, fmt.Errorf("disk %s is a %s: a clone copies only disks and leaves cdroms out", target, dev)
		}
		sd := SourceDisk{Target: target}
		if x.Driver != nil {
			sd.Format = x.Driver.Type
		}
		switch {
		case x.Source == nil:
			return nil, fmt.Errorf("disk %s has no source", target)
		case x.Source.File != nil && x.Source.File.File != "":
			sd.Path = x.Source.File.File
		case x.Source.Volume != nil:
			sd.Pool, sd.Volume = x.Source.Volume.Pool, x.Source.Volume.Volume
		case x.Source.Block != nil:
			return nil, fmt.Errorf("disk %s is the block device %s: a clone can copy only file-backed disks (volumes of a pool)", target, x.Source.Block.Dev)
		default:
			return nil, fmt.Errorf("disk %s is neither a file nor a pool volume (network or other storage): a clone cannot copy it", target)
		}
		if target == "" {
			return nil, fmt.Errorf("disk %s has no target device name", sd.Path)
		}
		out = append(out, sd)
	}
	return out, nil
}

// CloneSpec is what a clone changes in its source's definition.
type CloneSpec struct {
	Name string
	UUID string // the clone's new UUID (required)
	// VCPU and MemoryMiB override the source's current values (0: keep them). The
	// source's ceilings (<vcpu> maximum, <memory>) stay, so its hot-add headroom does too.
	VCPU      uint
	MemoryMiB uint64
	// Disks are the clone's own disks, one for every SourceDisks entry, by target.
	Disks []CloneDisk
	// MACs are the clone's MACs, one per interface of the source, in order.
	MACs []string
	// NVRAM is the path of the clone's own UEFI varstore; required for a UEFI source.
	NVRAM string
	// CloudInit is the clone's own seed (nil: none); Target is filled in when empty.
	CloudInit *CloudInit
	Meta      CloneMeta
}

// CloneDisk is one disk of the clone: the file it sits on and its format.
type CloneDisk struct {
	Target string
	Path   string
	Format string
	Key    string // volume key, recorded in libvirt_domain's metadata as the disk's volume
}

// CloneMeta is what libvirt_clone records about a clone in its definition.
type CloneMeta struct {
	SourceID   string          `xml:"source,attr"`      // source_domain_id as the user wrote it
	SourceUUID string          `xml:"source-uuid,attr"` // the source's UUID at clone time
	Mode       string          `xml:"mode,attr"`
	Pool       string          `xml:"pool,attr"`
	Running    string          `xml:"source-state,attr"` // the source's state while it was cloned
	Disks      []CloneMetaDisk `xml:"disk"`
}

// CloneMetaDisk is one disk the clone owns (deleted with it).
type CloneMetaDisk struct {
	Target  string `xml:"target,attr"`
	Key     string `xml:"key,attr"`
	Pool    string `xml:"pool,attr"`
	Name    string `xml:"name,attr"`
	Path    string `xml:"path,attr"`
	Backing string `xml:"backing,attr"`
}

// CloneVolumeName is the name of a clone's disk on target: <name>-<target>.qcow2.
func CloneVolumeName(name, target string) string { return name + "-" + target + ".qcow2" }

// CloneNVRAMPath is the clone's varstore: in the directory of the source's, named as
// libvirt names varstores (<name>_VARS.fd). Without a source varstore path, libvirt's
// default directory for the system instance.
func CloneNVRAMPath(sourceNVRAM, name string) string {
	dir := "/var/lib/libvirt/qemu/nvram"
	if i := strings.LastIndex(sourceNVRAM, "/"); i > 0 {
		dir = sourceNVRAM[:i]
	}
	return dir + "/" + name + "_VARS.fd"
}

// CloneMACs derives n MACs for a clone from its name (52:54:00 and three bytes of
// sha256(name/index)): stable for a name, so a clone replaced under the same name gets
// its addresses back. None is in avoid (the source's MACs) nor repeated.
func CloneMACs(name string, n int, avoid []string) []string {
	used := map[string]bool{}
	for _, a := range avoid {
		used[strings.ToLower(a)] = true
	}
	var out []string
	for i := 0; i < n; i++ {
		for salt := 0; ; salt++ {
			seed := fmt.Sprintf("%s/%d", name, i)
			if salt > 0 {
				seed = fmt.Sprintf("%s/%d/%d", name, i, salt)
			}
			sum := sha256.Sum256([]byte(seed))
			mac := fmt.Sprintf("52:54:00:%02x:%02x:%02x", sum[0], sum[1], sum[2])
			if !used[mac] {
				used[mac] = true
				out = append(out, mac)
				break
			}
		}
	}
	return out
}

// Firmware reads the firmware of a definition: bios or uefi.
func Firmware(d *libvirtxml.Domain) string { return parseFirmware(d.OS) }

// NVRAMPath is the varstore path a definition names (empty when libvirt chooses it).
func NVRAMPath(d *libvirtxml.Domain) string {
	if d.OS == nil || d.OS.NVRam == nil {
		return ""
	}
	if d.OS.NVRam.NVRam != "" {
		return d.OS.NVRam.NVRam
	}
	if s := d.OS.NVRam.Source; s != nil && s.File != nil {
		return s.File.File
	}
	return ""
}

// Ceilings are a definition's maximum vCPUs and memory (MiB) and its current values.
func Ceilings(d *libvirtxml.Domain) (vcpu, maxVCPU uint, mem, maxMem uint64) {
	p, err := FromDomain(d)
	if err != nil {
		return 0, 0, 0, 0
	}
	return p.Spec.VCPU, p.Spec.EffectiveMaxVCPU(), p.Spec.MemoryMiB, p.Spec.EffectiveMaxMemoryMiB()
}

// DeriveClone is the clone's definition: a copy of the source's persistent definition
// with a new name, UUID and MACs, its own disks, its own nvram path, no cdrom of the
// source (the clone's own seed instead, when given), no Ignition config, no fixed
// console ports or socket paths, and the source's ceilings with the given overrides.
func DeriveClone(src *libvirtxml.Domain, s CloneSpec) (*libvirtxml.Domain, error) {
	if s.Name == "" || s.UUID == "" {
		return nil, errors.New("a clone needs a name and a UUID")
	}
	d, err := clone(src)
	if err != nil {
		return nil, err
	}
	d.ID = nil
	d.Name, d.UUID = s.Name, s.UUID
	if d.GenID != nil {
		d.GenID = &libvirtxml.DomainGenID{} // a new generation id, chosen by libvirt
	}
	if d.Devices == nil {
		d.Devices = &libvirtxml.DomainDeviceList{}
	}

	// Sizing: the source's ceilings, current values overridden within them.
	cur, maxV, mem, maxM := Ceilings(src)
	srcVCPU := cur
	if s.VCPU != 0 {
		if s.VCPU > maxV {
			return nil, fmt.Errorf("clone %s: vcpu %d is above the source's maximum of %d vCPUs (its max_vcpu hot-add ceiling, which a clone keeps)", s.Name, s.VCPU, maxV)
		}
		cur = s.VCPU
	}
	if s.MemoryMiB != 0 {
		if s.MemoryMiB > maxM {
			return nil, fmt.Errorf("clone %s: memory_mib %d is above the source's maximum of %d MiB (its max_memory_mib ceiling, which a clone keeps)", s.Name, s.MemoryMiB, maxM)
		}
		mem = s.MemoryMiB
	}
	if cur != srcVCPU {
		d.VCPUs = nil // per-vCPU states describe the old count; libvirt writes them anew
	}
	SetSizing(d, Spec{VCPU: cur, MaxVCPU: maxV, MemoryMiB: mem, MaxMemoryMiB: maxM})

	// Disks: the clone's own; cdroms of the source dropped.
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
			return nil, fmt.Errorf("clone %s: a disk of the source has no target", s.Name)
		}
		cd, ok := byTarget[x.Target.Dev]
		if !ok {
			return nil, fmt.Errorf("clone %s: no clone disk for the source's disk %s", s.Name, x.Target.Dev)
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
		return nil, fmt.Errorf("clone %s: disk %s is not a disk of the source", s.Name, t)
	}
	var ci *CloudInit
	if s.CloudInit != nil {
		c := *s.CloudInit
		ci = &c
		if ci.Target == "" {
			for n := 0; ; n++ {
				if t := TargetName("sd", n); !used[t] {
					ci.Target = t
					break
				}
			}
		}
		disks = append(disks, buildDisk(nil, Disk{Path: ci.Path, Device: DeviceCDROM, Bus: "sata", Target: ci.Target, Format: "raw"}, true))
	}
	d.Devices.Disks = disks

	// NICs: new MACs; vnet names and aliases are libvirt's.
	if len(s.MACs) != len(d.Devices.Interfaces) {
		return nil, fmt.Errorf("clone %s: %d MACs for %d interfaces", s.Name, len(s.MACs), len(d.Devices.Interfaces))
	}
	for i := range d.Devices.Interfaces {
		x := &d.Devices.Interfaces[i]
		x.MAC = &libvirtxml.DomainInterfaceMAC{Address: strings.ToLower(s.MACs[i])}
		x.Target, x.Alias = nil, nil
	}

	// UEFI: the clone's own varstore.
	if Firmware(d) == FirmwareUEFI {
		if s.NVRAM == "" {
			return nil, fmt.Errorf("clone %s: the source boots UEFI, so the clone needs its own nvram path", s.Name)
		}
		if d.OS.NVRam == nil {
			d.OS.NVRam = &libvirtxml.DomainNVRam{}
		}
		if d.OS.NVRam.Source != nil && d.OS.NVRam.Source.File != nil {
			d.OS.NVRam.Source.File.File = s.NVRAM
			d.OS.NVRam.NVRam = ""
		} else {
			d.OS.NVRam.Source = nil
			d.OS.NVRam.NVRam = s.NVRAM
		}
	}

	// Nothing that would collide with the source: fixed console ports, socket paths.
	for i := range d.Devices.Graphics {
		g := &d.Devices.Graphics[i]
		if g.VNC != nil && g.VNC.Port > 0 {
			g.VNC.Port, g.VNC.AutoPort = -1, "yes"
		}
		if g.Spice != nil && g.Spice.Port > 0 {
			g.Spice.Port, g.Spice.TLSPort, g.Spice.AutoPort = -1, 0, "yes"
		}
	}
	for i := range d.Devices.Channels {
		if src := d.Devices.Channels[i].Source; src != nil && src.UNIX != nil {
			src.UNIX.Path = ""
		}
		d.Devices.Channels[i].Alias = nil
	}
	d.SysInfo = stripSMBIOSUUID(buildSysInfo(d.SysInfo, nil, nil))

	// Metadata: libvirt_domain's (disk references, the seed) and the clone's own.
	var spec Spec
	for _, cd := range s.Disks {
		spec.Disks = append(spec.Disks, Disk{VolumeID: cd.Key, Path: cd.Path, Target: cd.Target})
	}
	spec.CloudInit = ci
	if err := writeRecord(d, spec); err != nil {
		return nil, err
	}
	if err := SetMetadata(d, CloneMetadataNS, "clone", s.Meta); err != nil {
		return nil, err
	}
	return d, nil
}

// stripSMBIOSUUID drops a fixed SMBIOS system uuid: libvirt refuses one that differs
// from the domain's UUID.
func stripSMBIOSUUID(in []libvirtxml.DomainSysInfo) []libvirtxml.DomainSysInfo {
	for i := range in {
		sm := in[i].SMBIOS
		if sm == nil || sm.System == nil {
			continue
		}
		var keep []libvirtxml.DomainSysInfoEntry
		for _, e := range sm.System.Entry {
			if e.Name != "uuid" {
				keep = append(keep, e)
			}
		}
		sm.System.Entry = keep
	}
	return in
}

// ParseCloneMeta reads the clone's record from a definition; ok is false for a domain
// libvirt_clone did not make.
func ParseCloneMeta(d *libvirtxml.Domain) (*CloneMeta, bool) {
	var m CloneMeta
	if ok, err := GetMetadata(d, CloneMetadataNS, "clone", &m); !ok || err != nil {
		return nil, false
	}
	return &m, true
}
