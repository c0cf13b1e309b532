package libvirt

import (
	"context"
	"encoding/xml"
	"fmt"
	"slices"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

// Sections of a network, beyond host entries, that network-update changes in place
// (libvirt 9.0: port groups add/modify/delete; DNS SRV and TXT records and the forward
// block's interfaces add/delete).
func sectionOf(s hostxml.Section) (golibvirt.NetworkUpdateSection, error) {
	switch s {
	case hostxml.SectionPortGroup:
		return golibvirt.NetworkSectionPortgroup, nil
	case hostxml.SectionDNSSRV:
		return golibvirt.NetworkSectionDNSSrv, nil
	case hostxml.SectionDNSTXT:
		return golibvirt.NetworkSectionDNSTxt, nil
	case hostxml.SectionForwardInterface:
		return golibvirt.NetworkSectionForwardInterface, nil
	case hostxml.SectionDHCPRange:
		return golibvirt.NetworkSectionIPDhcpRange, nil
	}
	return 0, fmt.Errorf("network-update has no section %q", s)
}

// UpdateNetworkSections applies changes in order with network-update, to the persistent
// definition and, when the network runs, to the live network (never a restart). It stops
// at the first failure, naming the change.
func (c *Client) UpdateNetworkSections(ctx context.Context, name string, changes []hostxml.SectionChange) error {
	for _, ch := range changes {
		sec, err := sectionOf(ch.Section)
		if err != nil {
			return err
		}
		b, err := xml.Marshal(ch.Elem)
		if err != nil {
			return fmt.Errorf("%s in network %s: %w", ch, name, err)
		}
		u := networkUpdate{section: sec, parent: -1, xml: string(b)}
		if ch.Section == hostxml.SectionDHCPRange {
			u.parent = int32(ch.Parent)
		}
		if u.command, err = commandOf(ch.Op); err != nil {
			return fmt.Errorf("%s in network %s: %w", ch, name, err)
		}
		if err := c.networkUpdate(ctx, name, ch.String(), u); err != nil {
			return err
		}
	}
	return nil
}

// NetworkUsers names the domains with a port on a running network (libvirt's network
// ports, one per plugged interface), sorted, each once. Unlike the live XML's
// connections count, which libvirt 9.0 resets when network-update changes the running
// network, ports stay right. An inactive network has none.
func (c *Client) NetworkUsers(ctx context.Context, name string) ([]string, error) {
	ports, err := c.NetworkPorts(ctx, name)
	var out []string
	for _, p := range ports {
		out = append(out, p.Owner)
	}
	slices.Sort(out)
	return slices.Compact(out), err
}

// NetworkPort is a plugged interface of a running network: the domain that owns it and,
// for a macvtap pool (direct plug), the host link it took.
type NetworkPort struct {
	Owner, Link string
}

// NetworkPorts lists the ports of a running network (none when it is inactive).
func (c *Client) NetworkPorts(ctx context.Context, name string) ([]NetworkPort, error) {
	var out []NetworkPort
	err := c.Read(ctx, "list the ports of network "+name, func(l *golibvirt.Libvirt) error {
		out = nil
		n, err := l.NetworkLookupByName(name)
		if err != nil {
			return err
		}
		if active, err := l.NetworkIsActive(n); err != nil || active == 0 {
			return err
		}
		ports, _, err := l.NetworkListAllPorts(n, 1, 0)
		if err != nil {
			return err
		}
		for _, p := range ports {
			doc, err := l.NetworkPortGetXMLDesc(p, 0)
			if err != nil {
				continue // unplugged while we listed
			}
			var x libvirtxml.NetworkPort
			if x.Unmarshal(doc) != nil || x.Owner == nil || x.Owner.Name == "" {
				continue
			}
			port := NetworkPort{Owner: x.Owner.Name}
			if x.Plug != nil && x.Plug.Direct != nil {
				port.Link = x.Plug.Direct.Dev
			}
			out = append(out, port)
		}
		return nil
	})
	return out, err
}
