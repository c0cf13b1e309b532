package domainxml

import (
	"fmt"

	"libvirt.org/go/libvirtxml"
)

// Exact or escaped (issue #25). An import decides, for each device a family owns in a
// form it types, whether the family says it exactly: read into the family's spec and
// built again, the element comes back the same (its address and alias aside, which
// libvirt assigns). A device the family cannot say exactly — a network NIC with
// coalescing or a tuned driver the network_interface block has no attribute for — is
// escaped whole into device_xml instead of being typed with part of it missing, so that
// the generated configuration recreates it as it is.
//
// Only an import decides this (ParseForImport): the configuration of a managed domain
// already says which devices are typed, and a device changed outside Terraform must
// stay the block it is (an update keeps what the block does not type). Afterwards the
// prior state (ParseKnowing) and, after an apply, the record list the escaped fragment,
// and the family leaves a device such a fragment claims to device_xml on every read and
// build (claimedByFragment). Escaped always holds the inexact devices too: a refresh
// keeps those the prior state's device_xml has.

// ParseForImport reads a domain definition as an import does: like Parse, and every
// device a family types but cannot say exactly goes to Escaped instead of the family.
func ParseForImport(text string) (*Parsed, error) {
	d, err := UnmarshalDomain(text)
	if err != nil {
		return nil, fmt.Errorf("parse domain XML: %w", err)
	}
	return fromDomain(d, true)
}

// ParseKnowing reads a domain definition like Parse, with the device_xml fragments of
// the prior state: a device one of them claims is device_xml's even before an apply
// listed it in the record (an import's escaped devices, on the refresh after the import).
func ParseKnowing(text string, deviceXML []string) (*Parsed, error) {
	d, err := UnmarshalDomain(text)
	if err != nil {
		return nil, fmt.Errorf("parse domain XML: %w", err)
	}
	p := &Parsed{ID: d.ID, fragments: deviceXML}
	p.read(d)
	return p, nil
}

// inexactDevices are the devices of l in a form their family types that it cannot say
// exactly (the families' inexact hooks).
func inexactDevices(l *libvirtxml.DomainDeviceList, rec *record) *libvirtxml.DomainDeviceList {
	out := &libvirtxml.DomainDeviceList{}
	for _, f := range untypedFamilies {
		if f.inexact == nil {
			continue
		}
		if u := f.inexact(l, rec); u != nil {
			appendDevices(out, u)
		}
	}
	return out
}

// marshaler is a libvirtxml device.
type marshaler interface{ Marshal() (string, error) }

// deviceNode is a device as a node without blank text, and without its address when
// bare (libvirt's, for comparing a device with one built from its block). An alias stays:
// in a persistent definition it is one the user chose (ua-...).
func deviceNode(dev marshaler, bare bool) (*xmlNode, error) {
	text, err := dev.Marshal()
	if err != nil {
		return nil, err
	}
	n, err := parseNode(text)
	if err != nil {
		return nil, err
	}
	c := compact(*n)
	if !bare {
		return &c, nil
	}
	var nodes []xmlNode
	for _, x := range c.Nodes {
		if x.XMLName.Local != "address" {
			nodes = append(nodes, x)
		}
	}
	c.Nodes = nodes
	return &c, nil
}

// sameDevice says whether a and b are the same element, addresses aside.
func sameDevice(a, b marshaler) bool {
	x, err1 := deviceNode(a, true)
	y, err2 := deviceNode(b, true)
	return err1 == nil && err2 == nil && x.has(y) && y.has(x)
}

// claimedByFragment says whether one of fragments (device_xml) describes dev: it has
// everything the fragment says (a fragment has no PCI address; it may have a USB one).
func claimedByFragment(dev marshaler, fragments []string) bool {
	if len(fragments) == 0 {
		return false
	}
	n, err := deviceNode(dev, false)
	if err != nil {
		return false
	}
	for _, f := range fragments {
		if want, err := parseNode(f); err == nil && n.has(want) {
			return true
		}
	}
	return false
}
