package domainxml

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// secure_boot: UEFI Secure Boot through libvirt's firmware auto-selection. The
// definition asks for firmware with the secure-boot and (or not) enrolled-keys features
// (<os firmware='efi'><firmware><feature .../></firmware>) and has smm on, which the
// secure firmware requires; libvirt picks the loader and the nvram template (Debian's
// OVMF_CODE_4M.ms.fd / OVMF_VARS_4M.ms.fd), which are never read back as drift. It runs
// after the features family, so its smm wins. A change restarts a running domain.

// Firmware feature names of libvirt's auto-selection.
const (
	fwSecureBoot   = "secure-boot"
	fwEnrolledKeys = "enrolled-keys"
)

// SecureBoot is libvirt_domain's secure_boot; nil keeps what the definition has, one
// with Enabled false takes a secure-boot request away.
type SecureBoot struct {
	Enabled      bool
	EnrolledKeys bool
}

var secureBootFamily = family{
	name: "secure_boot",
	validate: func(s *Spec) error {
		if err := ValidateSecureBoot(s); err != nil {
			return fmt.Errorf("domain %s: %w", s.Name, err)
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
		want := s.SecureBoot
		if want == nil {
			return nil
		}
		have := parseSecureBoot(d.OS)
		if base != nil && normSecureBoot(have) != normSecureBoot(want) {
			// Another firmware build: let auto-selection choose loader and template afresh.
			d.OS.Loader, d.OS.NVRam = nil, nil
		}
		if !want.Enabled {
			if have != nil && have.Enabled {
				setFirmwareFeature(d.OS, fwSecureBoot, nil)
				setFirmwareFeature(d.OS, fwEnrolledKeys, nil)
			}
			return nil
		}
		on := true
		setFirmwareFeature(d.OS, fwSecureBoot, &on)
		setFirmwareFeature(d.OS, fwEnrolledKeys, &want.EnrolledKeys)
		if d.Features == nil {
			d.Features = &libvirtxml.DomainFeatureList{}
		}
		if d.Features.SMM == nil || d.Features.SMM.State == "off" {
			d.Features.SMM = &libvirtxml.DomainFeatureSMM{State: "on"}
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if sb := parseSecureBoot(d.OS); sb.Enabled {
			p.Spec.SecureBoot = sb
		} // else nil: none (round trips of specs that never set it)
	},
	same: func(a, b Spec) bool {
		return b.SecureBoot == nil || normSecureBoot(a.SecureBoot) == normSecureBoot(b.SecureBoot)
	},
}

// ValidateSecureBoot checks what secure boot needs of the rest of the spec: UEFI, a q35
// machine (the secure firmware builds are for q35 only) and smm not turned off.
func ValidateSecureBoot(s *Spec) error {
	if s.SecureBoot == nil || !s.SecureBoot.Enabled {
		return nil
	}
	if normFirmware(s.Firmware) != FirmwareUEFI {
		return fmt.Errorf("os.secure_boot needs firmware = \"uefi\" (it is %q): set firmware = \"uefi\" or remove os.secure_boot",
			normFirmware(s.Firmware))
	}
	if !Q35Machine(s.Machine) {
		return fmt.Errorf("os.secure_boot needs a q35 machine (the secure UEFI builds are for q35 only), machine is %q "+
			"(empty: libvirt's default, pc on x86): set os.machine = \"q35\"", s.Machine)
	}
	if s.Features != nil && s.Features.SMM != nil && !*s.Features.SMM {
		return errors.New("os.secure_boot needs smm, but features.smm = false: remove features.smm or set it to true")
	}
	return nil
}

// Q35Machine reports whether machine names a q35 machine (the alias or a versioned
// pc-q35-*); empty (libvirt's default, pc on x86) is not.
func Q35Machine(machine string) bool {
	return machine == "q35" || strings.HasPrefix(machine, "pc-q35-")
}

// parseSecureBoot reads the secure-boot request of a definition: only the firmware
// features count (a loader libvirt chose with secure='yes' is its own choice, not the
// user's). Without an enrolled-keys feature libvirt picks the enrolled build first.
func parseSecureBoot(os *libvirtxml.DomainOS) *SecureBoot {
	sb := &SecureBoot{}
	if os == nil || os.FirmwareInfo == nil {
		return sb
	}
	keys := ""
	for _, f := range os.FirmwareInfo.Features {
		switch f.Name {
		case fwSecureBoot:
			sb.Enabled = f.Enabled == "yes"
		case fwEnrolledKeys:
			keys = f.Enabled
		}
	}
	if sb.Enabled {
		sb.EnrolledKeys = keys != "no"
	}
	return sb
}

// normSecureBoot is sb with what does not count when it is off cleared (nil is off).
func normSecureBoot(sb *SecureBoot) SecureBoot {
	if sb == nil || !sb.Enabled {
		return SecureBoot{}
	}
	return *sb
}

// setFirmwareFeature sets (nil: removes) one firmware feature, keeping the others.
func setFirmwareFeature(os *libvirtxml.DomainOS, name string, enabled *bool) {
	if os.FirmwareInfo == nil {
		os.FirmwareInfo = &libvirtxml.DomainOSFirmwareInfo{}
	}
	fs := &os.FirmwareInfo.Features
	*fs = slices.DeleteFunc(*fs, func(f libvirtxml.DomainOSFirmwareFeature) bool { return f.Name == name })
	if enabled != nil {
		v := "no"
		if *enabled {
			v = "yes"
		}
		*fs = append(*fs, libvirtxml.DomainOSFirmwareFeature{Enabled: v, Name: name})
	}
	if len(*fs) == 0 {
		os.FirmwareInfo = nil
	}
}
