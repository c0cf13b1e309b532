package domainxml

import (
	"strconv"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Controllers are no family's: libvirt adds the ones a definition needs (the PCI root,
// the machine's USB controller, a root port per PCIe device, a virtio-serial controller
// for channels, ...) and an update keeps every controller as it is. What a definition
// made elsewhere chose on purpose — a controller libvirt would not add, or would add in
// another form — is lost when the generated configuration recreates the domain, so an
// import escapes it into device_xml (adoptedControllers). A fragment controller takes
// the place of one a family added with the same type and index (device_xml.go), so that
// an escaped virtio-scsi controller with queues replaces the plain one the disk family
// adds for a SCSI disk.

// adoptedControllers are the controllers of d that libvirt (or the provider) would not
// add by itself in the same form.
func adoptedControllers(d *libvirtxml.Domain) []libvirtxml.DomainController {
	if d.Devices == nil {
		return nil
	}
	spares := spareRootPorts(d.Devices) > 1
	scsiDisk, scsiHostdev := false, false
	for _, dk := range d.Devices.Disks {
		scsiDisk = scsiDisk || (dk.Target != nil && dk.Target.Bus == "scsi")
	}
	for _, h := range d.Devices.Hostdevs {
		scsiHostdev = scsiHostdev || h.SubsysSCSI != nil
	}
	var out []libvirtxml.DomainController
	for _, c := range d.Devices.Controllers {
		if spares && c.Type == "pci" && c.Model == "pcie-root-port" {
			out = append(out, c)
			continue
		}
		if !implicitController(c, machineOf(d), !scsiDisk && scsiHostdev) {
			out = append(out, c)
		}
	}
	return out
}

func machineOf(d *libvirtxml.Domain) string {
	if d.OS == nil || d.OS.Type == nil {
		return ""
	}
	return d.OS.Type.Machine
}

// implicitController says whether c is one libvirt adds to a definition that lacks it
// (or the disk family adds: a plain virtio-scsi controller for SCSI disks), in the form
// libvirt gives it: index 0 (any index for the PCIe ports and bridges libvirt places),
// the default model, nothing set beyond what libvirt fills in. libvirt's own SCSI
// controller (lsilogic) is implicit only for SCSI hostdevs without SCSI disks (lsiSCSI):
// for SCSI disks the provider would write virtio-scsi, and without SCSI devices libvirt
// adds none.
func implicitController(c libvirtxml.DomainController, machine string, lsiSCSI bool) bool {
	bare := c
	bare.Address, bare.Alias, bare.ACPI = nil, nil, nil
	if bare.PCI != nil {
		pci := *bare.PCI
		pci.Model = nil // <model name='pcie-root-port'/>: libvirt's
		if pci.Target != nil {
			t := *pci.Target
			t.Chassis, t.Port, t.BusNr = nil, nil, nil // libvirt numbers them
			pci.Target = &t
			if t == (libvirtxml.DomainControllerPCITarget{}) {
				pci.Target = nil
			}
		}
		bare.PCI = &pci
		if pci == (libvirtxml.DomainControllerPCI{}) {
			bare.PCI = nil
		}
	}
	index := uint(0)
	if bare.Index != nil {
		index = *bare.Index
	}
	bare.Index = nil
	plain := func(model string) bool {
		return index == 0 && bareIs(bare, c.Type, model)
	}
	switch c.Type {
	case "pci":
		switch c.Model {
		case "pci-root", "pcie-root":
			return plain(c.Model)
		case "pcie-root-port", "pcie-to-pci-bridge", "dmi-to-pci-bridge":
			return bareIs(bare, c.Type, c.Model)
		}
		return false
	case "usb":
		model := "piix3-uhci"
		if strings.Contains(machine, "q35") || strings.HasPrefix(machine, "virt") {
			model = "qemu-xhci"
		}
		return plain(model)
	case "sata", "ide", "fdc", "ccid", "virtio-serial":
		return plain("")
	case "scsi":
		return plain("virtio-scsi") || (lsiSCSI && plain("lsilogic")) // the disk family's (ensureSCSIController), libvirt's
	}
	return false
}

// bareIs says whether c (index, address and alias taken away) is just type and model.
func bareIs(c libvirtxml.DomainController, typ, model string) bool {
	want := libvirtxml.DomainController{Type: typ, Model: model}
	a, err1 := c.Marshal()
	b, err2 := want.Marshal()
	return err1 == nil && err2 == nil && a == b
}

// spareRootPorts counts d's PCIe root ports no device sits behind: ports kept free for
// hot-plug. libvirt leaves one free itself on q35 (every adopt fixture's twin shows it);
// more were chosen (virt-manager adds several), and libvirt would not add them again.
func spareRootPorts(l *libvirtxml.DomainDeviceList) int {
	devices, err := devicesNode(l)
	if err != nil {
		return 0
	}
	used := map[uint64]bool{}
	var walk func(n xmlNode)
	walk = func(n xmlNode) {
		if n.XMLName.Local == "address" {
			if t, _ := n.attr("type"); t == "pci" {
				if b, ok := n.attr("bus"); ok {
					if v, err := strconv.ParseUint(b, 0, 32); err == nil {
						used[v] = true
					}
				}
			}
		}
		for _, c := range n.Nodes {
			walk(c)
		}
	}
	walk(*devices)
	free := 0
	for _, c := range l.Controllers {
		if c.Type == "pci" && c.Model == "pcie-root-port" && c.Index != nil && !used[uint64(*c.Index)] {
			free++
		}
	}
	return free
}
