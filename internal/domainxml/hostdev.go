package domainxml

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Host devices: the `hostdev` blocks, passthrough of a host PCI device, a USB device (by
// vendor/product ids or by bus:device), a mediated device (mdev uuid) or a SCSI device
// on a host adapter. libvirt checks a source only when the domain starts.

// Hostdev is one host device given to the guest. Exactly one of PCI, USB ids
// (USBVendor+USBProduct), USBAddress, MDev and SCSI names the source.
type Hostdev struct {
	PCI                   string // 0000:03:00.0 (the domain part may be left out)
	USBVendor, USBProduct string // 0x10de or 10de
	USBAddress            string // bus:device, e.g. 1:5
	MDev                  string // the mediated device's uuid
	MDevModel             string // vfio-pci (default), vfio-ccw, vfio-ap
	SCSI                  *HostdevSCSI
	Managed               bool // libvirt detaches the device from its host driver and back
	BootOrder             uint
	ROM                   *HostdevROM
}

// HostdevSCSI is a SCSI device on a host adapter (scsi_hostN).
type HostdevSCSI struct {
	Adapter           string
	Bus, Target, Unit uint
}

// HostdevROM is a PCI device's option ROM: Bar on/off ("" leaves libvirt's default), a
// ROM file to present instead of the device's own.
type HostdevROM struct {
	Bar  string
	File string
}

// MDevModels are the device APIs a mediated hostdev can have; the first is the default.
var MDevModels = []string{"vfio-pci", "vfio-ccw", "vfio-ap"}

var (
	pciAddressRe = regexp.MustCompile(`^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)
	usbIDRe      = regexp.MustCompile(`^(?:0[xX])?[0-9a-fA-F]{4}$`)
	usbAddressRe = regexp.MustCompile(`^([0-9]{1,3}):([0-9]{1,3})$`)
	uuidRe       = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// Hostdev source formats, for the provider's validators.
var (
	PCIAddressPattern = pciAddressRe
	USBIDPattern      = usbIDRe
	USBAddressPattern = usbAddressRe
)

// NormPCIAddress writes a PCI address as the host does (lspci -D, node devices):
// 0000:03:00.0, lower case, the domain filled in. An address that does not parse is
// returned as it is.
func NormPCIAddress(a string) string {
	d, b, s, f, ok := parsePCI(a)
	if !ok {
		return a
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", d, b, s, f)
}

func parsePCI(a string) (domain, bus, slot, function uint, ok bool) {
	m := pciAddressRe.FindStringSubmatch(a)
	if m == nil {
		return 0, 0, 0, 0, false
	}
	hex := func(s string) uint {
		if s == "" {
			return 0
		}
		v, _ := strconv.ParseUint(s, 16, 16)
		return uint(v)
	}
	return hex(m[1]), hex(m[2]), hex(m[3]), hex(m[4]), true
}

// NormUSBID writes a USB vendor or product id as libvirt stores it: 0x and lower case.
func NormUSBID(id string) string {
	if id == "" {
		return ""
	}
	return "0x" + strings.TrimPrefix(strings.ToLower(id), "0x")
}

// NormUSBAddress writes bus:device without leading zeros (001:005 is 1:5).
func NormUSBAddress(a string) string {
	b, d, ok := parseUSBAddress(a)
	if !ok {
		return a
	}
	return fmt.Sprintf("%d:%d", b, d)
}

func parseUSBAddress(a string) (bus, device uint, ok bool) {
	m := usbAddressRe.FindStringSubmatch(a)
	if m == nil {
		return 0, 0, false
	}
	b, _ := strconv.ParseUint(m[1], 10, 16)
	d, _ := strconv.ParseUint(m[2], 10, 16)
	return uint(b), uint(d), true
}

// HostdevName names a hostdev's source for messages and identity: "pci 0000:03:00.0",
// "usb 0x10de:0x1234", "usb_address 1:5", "mdev <uuid>", "scsi scsi_host0:0:0:0".
func HostdevName(h Hostdev) string {
	switch {
	case h.PCI != "":
		return "pci " + NormPCIAddress(h.PCI)
	case h.USBVendor != "" || h.USBProduct != "":
		return "usb " + NormUSBID(h.USBVendor) + ":" + NormUSBID(h.USBProduct)
	case h.USBAddress != "":
		return "usb_address " + NormUSBAddress(h.USBAddress)
	case h.MDev != "":
		return "mdev " + strings.ToLower(h.MDev)
	case h.SCSI != nil:
		return fmt.Sprintf("scsi %s:%d:%d:%d", h.SCSI.Adapter, h.SCSI.Bus, h.SCSI.Target, h.SCSI.Unit)
	}
	return "no source"
}

func mdevModelOf(h Hostdev) string {
	if h.MDevModel != "" {
		return h.MDevModel
	}
	return MDevModels[0]
}

var hostdevFamily = family{
	name: "hostdev",
	validate: func(s *Spec) error {
		var errs []error
		for i, h := range s.Hostdevs {
			if err := validateHostdev(h); err != nil {
				errs = append(errs, fmt.Errorf("hostdev %d: %w", i, err))
			}
		}
		return errors.Join(append(errs, ValidateHostdevs(*s))...)
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.Devices.Hostdevs = buildHostdevs(d.Devices.Hostdevs, s.Hostdevs, s.DeviceXML)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		if d.Devices == nil {
			return
		}
		for i := range d.Devices.Hostdevs {
			x := &d.Devices.Hostdevs[i]
			h, ok := parseHostdev(x)
			switch {
			case !ok || userAddress(x.Address):
				continue // device_xml's (untypedHostdevs)
			case p.adopting && !exactHostdev(*x), claimedByFragment(x, p.claims(rec)):
				continue // escaped into device_xml (adopt_exact.go)
			}
			p.Spec.Hostdevs = append(p.Spec.Hostdevs, h)
		}
	},
	same:    sameHostdevs,
	live:    hostdevLive, // hotplug_devices.go
	untyped: untypedHostdevs,
	inexact: inexactHostdevs,
}

// untypedHostdevs: the hostdevs no hostdev block can say (capabilities mode, iSCSI,
// vhost-scsi, a guest address libvirt never chooses: userAddress): import escapes them
// into device_xml, an update keeps them.
func untypedHostdevs(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for i := range l.Hostdevs {
		if _, ok := parseHostdev(&l.Hostdevs[i]); !ok || userAddress(l.Hostdevs[i].Address) {
			out.Hostdevs = append(out.Hostdevs, l.Hostdevs[i])
		}
	}
	return &out
}

// exactHostdev says whether a hostdev a block types comes back the same from its block:
// a driver, a startup policy, SCSI's sgio / rawio / read-only / shareable, an mdev's
// display (but libvirt's default, off) and ramfb make it inexact (adopt_exact.go).
func exactHostdev(x libvirtxml.DomainHostdev) bool {
	h, ok := parseHostdev(&x)
	if !ok {
		return false
	}
	if m := x.SubsysMDev; m != nil && m.Display == "off" { // libvirt writes its default
		c := *m
		c.Display = ""
		x.SubsysMDev = &c
	}
	built := buildHostdevs(nil, []Hostdev{h}, nil)
	return len(built) == 1 && sameDevice(&x, &built[0])
}

// inexactHostdevs: the hostdev family's inexact hook.
func inexactHostdevs(l *libvirtxml.DomainDeviceList, _ *record) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Hostdevs {
		if _, ok := parseHostdev(&x); ok && !userAddress(x.Address) && !exactHostdev(x) {
			out.Hostdevs = append(out.Hostdevs, x)
		}
	}
	return &out
}

// sameHostdevs: sources compare as the host writes them (hex case, a left-out PCI
// domain); an mdev model left empty is vfio-pci.
func sameHostdevs(a, b Spec) bool {
	if len(a.Hostdevs) != len(b.Hostdevs) {
		return false
	}
	for i := range a.Hostdevs {
		x, y := a.Hostdevs[i], b.Hostdevs[i]
		if HostdevName(x) != HostdevName(y) || x.Managed != y.Managed || x.BootOrder != y.BootOrder ||
			(x.MDev != "" && mdevModelOf(x) != mdevModelOf(y)) || !sameROM(x.ROM, y.ROM) {
			return false
		}
	}
	return true
}

func sameROM(a, b *HostdevROM) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ValidateHostdevs checks the hostdevs together: no device twice, no boot order two
// devices share (disks included). Each hostdev's own fields are the schema's (and
// validateHostdev's) business; one that is wrong is left out here.
func ValidateHostdevs(s Spec) error {
	var errs []error
	seen := map[string]int{}
	for i, h := range s.Hostdevs {
		if validateHostdev(h) != nil {
			continue
		}
		name := HostdevName(h)
		if j, ok := seen[name]; ok {
			errs = append(errs, fmt.Errorf("hostdev %d and hostdev %d both pass through %s", j, i, name))
		}
		seen[name] = i
	}
	return errors.Join(append(errs, validateBootOrders(&s))...)
}

func validateHostdev(h Hostdev) error {
	n := 0
	for _, set := range []bool{h.PCI != "", h.USBVendor != "" || h.USBProduct != "", h.USBAddress != "", h.MDev != "", h.SCSI != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("needs exactly one of pci, usb, usb_address, mdev and scsi")
	}
	switch {
	case h.PCI != "" && !pciAddressRe.MatchString(h.PCI):
		return fmt.Errorf("pci = %q is not a PCI address such as 0000:03:00.0", h.PCI)
	case (h.USBVendor != "" || h.USBProduct != "") && (!usbIDRe.MatchString(h.USBVendor) || !usbIDRe.MatchString(h.USBProduct)):
		return fmt.Errorf("usb needs a vendor and a product id of 4 hex digits such as 0x10de (got %q, %q)", h.USBVendor, h.USBProduct)
	case h.USBAddress != "" && !usbAddressRe.MatchString(h.USBAddress):
		return fmt.Errorf("usb_address = %q is not bus:device such as 1:5", h.USBAddress)
	case h.MDev != "" && !uuidRe.MatchString(h.MDev):
		return fmt.Errorf("mdev = %q is not a uuid", h.MDev)
	case h.MDevModel != "" && h.MDev == "":
		return errors.New("mdev_model is only for an mdev hostdev")
	case h.MDevModel != "" && !contains(MDevModels, h.MDevModel):
		return fmt.Errorf("mdev_model = %q is not one of %s", h.MDevModel, strings.Join(MDevModels, ", "))
	case h.SCSI != nil && !strings.HasPrefix(h.SCSI.Adapter, "scsi_host"):
		return fmt.Errorf("scsi adapter = %q is not a host adapter name such as scsi_host0", h.SCSI.Adapter)
	case h.ROM != nil && h.PCI == "":
		return errors.New("rom is only for a pci hostdev")
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
