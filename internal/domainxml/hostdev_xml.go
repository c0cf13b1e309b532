package domainxml

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// The hostdev family's XML: building a <hostdev> onto the one libvirt already has for the
// same source (so its guest address, driver and settings the user does not manage stay),
// and reading one back.

// buildHostdevs writes hostdevs, in order; hostdevs of kinds the family does not manage
// (capabilities mode, iSCSI, vhost-scsi) and those a device_xml fragment claims stay after them.
func buildHostdevs(existing []libvirtxml.DomainHostdev, hostdevs []Hostdev, fragments []string) []libvirtxml.DomainHostdev {
	byName := map[string]libvirtxml.DomainHostdev{}
	var unmanaged []libvirtxml.DomainHostdev
	for _, e := range existing {
		if h, ok := parseHostdev(&e); ok && !claimedByFragment(&e, fragments) {
			byName[HostdevName(h)] = e
		} else {
			unmanaged = append(unmanaged, e)
		}
	}
	out := []libvirtxml.DomainHostdev{}
	for _, h := range hostdevs {
		x, ok := byName[HostdevName(h)]
		if !ok {
			x = libvirtxml.DomainHostdev{}
		}
		writeHostdevSource(&x, h)
		// libvirt's default is managed='no': write it either way, so the meaning is ours.
		x.Managed = "no"
		if h.Managed {
			x.Managed = "yes"
		}
		x.Boot = nil
		if h.BootOrder > 0 {
			x.Boot = &libvirtxml.DomainDeviceBoot{Order: h.BootOrder}
		}
		x.ROM = nil
		if h.ROM != nil {
			x.ROM = &libvirtxml.DomainROM{Bar: h.ROM.Bar}
			if h.ROM.File != "" {
				f := h.ROM.File
				x.ROM.File = &f
			}
		}
		x.Alias = nil
		out = append(out, x)
	}
	if len(out) == 0 && len(unmanaged) == 0 {
		return nil
	}
	return append(out, unmanaged...)
}

// writeHostdevSource sets the source of x to h's, keeping what libvirt filled in around
// it (the PCI driver, mdev display) when the kind stays.
func writeHostdevSource(x *libvirtxml.DomainHostdev, h Hostdev) {
	pci, mdev, scsi := x.SubsysPCI, x.SubsysMDev, x.SubsysSCSI
	*x = libvirtxml.DomainHostdev{Managed: x.Managed, Boot: x.Boot, ROM: x.ROM, ACPI: x.ACPI, Address: x.Address}
	switch {
	case h.PCI != "":
		d, b, s, f, _ := parsePCI(h.PCI)
		if pci == nil {
			pci = &libvirtxml.DomainHostdevSubsysPCI{}
		}
		pci.Source = &libvirtxml.DomainHostdevSubsysPCISource{Address: &libvirtxml.DomainAddressPCI{Domain: &d, Bus: &b, Slot: &s, Function: &f}}
		x.SubsysPCI = pci
	case h.USBVendor != "":
		x.SubsysUSB = &libvirtxml.DomainHostdevSubsysUSB{Source: &libvirtxml.DomainHostdevSubsysUSBSource{
			Vendor:  &libvirtxml.DomainHostDevProductVendorID{ID: NormUSBID(h.USBVendor)},
			Product: &libvirtxml.DomainHostDevProductVendorID{ID: NormUSBID(h.USBProduct)},
		}}
	case h.USBAddress != "":
		b, d, _ := parseUSBAddress(h.USBAddress)
		x.SubsysUSB = &libvirtxml.DomainHostdevSubsysUSB{Source: &libvirtxml.DomainHostdevSubsysUSBSource{
			Address: &libvirtxml.DomainAddressUSB{Bus: &b, Device: &d}}}
	case h.MDev != "":
		if mdev == nil {
			mdev = &libvirtxml.DomainHostdevSubsysMDev{}
		}
		mdev.Model = mdevModelOf(h)
		mdev.Source = &libvirtxml.DomainHostdevSubsysMDevSource{Address: &libvirtxml.DomainAddressMDev{UUID: strings.ToLower(h.MDev)}}
		x.SubsysMDev = mdev
	case h.SCSI != nil:
		if scsi == nil {
			scsi = &libvirtxml.DomainHostdevSubsysSCSI{}
		}
		bus, target, unit := h.SCSI.Bus, h.SCSI.Target, h.SCSI.Unit
		scsi.Source = &libvirtxml.DomainHostdevSubsysSCSISource{Host: &libvirtxml.DomainHostdevSubsysSCSISourceHost{
			Adapter: &libvirtxml.DomainHostdevSubsysSCSIAdapter{Name: h.SCSI.Adapter},
			Address: &libvirtxml.DomainAddressDrive{Bus: &bus, Target: &target, Unit: &unit},
		}}
		x.SubsysSCSI = scsi
	}
}

// parseHostdev reads a hostdev of a kind the family manages. A USB device named by ids
// is read by its ids: a running domain's live XML adds the bus/device it found.
func parseHostdev(x *libvirtxml.DomainHostdev) (Hostdev, bool) {
	h := Hostdev{Managed: x.Managed == "yes"}
	switch {
	case x.SubsysPCI != nil && x.SubsysPCI.Source != nil && x.SubsysPCI.Source.Address != nil:
		a := x.SubsysPCI.Source.Address
		h.PCI = fmt.Sprintf("%04x:%02x:%02x.%x", deref(a.Domain), deref(a.Bus), deref(a.Slot), deref(a.Function))
	case x.SubsysUSB != nil && x.SubsysUSB.Source != nil:
		src := x.SubsysUSB.Source
		switch {
		case src.Vendor != nil || src.Product != nil:
			if src.Vendor != nil {
				h.USBVendor = NormUSBID(src.Vendor.ID)
			}
			if src.Product != nil {
				h.USBProduct = NormUSBID(src.Product.ID)
			}
		case src.Address != nil:
			h.USBAddress = fmt.Sprintf("%d:%d", deref(src.Address.Bus), deref(src.Address.Device))
		default:
			return h, false
		}
	case x.SubsysMDev != nil && x.SubsysMDev.Source != nil && x.SubsysMDev.Source.Address != nil:
		h.MDev = strings.ToLower(x.SubsysMDev.Source.Address.UUID)
		h.MDevModel = x.SubsysMDev.Model
	case x.SubsysSCSI != nil && x.SubsysSCSI.Source != nil && x.SubsysSCSI.Source.Host != nil:
		src := x.SubsysSCSI.Source.Host
		h.SCSI = &HostdevSCSI{}
		if src.Adapter != nil {
			h.SCSI.Adapter = src.Adapter.Name
		}
		if src.Address != nil {
			h.SCSI.Bus, h.SCSI.Target, h.SCSI.Unit = deref(src.Address.Bus), deref(src.Address.Target), deref(src.Address.Unit)
		}
	default:
		return h, false
	}
	if x.Boot != nil {
		h.BootOrder = x.Boot.Order
	}
	if x.ROM != nil && (x.ROM.Bar != "" || x.ROM.File != nil) {
		h.ROM = &HostdevROM{Bar: x.ROM.Bar}
		if x.ROM.File != nil {
			h.ROM.File = *x.ROM.File
		}
	}
	return h, true
}

func deref(p *uint) uint {
	if p == nil {
		return 0
	}
	return *p
}
