package domainxml

import (
	"fmt"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Build returns the domain definition for s. With base nil it is a fresh definition with
// the defaults users expect; otherwise s is merged onto a copy of base (the domain's
// current definition): what s controls is replaced, the rest is kept, and a device that
// stays the same device (a disk on the same target, a NIC with the same MAC) keeps its
// address and any settings the user does not manage.
func Build(base *libvirtxml.Domain, s Spec) (*libvirtxml.Domain, error) {
	disks := slices.Clone(s.Disks)
	var ci *CloudInit
	if s.CloudInit != nil {
		c := *s.CloudInit
		ci = &c
	}
	FillDiskDefaults(disks, ci)
	s.Disks, s.CloudInit = disks, ci
	if err := s.Validate(); err != nil {
		return nil, err
	}

	var d *libvirtxml.Domain
	if base == nil {
		d = fresh()
	} else {
		var err error
		if d, err = clone(base); err != nil {
			return nil, err
		}
	}
	if d.Devices == nil {
		d.Devices = &libvirtxml.DomainDeviceList{}
	}
	d.ID = nil
	d.Type = s.Type
	d.Name = s.Name
	if s.UUID != "" {
		d.UUID = s.UUID
	}

	SetSizing(d, s)

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
	if normFirmware(s.Firmware) == FirmwareUEFI {
		d.OS.Firmware = "efi"
	} else {
		d.OS.Firmware = ""
	}

	switch s.CPUMode {
	case "":
		// Keep what is there: libvirt writes its own default (custom qemu64 under TCG).
	case "custom":
		d.CPU = &libvirtxml.DomainCPU{Mode: "custom", Match: "exact"}
		if s.CPUModel != "" {
			d.CPU.Model = &libvirtxml.DomainCPUModel{Value: s.CPUModel, Fallback: "allow"}
		}
	default:
		if d.CPU == nil || d.CPU.Mode != s.CPUMode {
			d.CPU = &libvirtxml.DomainCPU{Mode: s.CPUMode}
		}
	}

	if machineChanged && base != nil {
		// Another machine type lays out its buses differently: let libvirt place
		// controllers and devices afresh.
		stripAddresses(d)
	}

	d.Devices.Disks = buildDisks(d.Devices.Disks, s.Disks, ci)
	anyBootOrder := false
	for _, dk := range s.Disks {
		if dk.BootOrder > 0 {
			anyBootOrder = true
		}
	}
	if anyBootOrder {
		d.OS.BootDevices = nil // per-device boot order excludes <os><boot dev>
	} else if len(d.OS.BootDevices) == 0 {
		d.OS.BootDevices = []libvirtxml.DomainBootDevice{{Dev: "hd"}}
	}

	d.Devices.Interfaces = buildInterfaces(d.Devices.Interfaces, s.Interfaces)
	d.Devices.Graphics = buildGraphics(d.Devices.Graphics, s.Graphics)
	d.Devices.Channels = buildChannels(d.Devices.Channels, s.QemuAgent)
	d.SysInfo = buildSysInfo(d.SysInfo, s.Ignition)

	if err := setDomainMetadata(d, s, ci); err != nil {
		return nil, err
	}
	return d, nil
}

// Marshal is Build's result as XML text.
func Marshal(d *libvirtxml.Domain) (string, error) { return d.Marshal() }

func fresh() *libvirtxml.Domain {
	port0 := uint(0)
	return &libvirtxml.Domain{
		Features: &libvirtxml.DomainFeatureList{
			ACPI: &libvirtxml.DomainFeature{}, // the power button: graceful shutdown
			APIC: &libvirtxml.DomainFeatureAPIC{},
		},
		Devices: &libvirtxml.DomainDeviceList{
			Serials: []libvirtxml.DomainSerial{{
				Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
				Target: &libvirtxml.DomainSerialTarget{Port: &port0},
			}},
			Consoles: []libvirtxml.DomainConsole{{
				Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
				Target: &libvirtxml.DomainConsoleTarget{Type: "serial", Port: &port0},
			}},
		},
	}
}

func clone(d *libvirtxml.Domain) (*libvirtxml.Domain, error) {
	text, err := d.Marshal()
	if err != nil {
		return nil, fmt.Errorf("copy domain definition: %w", err)
	}
	var c libvirtxml.Domain
	if err := c.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("copy domain definition: %w", err)
	}
	return &c, nil
}

func stripAddresses(d *libvirtxml.Domain) {
	d.Devices.Controllers = nil
	for i := range d.Devices.Disks {
		d.Devices.Disks[i].Address = nil
	}
	for i := range d.Devices.Interfaces {
		d.Devices.Interfaces[i].Address = nil
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

func buildDisks(existing []libvirtxml.DomainDisk, disks []Disk, ci *CloudInit) []libvirtxml.DomainDisk {
	byTarget := map[string]libvirtxml.DomainDisk{}
	for _, e := range existing {
		if e.Target != nil {
			byTarget[e.Target.Dev] = e
		}
	}
	var out []libvirtxml.DomainDisk
	for _, dk := range disks {
		out = append(out, buildDisk(byTarget, dk, false))
	}
	if ci != nil {
		out = append(out, buildDisk(byTarget, Disk{Path: ci.Path, Device: DeviceCDROM, Bus: "sata", Target: ci.Target, Format: "raw"}, true))
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
	if strings.HasPrefix(dk.Path, "/dev/") {
		x.Source = &libvirtxml.DomainDiskSource{Block: &libvirtxml.DomainDiskSourceBlock{Dev: dk.Path}}
	} else {
		x.Source = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: dk.Path}}
	}
	x.BackingStore = nil // libvirt reads the chain from the image itself
	x.Target = &libvirtxml.DomainDiskTarget{Dev: dk.Target, Bus: dk.Bus}
	if readonly || dk.Device == DeviceCDROM {
		x.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
	} else {
		x.ReadOnly = nil
	}
	x.Boot = nil
	if dk.BootOrder > 0 {
		x.Boot = &libvirtxml.DomainDeviceBoot{Order: dk.BootOrder}
	}
	x.Alias = nil
	return x
}

func buildInterfaces(existing []libvirtxml.DomainInterface, nics []Interface) []libvirtxml.DomainInterface {
	byMAC := map[string]libvirtxml.DomainInterface{}
	for _, e := range existing {
		if e.MAC != nil {
			byMAC[strings.ToLower(e.MAC.Address)] = e
		}
	}
	var out []libvirtxml.DomainInterface
	for _, n := range nics {
		x, ok := byMAC[strings.ToLower(n.MAC)]
		if n.MAC == "" || !ok {
			x = libvirtxml.DomainInterface{}
		}
		if n.MAC != "" {
			x.MAC = &libvirtxml.DomainInterfaceMAC{Address: strings.ToLower(n.MAC)}
		}
		if n.Network != "" {
			x.Source = &libvirtxml.DomainInterfaceSource{Network: &libvirtxml.DomainInterfaceSourceNetwork{Network: n.Network}}
		} else {
			x.Source = &libvirtxml.DomainInterfaceSource{Bridge: &libvirtxml.DomainInterfaceSourceBridge{Bridge: n.Bridge}}
		}
		model := n.Model
		if model == "" {
			model = DefaultNIC
		}
		if x.Model == nil || x.Model.Type != model {
			x.Address = nil // another model may sit on another bus
		}
		x.Model = &libvirtxml.DomainInterfaceModel{Type: model}
		x.Target, x.Alias = nil, nil // vnet names are libvirt's
		out = append(out, x)
	}
	return out
}

func buildGraphics(existing []libvirtxml.DomainGraphic, g Graphics) []libvirtxml.DomainGraphic {
	listen := g.Listen
	if listen == "" {
		listen = DefaultListen
	}
	listeners := []libvirtxml.DomainGraphicListener{{Address: &libvirtxml.DomainGraphicListenerAddress{Address: listen}}}
	var out []libvirtxml.DomainGraphic
	switch g.Type {
	case GraphicsVNC, "":
		out = append(out, libvirtxml.DomainGraphic{VNC: &libvirtxml.DomainGraphicVNC{Port: -1, AutoPort: "yes", Listen: listen, Listeners: listeners}})
	case GraphicsSpice:
		out = append(out, libvirtxml.DomainGraphic{Spice: &libvirtxml.DomainGraphicSpice{Port: -1, AutoPort: "yes", Listen: listen, Listeners: listeners}})
	}
	// Keep graphics of other kinds the user did not declare (e.g. egl-headless).
	for _, e := range existing {
		if e.VNC == nil && e.Spice == nil {
			out = append(out, e)
		}
	}
	return out
}

func buildChannels(existing []libvirtxml.DomainChannel, agent bool) []libvirtxml.DomainChannel {
	var out []libvirtxml.DomainChannel
	have := false
	for _, c := range existing {
		if isAgentChannel(c) {
			if !agent || have {
				continue
			}
			have = true
		}
		out = append(out, c)
	}
	if agent && !have {
		out = append(out, libvirtxml.DomainChannel{
			Source: &libvirtxml.DomainChardevSource{UNIX: &libvirtxml.DomainChardevSourceUNIX{Mode: "bind"}},
			Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: AgentChannel}},
		})
	}
	return out
}

func isAgentChannel(c libvirtxml.DomainChannel) bool {
	return c.Target != nil && c.Target.VirtIO != nil && c.Target.VirtIO.Name == AgentChannel
}

// buildSysInfo sets or removes the Ignition fw_cfg entry, keeping every other sysinfo
// (SMBIOS, other fw_cfg entries).
func buildSysInfo(existing []libvirtxml.DomainSysInfo, ign *Ignition) []libvirtxml.DomainSysInfo {
	var out []libvirtxml.DomainSysInfo
	placed := false
	for _, si := range existing {
		if si.FWCfg == nil {
			out = append(out, si)
			continue
		}
		var entries []libvirtxml.DomainSysInfoEntry
		for _, e := range si.FWCfg.Entry {
			if e.Name != IgnitionFWCfgName {
				entries = append(entries, e)
			}
		}
		if ign != nil && !placed {
			entries = append(entries, libvirtxml.DomainSysInfoEntry{Name: IgnitionFWCfgName, File: ign.Path})
			placed = true
		}
		if len(entries) > 0 {
			out = append(out, libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{Entry: entries}})
		}
	}
	if ign != nil && !placed {
		out = append(out, libvirtxml.DomainSysInfo{FWCfg: &libvirtxml.DomainSysInfoFWCfg{
			Entry: []libvirtxml.DomainSysInfoEntry{{Name: IgnitionFWCfgName, File: ign.Path}},
		}})
	}
	return out
}

// metadata is libvirt_domain's record in the domain's <metadata>: the user's own
// references for disks, the cloud-init seed and the Ignition config, so Read (and
// import of a domain this provider made) gives back exactly what the configuration says.
type metadata struct {
	Disks     []metaDisk     `xml:"disk"`
	CloudInit *metaCloudInit `xml:"cloudinit"`
	Ignition  *metaIgnition  `xml:"ignition"`
}

type metaIgnition struct {
	ID   string `xml:"id,attr"`
	Path string `xml:"path,attr"`
}

type metaDisk struct {
	Target string `xml:"target,attr"`
	Volume string `xml:"volume,attr"`
	Path   string `xml:"path,attr"`
}

type metaCloudInit struct {
	Target string `xml:"target,attr"`
	ID     string `xml:"id,attr"`
	Path   string `xml:"path,attr"`
}

// setDomainMetadata writes libvirt_domain's record for s (none when s references
// nothing), keeping other applications' elements.
func setDomainMetadata(d *libvirtxml.Domain, s Spec, ci *CloudInit) error {
	md := metadata{}
	for _, dk := range s.Disks {
		if dk.VolumeID != "" {
			md.Disks = append(md.Disks, metaDisk{Target: dk.Target, Volume: dk.VolumeID, Path: dk.Path})
		}
	}
	if ci != nil {
		md.CloudInit = &metaCloudInit{Target: ci.Target, ID: ci.ID, Path: ci.Path}
	}
	if s.Ignition != nil {
		md.Ignition = &metaIgnition{ID: s.Ignition.ID, Path: s.Ignition.Path}
	}
	if len(md.Disks) == 0 && md.CloudInit == nil && md.Ignition == nil {
		return SetMetadata(d, MetadataNS, "domain", nil)
	}
	return SetMetadata(d, MetadataNS, "domain", md)
}
