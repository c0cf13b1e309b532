package domainxml

import (
	"fmt"
	"path/filepath"
	"regexp"

	"libvirt.org/go/libvirtxml"
)

// Guest architecture and emulator binary (<os><type arch>, <devices><emulator>). Empty
// keeps what the definition has; a fresh definition without them gets libvirt's defaults
// (the host's arch, the emulator its capabilities name for it). The defaults a fresh
// definition starts from are x86-shaped (acpi + apic, q35/pc, libvirt's qemu64 CPU);
// archDefaults gives the ones another architecture needs to define and start:
// aarch64 and armv7l get the `virt` machine (libvirt's own default is the first machine
// QEMU lists, integratorcp, a one-CPU board), no apic, acpi only with UEFI (libvirt
// refuses "ACPI requires UEFI on this architecture"), and a 64-bit CPU (libvirt's default
// on virt is cortex-a15, a 32-bit core that no aarch64 kernel runs on).

const (
	ArchX86_64  = "x86_64"
	ArchAArch64 = "aarch64"
)

var archName = regexp.MustCompile(`^[a-z0-9_]+$`)

// IsX86 reports whether arch is an x86 architecture; empty (the host's, which is what
// every definition before arch had) counts as x86.
func IsX86(arch string) bool { return arch == "" || arch == ArchX86_64 || arch == "i686" }

func isARM(arch string) bool { return arch == ArchAArch64 || arch == "armv7l" }

// DefaultMachine is the machine type a fresh definition of arch gets when none is set:
// "" (libvirt's default) but for ARM, where it is virt.
func DefaultMachine(arch string) string {
	if isARM(arch) {
		return "virt"
	}
	return ""
}

// DefaultCPU is the CPU a fresh definition of arch and domain type gets when cpu_mode is
// unset: nil (libvirt's) on x86; on ARM the host's CPU under kvm, else an emulated 64-bit
// core (cortex-a57 for aarch64, cortex-a15 for armv7l).
func DefaultCPU(arch, domainType string) *libvirtxml.DomainCPU {
	switch {
	case !isARM(arch):
		return nil
	case domainType == "kvm":
		return &libvirtxml.DomainCPU{Mode: "host-passthrough"}
	case arch == "armv7l":
		return &libvirtxml.DomainCPU{Mode: "custom", Match: "exact", Model: &libvirtxml.DomainCPUModel{Value: "cortex-a15", Fallback: "forbid"}}
	default:
		return &libvirtxml.DomainCPU{Mode: "custom", Match: "exact", Model: &libvirtxml.DomainCPUModel{Value: "cortex-a57", Fallback: "forbid"}}
	}
}

// defaultFeatures are the <features> of a fresh definition: acpi (the power button
// graceful shutdowns use) and apic on x86; on aarch64 acpi only with UEFI; none elsewhere.
func defaultFeatures(s *Spec) *libvirtxml.DomainFeatureList {
	switch {
	case IsX86(s.Arch):
		return &libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}, APIC: &libvirtxml.DomainFeatureAPIC{}}
	case s.Arch == ArchAArch64 && normFirmware(s.Firmware) == FirmwareUEFI:
		return &libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}}
	}
	return nil
}

var archFamily = family{
	name: "arch",
	validate: func(s *Spec) error {
		if s.Arch != "" && !archName.MatchString(s.Arch) {
			return fmt.Errorf("arch %q: must be an architecture name such as x86_64 or aarch64", s.Arch)
		}
		if s.Emulator != "" && !filepath.IsAbs(s.Emulator) {
			return fmt.Errorf("emulator %q: must be an absolute path to the QEMU binary on the host", s.Emulator)
		}
		if s.Arch == ArchAArch64 && s.Features != nil && s.Features.ACPI != nil && *s.Features.ACPI && normFirmware(s.Firmware) != FirmwareUEFI {
			return fmt.Errorf("features.acpi on aarch64 needs firmware = \"uefi\" (libvirt: ACPI requires UEFI on this architecture)")
		}
		return nil
	},
	// After the os family, which made <os><type>.
	build: func(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
		if s.Arch != "" && d.OS.Type.Arch != s.Arch {
			if d.OS.Type.Arch != "" && s.Emulator == "" {
				d.Devices.Emulator = "" // the old arch's binary: libvirt picks the new one's
			}
			d.OS.Type.Arch = s.Arch
		}
		if s.Emulator != "" {
			d.Devices.Emulator = s.Emulator
		}
		if base == nil && s.Machine == "" && d.OS.Type.Machine == "" {
			d.OS.Type.Machine = DefaultMachine(s.Arch)
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.OS != nil && d.OS.Type != nil {
			p.Spec.Arch = d.OS.Type.Arch
		}
		if d.Devices != nil {
			p.Spec.Emulator = d.Devices.Emulator
		}
	},
	// Empty is "keep": a clone or cluster machine never sets them.
	same: func(a, b Spec) bool {
		eq := func(x, y string) bool { return x == "" || y == "" || x == y }
		return eq(a.Arch, b.Arch) && eq(a.Emulator, b.Emulator)
	},
}
