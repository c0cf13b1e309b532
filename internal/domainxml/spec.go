// Package domainxml builds and reads libvirt domain XML for every VM-shaped resource
// (libvirt_domain, libvirt_clone, libvirt_cluster_machine). It is pure: no libvirt calls,
// no Terraform types. Build turns a Spec (what the user controls) into a
// libvirtxml.Domain, either fresh (with the defaults users expect: virtio disk and NIC,
// a pty serial console, the guest-agent channel, VNC on 127.0.0.1) or merged onto the
// domain's current definition so that devices and settings the user does not manage
// survive an update. FromDomain reads a Spec back from any domain XML, ignoring
// everything libvirt fills in or rewrites (MACs it chose, machine type expansion, CPU
// model, device addresses, aliases, vnet names, loader and nvram paths). Classify says
// how a change reaches a running domain.
//
// Each part of a domain is a family in a file of its own (family.go lists them): its
// Spec type and how it is validated, built, parsed and compared. This package is the
// only place that writes a domain's sizes (SetSizing), devices and <metadata> records
// (SetMetadata).
package domainxml

import "errors"

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

// Spec is the part of a domain the user controls. Each field but the identity belongs to
// a family (sizing.go, iothreads.go, os.go, cpu.go, pinning.go, memory_backing.go, disk.go, interface.go, hostdev.go, graphics.go, agent.go,
// ignition.go, filesystem.go).
type Spec struct {
	Name string
	UUID string // empty: libvirt chooses
	Type string // kvm or qemu

	VCPU    uint
	MaxVCPU uint // 0: same as VCPU (no hot-add headroom)
	// MemoryKiB is <currentMemory>, MaxMemoryKiB the <memory> ceiling (0: same as
	// MemoryKiB), both in KiB as libvirt counts them (sizing.go).
	MemoryKiB    uint64
	MaxMemoryKiB uint64
	// VCPUPlacement (static, auto) and VCPUCPUSet are <vcpu placement> and <vcpu cpuset>,
	// the host CPUs vCPUs run on unless pinned (sizing.go); empty keeps the domain's (a
	// fresh one: static, no cpuset).
	VCPUPlacement string
	VCPUCPUSet    string
	// IOThreads is the <iothreads> count; nil: keep what the domain has (resources that
	// do not manage it, and libvirt_domain before it is known).
	IOThreads *uint

	Machine string // empty: libvirt's default for the arch (virt on ARM: arch.go)
	// Arch and Emulator (arch.go): the guest architecture and QEMU binary; empty keeps the
	// definition's (a fresh one: the host's arch, libvirt's emulator for it).
	Arch     string
	Emulator string
	Firmware string // bios (or empty) / uefi

	// Loader and NVRam (loader.go): firmware chosen by hand; nil keeps the definition's.
	Loader *Loader
	NVRam  *NVRam

	CPUMode  string // host-passthrough, host-model, custom; empty: libvirt's default
	CPUModel string // for custom
	// CPUFallback (allow, forbid) is the custom model's fallback; CPUCheck (none, partial,
	// full) is <cpu check>. Empty keeps the domain's while the mode (and model) stay
	// (cpu.go).
	CPUFallback string
	CPUCheck    string
	// CPUTopology, CPUFeatures (feature → policy) and NUMACells are the rest of <cpu>
	// (cpu_topology.go); unset, the definition has none.
	CPUTopology *CPUTopology
	CPUFeatures map[string]string
	NUMACells   []NUMACell
	// CPUPinning (vCPU → host cpuset) and EmulatorPinning are <cputune>'s pins (pinning.go).
	CPUPinning      map[uint]string
	EmulatorPinning string
	// MemoryBacking is <memoryBacking> (memory_backing.go); nil: none, or the shared
	// memory virtiofs shares need.
	MemoryBacking *MemoryBacking

	Disks []Disk
	// CloudInit is the cloud-init seed, attached as a read-only SATA cdrom.
	CloudInit  *CloudInit
	Interfaces []Interface
	Hostdevs   []Hostdev
	Graphics   Graphics
	QemuAgent  bool
	// Chardevs are the serial ports, consoles and channels beside the agent's (chardev.go).
	Chardevs Chardevs
	// DeviceXML are raw device fragments for what no family models (device_xml.go).
	DeviceXML []string
	// DeviceXMLDrop are fragments the prior state held that DeviceXML no longer does:
	// their devices go on update like those the record lists (an import's fragments are
	// in no record until the first apply). DroppedDeviceXML computes it.
	DeviceXMLDrop []string
	// ExtraXML are raw top-level element fragments for what no family models
	// (extra_xml.go); read back, every unmodelled top-level element of the definition
	// (extra_xml_read.go). ExtraXMLWas are the fragments the previous apply wrote: Build
	// takes them away with the record's when the list no longer has them (the provider's
	// Update sets it from state: an imported domain has no record yet); read back, the
	// record's.
	ExtraXML    []string
	ExtraXMLWas []string
	// QEMU is the QEMU command-line passthrough; nil keeps the definition's (qemu_commandline.go).
	QEMU *QEMUCommandline
	// Ignition is an Ignition config handed to the guest through QEMU's fw_cfg.
	Ignition *Ignition
	// Filesystems are the shared folders (filesystem.go).
	Filesystems []Filesystem
	// GuestDevices: video, rng, watchdog, panic, vsock, memballoon, sound, inputs (guest_devices.go).
	GuestDevices GuestDevices

	// Describe and Lifecycle are only libvirt_domain's (describe.go, lifecycle.go).
	Describe  Describe
	Lifecycle Lifecycle
	Features  *Features         // features.go; nil keeps the domain's
	Boot      BootOS            // boot_os.go
	Kernel    *Kernel           // boot_kernel.go; nil keeps the domain's, an empty one removes it
	SMBIOS    *SMBIOS           // smbios.go; nil keeps the domain's
	FWCfg     map[string]string // smbios.go (written by ignition.go); nil keeps the domain's
	// FWCfgFiles are fw_cfg entries whose content is a host file (<entry file=>), name →
	// path (smbios.go); nil keeps the domain's.
	FWCfgFiles map[string]string
	// SecureBoot and TPM: secure_boot.go, tpm.go; nil keeps the domain's.
	SecureBoot *SecureBoot
	TPM        *TPM

	// virtiofsMemory: Build gave the domain the shared memory its virtiofs shares need
	// (the record notes it).
	virtiofsMemory bool
}

// Validate checks what the schema cannot, family by family.
func (s Spec) Validate() error {
	var errs []error
	for _, f := range families {
		errs = append(errs, f.validate(&s))
	}
	return errors.Join(errs...)
}

// Change is how an update reaches a domain.
type Change string

const (
	ChangeNone       Change = "none"       // nothing in the definition changes
	ChangeLive       Change = "live"       // vcpu/memory within headroom, disk iotune: live and persistent, no restart
	ChangeRestart    Change = "restart"    // definition rewritten, running domain restarted gracefully
	ChangeDefinition Change = "definition" // definition rewritten, domain not running (or being stopped)
)

// Classify is PlanChange's method alone, for callers that make no live operations
// (libvirt_clone and libvirt_cluster_machine change only sizing).
func Classify(old, next Spec, runningBefore, runningAfter bool) Change {
	return PlanChange(old, next, runningBefore, runningAfter, nil).Change
}
