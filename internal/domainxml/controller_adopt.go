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
	n := controllerNeedsOf(d)
	// libvirt leaves exactly one root port free when it places them; any other count was
	// chosen (ports kept for hot-plug, or none spare), and only the ports as written give
	// it back.
	ports, free := n.rootPorts(d.Devices.Controllers)
	spares := ports > 0 && free != 1
	var out []libvirtxml.DomainController
	for _, c := range d.Devices.Controllers {
		if spares && c.Type == "pci" && c.Model == "pcie-root-port" {
			out = append(out, c)
			continue
		}
		if !n.implicit(c) {
			out = append(out, c)
		}
	}
	return out
}

// controllerNeeds is what in a definition makes libvirt add a controller by itself.
type controllerNeeds struct {
	machine   string
	diskBus   map[string]bool // buses of the disks (ide, fdc, sata, scsi, ...)
	pciBus    map[uint64]bool // PCI buses a device or controller sits on
	lsiSCSI   bool            // SCSI hostdevs and no SCSI disk: libvirt's lsilogic
	virtio    bool            // a virtio channel or console: the virtio-serial controller
	smartcard bool            // a smartcard: the ccid controller
}

func controllerNeedsOf(d *libvirtxml.Domain) controllerNeeds {
	l := d.Devices
	n := controllerNeeds{machine: machineOf(d), diskBus: map[string]bool{}, pciBus: pciBuses(l), smartcard: len(l.Smartcards) > 0}
	for _, dk := range l.Disks {
		if dk.Target != nil {
			n.diskBus[dk.Target.Bus] = true
		}
	}
	scsiHostdev := false
	for _, h := range l.Hostdevs {
		scsiHostdev = scsiHostdev || h.SubsysSCSI != nil
	}
	n.lsiSCSI = scsiHostdev && !n.diskBus["scsi"]
	for _, c := range l.Channels {
		n.virtio = n.virtio || c.Target == nil || c.Target.VirtIO != nil
	}
	for _, c := range l.Consoles {
		n.virtio = n.virtio || (c.Target != nil && c.Target.Type == "virtio")
	}
	return n
}

func machineOf(d *libvirtxml.Domain) string {
	if d.OS == nil || d.OS.Type == nil {
		return ""
	}
	return d.OS.Type.Machine
}

// implicit says whether c is one libvirt adds to a definition that lacks it (or the
// disk family adds: a plain virtio-scsi controller for SCSI disks), in the form libvirt
// gives it: index 0 (any index for the PCIe ports libvirt places, and the bridges a
// device sits behind), the default model, nothing set beyond what libvirt fills in, and
// something in the definition that needs it: libvirt adds no IDE controller without an
// IDE disk, no bridge nothing sits behind, its own SCSI controller (lsilogic) only for
// SCSI hostdevs (for SCSI disks the provider would write virtio-scsi).
func (n controllerNeeds) implicit(c libvirtxml.DomainController) bool {
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
	q35 := strings.Contains(n.machine, "q35")
	switch c.Type {
	case "pci":
		switch c.Model {
		case "pci-root", "pcie-root":
			return plain(c.Model)
		case "pcie-root-port":
			return bareIs(bare, c.Type, c.Model)
		case "pcie-to-pci-bridge", "dmi-to-pci-bridge":
			return bareIs(bare, c.Type, c.Model) && n.pciBus[uint64(index)]
		}
		return false
	case "usb":
		model := "piix3-uhci"
		if q35 || strings.HasPrefix(n.machine, "virt") {
			model = "qemu-xhci"
		}
		return plain(model)
	case "sata":
		return plain("") && (q35 || n.diskBus["sata"])
	case "ide":
		return plain("") && n.diskBus["ide"]
	case "fdc":
		return plain("") && n.diskBus["fdc"]
	case "ccid":
		return plain("") && n.smartcard
	case "virtio-serial":
		return plain("") && n.virtio
	case "scsi":
		return plain("virtio-scsi") || (n.lsiSCSI && plain("lsilogic")) // the disk family's (ensureSCSIController), libvirt's
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

// rootPorts counts the PCIe root ports and those no device sits behind: ports kept free
// for hot-plug. libvirt leaves one free itself on q35 (every adopt fixture's twin that
// did not write its ports shows it); more were chosen (virt-manager adds several), and
// libvirt would not add them again.
func (n controllerNeeds) rootPorts(controllers []libvirtxml.DomainController) (ports, free int) {
	for _, c := range controllers {
		if c.Type == "pci" && c.Model == "pcie-root-port" && c.Index != nil {
			ports++
			if !n.pciBus[uint64(*c.Index)] {
				free++
			}
		}
	}
	return ports, free
}

// pciBuses are the PCI buses a device or controller of l sits on.
func pciBuses(l *libvirtxml.DomainDeviceList) map[uint64]bool {
	used := map[uint64]bool{}
	devices, err := devicesNode(l)
	if err != nil {
		return used
	}
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
	return used
}
