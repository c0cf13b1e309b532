// Package domainxml builds and reads libvirt domain XML for libvirt_domain. It is pure:
// no libvirt calls, no Terraform types. Build turns a Spec (what the user controls) into
// a libvirtxml.Domain, either fresh (with the defaults users expect: virtio disk and NIC,
// a pty serial console, the guest-agent channel, VNC on 127.0.0.1) or merged onto the
// domain's current definition so that devices and settings the user does not manage
// survive an update. Parse reads a Spec back from any domain XML, ignoring everything
// libvirt fills in or rewrites (MACs it chose, machine type expansion, CPU model,
// device addresses, aliases, vnet names, loader and nvram paths).
package domainxml

import (
	"fmt"
	"strings"
)

// Defaults and well-known names.
const (
	AgentChannel  = "org.qemu.guest_agent.0"
	FirmwareBIOS  = "bios"
	FirmwareUEFI  = "uefi"
	DeviceDisk    = "disk"
	DeviceCDROM   = "cdrom"
	GraphicsVNC   = "vnc"
	GraphicsSpice = "spice"
	GraphicsNone  = "none"
	DefaultListen = "127.0.0.1"
	DefaultNIC    = "virtio"
)

// Spec is the part of a domain the user controls.
type Spec struct {
	Name      string
	UUID      string // empty: libvirt chooses
	Type      string // kvm or qemu
	VCPU      uint
	MaxVCPU   uint // 0: same as VCPU (no hot-add headroom)
	MemoryMiB uint64
	// MaxMemoryMiB is the <memory> ceiling; 0: same as MemoryMiB.
	MaxMemoryMiB uint64
	Machine      string // empty: libvirt's default for the arch
	CPUMode      string // host-passthrough, host-model, custom; empty: libvirt's default
	CPUModel     string // for custom
	Firmware     string // bios (or empty) / uefi
	Disks        []Disk
	// CloudInit is the cloud-init seed, attached as a read-only SATA cdrom.
	CloudInit *CloudInit
	// Ignition is an Ignition config handed to the guest through QEMU's fw_cfg.
	Ignition   *Ignition
	Interfaces []Interface
	Graphics   Graphics
	QemuAgent  bool
}

// Disk is one disk or cdrom. Exactly one of VolumeID and Path names the source; Path is
// always the resolved file (what goes into the XML).
type Disk struct {
	VolumeID  string // user's reference (volume key or pool/name), recorded in metadata
	Path      string
	Device    string // disk or cdrom
	Bus       string // virtio, sata, scsi, ide, usb
	Target    string // vda, sda, ...
	Format    string // qcow2, raw, ... (driver type); empty: libvirt probes nothing, raw
	BootOrder uint
}

// CloudInit is the seed ISO: the user's reference, its path and the target it sits on.
type CloudInit struct {
	ID     string
	Path   string
	Target string
}

// IgnitionFWCfgName is the fw_cfg entry Fedora CoreOS and Flatcar read their Ignition
// config from.
const IgnitionFWCfgName = "opt/com.coreos/config"

// Ignition is the Ignition config file: the user's reference (a volume key or
// <pool>/<name>) and its path on the host (what goes into the XML).
type Ignition struct {
	ID   string
	Path string
}

// Interface is one NIC on a libvirt network or a host bridge.
type Interface struct {
	Network string
	Bridge  string
	MAC     string // empty: libvirt chooses
	Model   string
}

// Graphics is the console: vnc, spice or none, listening on Listen.
type Graphics struct {
	Type   string
	Listen string
}

// DefaultBus is virtio for a disk and sata for a cdrom.
func DefaultBus(device string) string {
	if device == DeviceCDROM {
		return "sata"
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

// Change is how an update reaches a domain.
type Change string

const (
	ChangeNone       Change = "none"       // nothing in the definition changes
	ChangeLive       Change = "live"       // vcpu/memory within headroom: live and persistent, no restart
	ChangeRestart    Change = "restart"    // definition rewritten, running domain restarted gracefully
	ChangeDefinition Change = "definition" // definition rewritten, domain not running (or being stopped)
)

// Classify says how going from old to next reaches the domain, given whether it is
// running before and is to be running after. Unknown values must already be set so that
// they compare unequal (the caller marks them).
func Classify(old, next Spec, runningBefore, runningAfter bool) Change {
	structural := !sameStructure(old, next)
	sizing := old.VCPU != next.VCPU || old.MemoryMiB != next.MemoryMiB
	switch {
	case !structural && !sizing:
		return ChangeNone
	case !runningBefore || !runningAfter:
		return ChangeDefinition
	case structural:
		return ChangeRestart
	case next.VCPU < old.VCPU:
		// Unplugging vCPUs needs the guest's cooperation and may never finish: restart.
		return ChangeRestart
	case next.VCPU > maxOr(old.MaxVCPU, old.VCPU) || next.MemoryMiB > maxOr64(old.MaxMemoryMiB, old.MemoryMiB):
		return ChangeRestart
	default:
		return ChangeLive
	}
}

func maxOr(v, def uint) uint {
	if v == 0 {
		return def
	}
	return v
}

func maxOr64(v, def uint64) uint64 {
	if v == 0 {
		return def
	}
	return v
}

// EffectiveMaxVCPU and EffectiveMaxMemoryMiB are the ceilings written to the XML.
func (s Spec) EffectiveMaxVCPU() uint { return max(maxOr(s.MaxVCPU, s.VCPU), s.VCPU) }
func (s Spec) EffectiveMaxMemoryMiB() uint64 {
	return max(maxOr64(s.MaxMemoryMiB, s.MemoryMiB), s.MemoryMiB)
}

// sameStructure compares everything but vcpu and memory. Sources compare by the user's
// reference when there is one (the resolved path may not be known at plan time).
func sameStructure(a, b Spec) bool {
	if a.Name != b.Name || !strings.EqualFold(a.UUID, b.UUID) || a.Type != b.Type ||
		a.EffectiveMaxVCPU() != b.EffectiveMaxVCPU() || a.EffectiveMaxMemoryMiB() != b.EffectiveMaxMemoryMiB() ||
		!SameMachine(a.Machine, b.Machine) || a.CPUMode != b.CPUMode || a.CPUModel != b.CPUModel ||
		normFirmware(a.Firmware) != normFirmware(b.Firmware) || a.QemuAgent != b.QemuAgent ||
		!sameGraphics(a.Graphics, b.Graphics) || len(a.Disks) != len(b.Disks) || len(a.Interfaces) != len(b.Interfaces) {
		return false
	}
	if (a.CloudInit == nil) != (b.CloudInit == nil) {
		return false
	}
	if a.CloudInit != nil && (a.CloudInit.ID != b.CloudInit.ID ||
		a.CloudInit.Target != "" && b.CloudInit.Target != "" && a.CloudInit.Target != b.CloudInit.Target) {
		return false
	}
	if (a.Ignition == nil) != (b.Ignition == nil) || a.Ignition != nil && a.Ignition.ID != b.Ignition.ID {
		return false
	}
	for i := range a.Disks {
		x, y := a.Disks[i], b.Disks[i]
		if diskSource(x) != diskSource(y) || x.Device != y.Device ||
			x.Bus != y.Bus || x.Target != y.Target || x.BootOrder != y.BootOrder ||
			(x.Format != "" && y.Format != "" && x.Format != y.Format) {
			return false
		}
	}
	for i := range a.Interfaces {
		x, y := a.Interfaces[i], b.Interfaces[i]
		if x.Network != y.Network || x.Bridge != y.Bridge || x.Model != y.Model ||
			(x.MAC != "" && y.MAC != "" && !strings.EqualFold(x.MAC, y.MAC)) {
			return false
		}
	}
	return true
}

// sameGraphics: without graphics, where it would listen does not matter.
func sameGraphics(a, b Graphics) bool {
	if a.Type == GraphicsNone && b.Type == GraphicsNone {
		return true
	}
	return a == b
}

// diskSource is what a disk points at as the user wrote it: the volume reference, else
// the path. A volume key of a dir pool is its path, so volume_id = "/p/x.qcow2" and
// path = "/p/x.qcow2" are the same disk (e.g. after importing a domain made elsewhere).
func diskSource(d Disk) string {
	if d.VolumeID != "" {
		return d.VolumeID
	}
	return d.Path
}

// SameDiskRefs reports whether two specs write every disk source the same way (not just
// point at the same file). When they do not, the definition's metadata needs rewriting
// even though the domain itself does not change.
func SameDiskRefs(a, b Spec) bool {
	if len(a.Disks) != len(b.Disks) {
		return false
	}
	for i := range a.Disks {
		if a.Disks[i].VolumeID != b.Disks[i].VolumeID {
			return false
		}
	}
	return true
}

func normFirmware(f string) string {
	if f == "" {
		return FirmwareBIOS
	}
	return f
}

// SameMachine reports whether a machine type the user wrote (an alias like q35 or pc)
// and one libvirt reports (its expansion, e.g. pc-q35-7.2) name the same machine.
func SameMachine(user, libvirt string) bool {
	if user == "" || libvirt == "" || user == libvirt {
		return true
	}
	alias := map[string]string{"q35": "pc-q35-", "pc": "pc-i440fx-"}
	if p, ok := alias[user]; ok && strings.HasPrefix(libvirt, p) {
		return true
	}
	if p, ok := alias[libvirt]; ok && strings.HasPrefix(user, p) {
		return true
	}
	return false
}

// Validate checks what the schema cannot: sources, devices and buses.
func (s Spec) Validate() error {
	if s.VCPU == 0 {
		return fmt.Errorf("vcpu must be at least 1")
	}
	if s.MaxVCPU != 0 && s.MaxVCPU < s.VCPU {
		return fmt.Errorf("vcpu (%d) is more than max_vcpu (%d)", s.VCPU, s.MaxVCPU)
	}
	if s.MaxMemoryMiB != 0 && s.MaxMemoryMiB < s.MemoryMiB {
		return fmt.Errorf("memory_mib (%d) is more than max_memory_mib (%d)", s.MemoryMiB, s.MaxMemoryMiB)
	}
	seen := map[string]bool{}
	for i, d := range s.Disks {
		if d.Path == "" {
			return fmt.Errorf("disk %d has no source", i)
		}
		if d.Target != "" && seen[d.Target] {
			return fmt.Errorf("disk target %s is used twice", d.Target)
		}
		seen[d.Target] = true
	}
	for i, n := range s.Interfaces {
		if (n.Network == "") == (n.Bridge == "") {
			return fmt.Errorf("network_interface %d needs exactly one of network and bridge", i)
		}
	}
	return nil
}
