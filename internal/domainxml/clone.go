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

// Ceilings are a definition's maximum vCPUs and memory (KiB) and its current values.
func Ceilings(d *libvirtxml.Domain) (vcpu, maxVCPU uint, mem, maxMem uint64) {
	s := Sizing(d)
	return s.VCPU, s.EffectiveMaxVCPU(), s.MemoryKiB, s.EffectiveMaxMemoryKiB()
}

// DeriveClone is the clone's definition: a copy of the source's persistent definition
// with a new name, UUID and generation id, in which every family rewrites what the clone
// must not share with its source (its derive hook): the sizing (the source's ceilings
// with the given overrides), its own disks and no cdrom of the source (the clone's own
// seed instead, when given), new MACs, its own nvram, no fixed console ports, socket
// paths or vsock CID, no SMBIOS uuid, no Ignition config, libvirt_domain's record of the
// clone's disks; then the clone's own record (s.Meta).
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
	for _, f := range families {
		if f.derive == nil {
			continue
		}
		if err := f.derive(d, &s); err != nil {
			return nil, err
		}
	}
	if err := SetMetadata(d, CloneMetadataNS, "clone", s.Meta); err != nil {
		return nil, err
	}
	return d, nil
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
