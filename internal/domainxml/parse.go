package domainxml

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Parsed is what Parse reads from a domain's XML: the user-controlled Spec, and runtime
// facts of a live definition.
type Parsed struct {
	Spec Spec
	// ID is the running domain's id (nil when not running or for an inactive definition).
	ID *int
	// GraphicsPort is the live VNC/SPICE port (0 when unknown, e.g. not running).
	GraphicsPort int
	// AgentConnected says the guest agent channel is connected (live XML only).
	AgentConnected bool
	// NVRAM is the path of the domain's UEFI variable store, when libvirt reports it.
	NVRAM string
}

// Parse reads a domain definition.
func Parse(text string) (*Parsed, error) {
	var d libvirtxml.Domain
	if err := d.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("parse domain XML: %w", err)
	}
	return FromDomain(&d)
}

// FromDomain reads a parsed definition. Only what the user controls goes into Spec;
// values libvirt chooses are read as they are (MACs, machine) and compared loosely
// elsewhere (SameMachine).
func FromDomain(d *libvirtxml.Domain) (*Parsed, error) {
	p := &Parsed{ID: d.ID}
	s := &p.Spec
	s.Name, s.UUID, s.Type = d.Name, d.UUID, d.Type
	if d.VCPU != nil {
		s.VCPU = d.VCPU.Value
		if d.VCPU.Current > 0 && d.VCPU.Current < d.VCPU.Value {
			s.VCPU = d.VCPU.Current
			s.MaxVCPU = d.VCPU.Value
		}
	}
	if d.Memory != nil {
		s.MaxMemoryMiB = toMiB(d.Memory.Value, d.Memory.Unit)
	}
	s.MemoryMiB = s.MaxMemoryMiB
	if d.CurrentMemory != nil {
		s.MemoryMiB = toMiB(d.CurrentMemory.Value, d.CurrentMemory.Unit)
	}
	if s.MaxMemoryMiB <= s.MemoryMiB {
		s.MaxMemoryMiB = 0
	}
	if d.OS != nil {
		if d.OS.Type != nil {
			s.Machine = d.OS.Type.Machine
		}
		s.Firmware = parseFirmware(d.OS)
		if d.OS.NVRam != nil {
			p.NVRAM = d.OS.NVRam.NVRam
			if p.NVRAM == "" && d.OS.NVRam.Source != nil && d.OS.NVRam.Source.File != nil {
				p.NVRAM = d.OS.NVRam.Source.File.File
			}
		}
	} else {
		s.Firmware = FirmwareBIOS
	}
	if d.CPU != nil {
		s.CPUMode = d.CPU.Mode
		if s.CPUMode == "" {
			s.CPUMode = "custom"
		}
		if s.CPUMode == "custom" && d.CPU.Model != nil {
			s.CPUModel = d.CPU.Model.Value
		}
	}

	md := &metadata{}
	if ok, err := GetMetadata(d, MetadataNS, "domain", md); !ok || err != nil {
		md = &metadata{} // none, or broken: the definition alone says what it can
	}
	for _, si := range d.SysInfo {
		if si.FWCfg == nil {
			continue
		}
		for _, e := range si.FWCfg.Entry {
			if e.Name != IgnitionFWCfgName || e.File == "" {
				continue
			}
			s.Ignition = &Ignition{ID: e.File, Path: e.File}
			if g := md.Ignition; g != nil && g.Path == e.File {
				s.Ignition.ID = g.ID
			}
		}
	}
	s.Graphics = Graphics{Type: GraphicsNone}
	if d.Devices == nil {
		return p, nil
	}
	for _, x := range d.Devices.Disks {
		if x.Device != "" && x.Device != DeviceDisk && x.Device != DeviceCDROM {
			continue // floppies, luns: not managed
		}
		dk := Disk{Device: x.Device, BootOrder: 0}
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
		dk.Path = diskSourcePath(&x)
		if x.Source != nil && x.Source.Volume != nil {
			dk.VolumeID = x.Source.Volume.Pool + "/" + x.Source.Volume.Volume
		}
		if c := md.CloudInit; c != nil && c.Target == dk.Target && c.Path == dk.Path && dk.Path != "" {
			s.CloudInit = &CloudInit{ID: c.ID, Path: c.Path, Target: c.Target}
			continue
		}
		for _, m := range md.Disks {
			if m.Target == dk.Target && m.Path == dk.Path && dk.Path != "" {
				dk.VolumeID = m.Volume
			}
		}
		if dk.Path == "" && dk.VolumeID == "" && dk.Device == DeviceCDROM {
			continue // an empty cdrom tray: nothing to manage
		}
		s.Disks = append(s.Disks, dk)
	}
	for _, x := range d.Devices.Interfaces {
		n := Interface{}
		if x.MAC != nil {
			n.MAC = strings.ToLower(x.MAC.Address)
		}
		if x.Model != nil {
			n.Model = x.Model.Type
		}
		if x.Source != nil {
			switch {
			case x.Source.Network != nil:
				n.Network = x.Source.Network.Network
			case x.Source.Bridge != nil:
				n.Bridge = x.Source.Bridge.Bridge
			default:
				continue // other interface types are not managed
			}
		} else {
			continue
		}
		s.Interfaces = append(s.Interfaces, n)
	}
	for _, g := range d.Devices.Graphics {
		switch {
		case g.VNC != nil:
			s.Graphics = Graphics{Type: GraphicsVNC, Listen: listenOf(g.VNC.Listen, g.VNC.Listeners)}
			p.GraphicsPort = g.VNC.Port
		case g.Spice != nil:
			s.Graphics = Graphics{Type: GraphicsSpice, Listen: listenOf(g.Spice.Listen, g.Spice.Listeners)}
			p.GraphicsPort = g.Spice.Port
		default:
			continue
		}
		break
	}
	if p.GraphicsPort < 0 {
		p.GraphicsPort = 0
	}
	for _, c := range d.Devices.Channels {
		if isAgentChannel(c) {
			s.QemuAgent = true
			p.AgentConnected = c.Target.VirtIO.State == "connected"
		}
	}
	return p, nil
}

// listenOf is the listen address; none given means libvirt's default, 127.0.0.1.
func listenOf(attr string, ls []libvirtxml.DomainGraphicListener) string {
	if attr != "" {
		return attr
	}
	for _, l := range ls {
		if l.Address != nil && l.Address.Address != "" {
			return l.Address.Address
		}
	}
	return DefaultListen
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

// toMiB converts a libvirt memory value with its unit (default KiB) to MiB.
func toMiB(v uint, unit string) uint64 {
	n := uint64(v)
	switch strings.ToLower(unit) {
	case "b", "bytes":
		return n / (1 << 20)
	case "k", "kib", "":
		return n / 1024
	case "kb":
		return n * 1000 / (1 << 20)
	case "m", "mib":
		return n
	case "mb":
		return n * 1000 * 1000 / (1 << 20)
	case "g", "gib":
		return n * 1024
	case "gb":
		return n * 1000 * 1000 * 1000 / (1 << 20)
	case "t", "tib":
		return n * 1024 * 1024
	}
	return n / 1024
}
