package domainxml

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// OS and firmware: machine (a type or an alias such as q35) and firmware (bios or uefi,
// chosen by libvirt's firmware auto-selection; uefi gets its own nvram varstore).

var osFamily = family{
	name:     "os",
	validate: func(*Spec) error { return nil },
	build: func(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
		if d.OS == nil {
			d.OS = &libvirtxml.DomainOS{}
		}
		if d.OS.Type == nil {
			d.OS.Type = &libvirtxml.DomainOSType{Type: "hvm"}
		}
		machineChanged := !SameMachine(s.Machine, d.OS.Type.Machine)
		if s.Machine != "" && (machineChanged || d.OS.Type.Machine == "") {
			d.OS.Type.Machine = s.Machine
		}
		if base != nil && parseFirmware(d.OS) != normFirmware(s.Firmware) {
			d.OS.Loader, d.OS.NVRam, d.OS.FirmwareInfo = nil, nil, nil
		}
		d.OS.Firmware = ""
		if normFirmware(s.Firmware) == FirmwareUEFI {
			d.OS.Firmware = "efi"
		}
		if machineChanged && base != nil {
			// Another machine type lays out its buses differently: let libvirt place
			// controllers and devices afresh (the device families run after this one).
			stripAddresses(d)
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		s := &p.Spec
		s.Firmware = parseFirmware(d.OS)
		if d.OS == nil {
			return
		}
		if d.OS.Type != nil {
			s.Machine = d.OS.Type.Machine
		}
		if d.OS.NVRam != nil {
			p.NVRAM = d.OS.NVRam.NVRam
			if p.NVRAM == "" && d.OS.NVRam.Source != nil && d.OS.NVRam.Source.File != nil {
				p.NVRAM = d.OS.NVRam.Source.File.File
			}
		}
	},
	same: func(a, b Spec) bool {
		return SameMachine(a.Machine, b.Machine) && normFirmware(a.Firmware) == normFirmware(b.Firmware)
	},
	derive: deriveNVRAM,
}

// deriveNVRAM gives a UEFI clone its own varstore (s.NVRAM; the workflow copies the
// source's into it), as <nvram> text or as the file of an <nvram><source>, whichever
// the source used; the template stays. For firmware auto-selection (this family's) and
// a hand-chosen pflash loader (loader.go's) alike: both are UEFI and both keep the
// variables in a file of the domain's.
func deriveNVRAM(d *libvirtxml.Domain, s *CloneSpec) error {
	if Firmware(d) != FirmwareUEFI {
		return nil
	}
	if s.NVRAM == "" {
		return fmt.Errorf("clone %s: the source boots UEFI, so the clone needs its own nvram path", s.Name)
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
	return nil
}

func parseFirmware(os *libvirtxml.DomainOS) string {
	if os == nil {
		return FirmwareBIOS
	}
	if os.Firmware == "efi" || (os.Loader != nil && os.Loader.Type == "pflash") {
		return FirmwareUEFI
	}
	return FirmwareBIOS
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
	alias := map[string]string{"q35": "pc-q35-", "pc": "pc-i440fx-", "virt": "virt-"}
	if p, ok := alias[user]; ok && strings.HasPrefix(libvirt, p) {
		return true
	}
	if p, ok := alias[libvirt]; ok && strings.HasPrefix(user, p) {
		return true
	}
	return false
}

// stripAddresses drops the device addresses and controllers libvirt placed: for a new
// machine type, which lays its buses out otherwise.
func stripAddresses(d *libvirtxml.Domain) {
	d.Devices.Controllers = nil
	for i := range d.Devices.Disks {
		d.Devices.Disks[i].Address = nil
	}
	for i := range d.Devices.Interfaces {
		d.Devices.Interfaces[i].Address = nil
	}
	for i := range d.Devices.Hostdevs {
		d.Devices.Hostdevs[i].Address = nil
	}
	for i := range d.Devices.Channels {
		d.Devices.Channels[i].Address = nil
	}
	for i := range d.Devices.Videos {
		d.Devices.Videos[i].Address = nil
	}
	for i := range d.Devices.Inputs {
		d.Devices.Inputs[i].Address = nil
	}
	for i := range d.Devices.Sounds {
		d.Devices.Sounds[i].Address = nil
	}
	for i := range d.Devices.RNGs {
		d.Devices.RNGs[i].Address = nil
	}
	if d.Devices.MemBalloon != nil {
		d.Devices.MemBalloon.Address = nil
	}
}
