package domainxml

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Network interfaces: the `network_interface` blocks (a libvirt network, a host bridge
// or a macvtap on a host link; MAC, model; the options in interface_options.go).

// Interface is one NIC on exactly one of a libvirt network, a host bridge or a host link.
type Interface struct {
	Network string
	Bridge  string
	Direct  *Direct
	MAC     string // empty: libvirt chooses
	Model   string
	NICOptions
}

var interfaceFamily = family{
	name:    "network_interface",
	untyped: untypedInterfaces, // device_xml_adopt.go
	validate: func(s *Spec) error {
		bootUsed := map[uint]bool{}
		for _, d := range s.Disks {
			bootUsed[d.BootOrder] = true
		}
		for i, n := range s.Interfaces {
			if n.BootOrder > 0 && bootUsed[n.BootOrder] {
				return fmt.Errorf("network_interface %d: boot_order %d is already used by another disk or network_interface", i, n.BootOrder)
			}
			bootUsed[n.BootOrder] = true
			if sources := btoi(n.Network != "") + btoi(n.Bridge != "") + btoi(n.Direct != nil); sources != 1 {
				return fmt.Errorf("network_interface %d needs exactly one of network, bridge and direct", i)
			}
			if err := validateNIC(fmt.Sprintf("network_interface %d", i), n); err != nil {
				return err
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.Devices.Interfaces = buildInterfaces(d.Devices.Interfaces, s.Interfaces, s.DeviceXML)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		if d.Devices == nil {
			return
		}
		for _, x := range d.Devices.Interfaces {
			switch {
			case !typedInterface(&x):
				continue // other interface types are device_xml's (device_xml_adopt.go)
			case p.adopting && !exactInterface(x), claimedByFragment(&x, p.claims(rec)):
				continue // escaped into device_xml (adopt_exact.go)
			}
			p.Spec.Interfaces = append(p.Spec.Interfaces, interfaceOf(&x))
		}
	},
	same:    sameInterfaces,
	live:    interfaceLive,
	derive:  deriveInterfaces,
	inexact: inexactInterfaces,
}

// interfaceOf reads a NIC the network_interface blocks type (typedInterface).
func interfaceOf(x *libvirtxml.DomainInterface) Interface {
	n := Interface{}
	if x.MAC != nil {
		n.MAC = strings.ToLower(x.MAC.Address)
	}
	if x.Model != nil {
		n.Model = x.Model.Type
	}
	switch {
	case x.Source.Network != nil:
		n.Network = x.Source.Network.Network
	case x.Source.Bridge != nil:
		n.Bridge = x.Source.Bridge.Bridge
	default:
		n.Direct = &Direct{Dev: x.Source.Direct.Dev, Mode: x.Source.Direct.Mode}
	}
	n.NICOptions = parseNICOptions(x)
	return n
}

// exactInterface says whether a NIC the blocks type comes back the same from its block
// (adopt_exact.go): no model (libvirt's default is not the provider's), a tap name, a
// tuned driver or anything else the block has no attribute for makes it inexact.
func exactInterface(x libvirtxml.DomainInterface) bool {
	built := buildInterfaces(nil, []Interface{interfaceOf(&x)}, nil)
	return len(built) == 1 && sameDevice(&x, &built[0])
}

// inexactInterfaces: the interface family's inexact hook.
func inexactInterfaces(l *libvirtxml.DomainDeviceList, _ *record) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Interfaces {
		if typedInterface(&x) && !exactInterface(x) {
			out.Interfaces = append(out.Interfaces, x)
		}
	}
	return &out
}

// deriveInterfaces gives every NIC of a clone its own MAC (s.MACs, in order) and leaves
// to libvirt what names the source's port on the host: the tap device (vnetN), the
// alias, a network port's id, and the port's id in openvswitch (interfaceid) or
// 802.1Qbg (instanceid), which libvirt generates anew when none is written. (MidoNet's
// interfaceid is the user's port, which libvirt requires: it stays.)
func deriveInterfaces(d *libvirtxml.Domain, s *CloneSpec) error {
	if len(s.MACs) != len(d.Devices.Interfaces) {
		return fmt.Errorf("clone %s: %d MACs for %d interfaces", s.Name, len(s.MACs), len(d.Devices.Interfaces))
	}
	for i := range d.Devices.Interfaces {
		x := &d.Devices.Interfaces[i]
		x.MAC = &libvirtxml.DomainInterfaceMAC{Address: strings.ToLower(s.MACs[i])}
		x.Target, x.Alias = nil, nil
		if x.Source != nil && x.Source.Network != nil {
			x.Source.Network.PortID = ""
		}
		if x.VirtualPort != nil && x.VirtualPort.Params != nil {
			p := x.VirtualPort.Params
			if p.Any != nil {
				p.Any.InterfaceID, p.Any.InstanceID = "", ""
			}
			if p.OpenVSwitch != nil {
				p.OpenVSwitch.InterfaceID = ""
			}
			if p.VEPA8021QBG != nil {
				p.VEPA8021QBG.InstanceID = ""
			}
		}
	}
	return nil
}

// sameInterfaces: a MAC libvirt chose matches one left empty; an empty model is the default one.
func sameInterfaces(a, b Spec) bool {
	if len(a.Interfaces) != len(b.Interfaces) {
		return false
	}
	for i := range a.Interfaces {
		x, y := a.Interfaces[i], b.Interfaces[i]
		if x.Network != y.Network || x.Bridge != y.Bridge || modelOf(x) != modelOf(y) ||
			(x.MAC != "" && y.MAC != "" && !strings.EqualFold(x.MAC, y.MAC)) ||
			!equalPtr(x.Direct, y.Direct, func(a, b Direct) bool { return a.Dev == b.Dev && directModeOf(&a) == directModeOf(&b) }) ||
			!sameNICOptions(x.NICOptions, y.NICOptions) {
			return false
		}
	}
	return true
}

// modelOf is the model a NIC is built with: the one asked for, else DefaultNIC.
func modelOf(n Interface) string {
	if n.Model != "" {
		return n.Model
	}
	return DefaultNIC
}

// buildInterfaces writes nics over existing; a NIC of existing in a form the blocks do
// not type, or that a fragment of device_xml claims, stays as it is.
func buildInterfaces(existing []libvirtxml.DomainInterface, nics []Interface, fragments []string) []libvirtxml.DomainInterface {
	byMAC := map[string]libvirtxml.DomainInterface{}
	var untyped []libvirtxml.DomainInterface // device_xml's, or made outside Terraform: kept
	for _, e := range existing {
		if !typedInterface(&e) || claimedByFragment(&e, fragments) {
			untyped = append(untyped, e)
		} else if e.MAC != nil {
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
		switch {
		case n.Network != "":
			x.Source = &libvirtxml.DomainInterfaceSource{Network: &libvirtxml.DomainInterfaceSourceNetwork{Network: n.Network}}
		case n.Direct != nil:
			x.Source = &libvirtxml.DomainInterfaceSource{Direct: &libvirtxml.DomainInterfaceSourceDirect{Dev: n.Direct.Dev, Mode: n.Direct.Mode}}
		default:
			x.Source = &libvirtxml.DomainInterfaceSource{Bridge: &libvirtxml.DomainInterfaceSourceBridge{Bridge: n.Bridge}}
		}
		model := modelOf(n)
		if x.Model == nil || x.Model.Type != model {
			x.Address = nil // another model may sit on another bus
		}
		x.Model = &libvirtxml.DomainInterfaceModel{Type: model}
		x.Target, x.Alias = nil, nil // vnet names are libvirt's
		buildNICOptions(&x, n.NICOptions)
		out = append(out, x)
	}
	return append(out, untyped...)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
