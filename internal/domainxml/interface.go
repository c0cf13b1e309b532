package domainxml

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Network interfaces: the `network_interface` blocks (a libvirt network or a host
// bridge, MAC, model).

// Interface is one NIC on a libvirt network or a host bridge.
type Interface struct {
	Network string
	Bridge  string
	MAC     string // empty: libvirt chooses
	Model   string
}

var interfaceFamily = family{
	name: "network_interface",
	validate: func(s *Spec) error {
		for i, n := range s.Interfaces {
			if (n.Network == "") == (n.Bridge == "") {
				return fmt.Errorf("network_interface %d needs exactly one of network and bridge", i)
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		d.Devices.Interfaces = buildInterfaces(d.Devices.Interfaces, s.Interfaces)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.Devices == nil {
			return
		}
		for _, x := range d.Devices.Interfaces {
			n := Interface{}
			if x.MAC != nil {
				n.MAC = strings.ToLower(x.MAC.Address)
			}
			if x.Model != nil {
				n.Model = x.Model.Type
			}
			switch {
			case x.Source == nil:
				continue
			case x.Source.Network != nil:
				n.Network = x.Source.Network.Network
			case x.Source.Bridge != nil:
				n.Bridge = x.Source.Bridge.Bridge
			default:
				continue // other interface types are not managed
			}
			p.Spec.Interfaces = append(p.Spec.Interfaces, n)
		}
	},
	// A MAC libvirt chose matches one left empty; an empty model is the default one.
	same: func(a, b Spec) bool {
		if len(a.Interfaces) != len(b.Interfaces) {
			return false
		}
		for i := range a.Interfaces {
			x, y := a.Interfaces[i], b.Interfaces[i]
			if x.Network != y.Network || x.Bridge != y.Bridge || modelOf(x) != modelOf(y) ||
				(x.MAC != "" && y.MAC != "" && !strings.EqualFold(x.MAC, y.MAC)) {
				return false
			}
		}
		return true
	},
}

// modelOf is the model a NIC is built with: the one asked for, else DefaultNIC.
func modelOf(n Interface) string {
	if n.Model != "" {
		return n.Model
	}
	return DefaultNIC
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
		model := modelOf(n)
		if x.Model == nil || x.Model.Type != model {
			x.Address = nil // another model may sit on another bus
		}
		x.Model = &libvirtxml.DomainInterfaceModel{Type: model}
		x.Target, x.Alias = nil, nil // vnet names are libvirt's
		out = append(out, x)
	}
	return out
}
