package libvirt

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/netip"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

// DHCPHost is a <host> entry of a network's DHCP configuration.
type DHCPHost struct {
	MAC  string
	IP   string
	Name string
}

// NetworkDHCP is what a reservation needs to know about a network.
type NetworkDHCP struct {
	Name    string
	Active  bool
	Subnets []capi.Subnet // IPv4 subnets, with their DHCP ranges
	Hosts   []DHCPHost    // host entries of the persistent definition
	Live    []DHCPHost    // host entries of the running network (nil when inactive)
}

// ReadNetworkDHCP reads a network's subnets and DHCP host entries.
func (c *Client) ReadNetworkDHCP(ctx context.Context, network string) (*NetworkDHCP, error) {
	out := &NetworkDHCP{Name: network}
	var persistent, live string
	err := c.Read(ctx, "read network "+network, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(network)
		if err != nil {
			return err
		}
		active, err := l.NetworkIsActive(n)
		if err != nil {
			return err
		}
		out.Active = active == 1
		if persistent, err = l.NetworkGetXMLDesc(n, uint32(golibvirt.NetworkXMLInactive)); err != nil {
			return err
		}
		if out.Active {
			live, err = l.NetworkGetXMLDesc(n, 0)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var def libvirtxml.Network
	if err := def.Unmarshal(persistent); err != nil {
		return nil, fmt.Errorf("parse the definition of network %s: %w", network, err)
	}
	if out.Subnets, err = Subnets(&def); err != nil {
		return nil, fmt.Errorf("network %s: %w", network, err)
	}
	out.Hosts = dhcpHosts(&def)
	if out.Active {
		var liveDef libvirtxml.Network
		if err := liveDef.Unmarshal(live); err != nil {
			return nil, fmt.Errorf("parse the live XML of network %s: %w", network, err)
		}
		out.Live = dhcpHosts(&liveDef)
	}
	return out, nil
}

// Subnets lists a network's IPv4 subnets (netmask or prefix form) with their DHCP ranges.
func Subnets(def *libvirtxml.Network) ([]capi.Subnet, error) {
	var out []capi.Subnet
	for _, ip := range def.IPs {
		if ip.Family == "ipv6" || strings.Contains(ip.Address, ":") {
			continue
		}
		var ranges []capi.Range
		if ip.DHCP != nil {
			for _, r := range ip.DHCP.Ranges {
				s, err1 := netip.ParseAddr(r.Start)
				e, err2 := netip.ParseAddr(r.End)
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("DHCP range %s-%s is not a pair of IPv4 addresses", r.Start, r.End)
				}
				ranges = append(ranges, capi.Range{Start: s, End: e})
			}
		}
		s, err := capi.ParseSubnet(ip.Address, ip.Netmask, ip.Prefix, ranges)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func dhcpHosts(def *libvirtxml.Network) []DHCPHost {
	var out []DHCPHost
	for _, ip := range def.IPs {
		if ip.DHCP == nil {
			continue
		}
		for _, h := range ip.DHCP.Hosts {
			out = append(out, DHCPHost{MAC: strings.ToLower(h.MAC), IP: h.IP, Name: h.Name})
		}
	}
	return out
}

// DHCPUpdate is what to do with a host entry.
type DHCPUpdate int

const (
	DHCPAdd DHCPUpdate = iota
	DHCPModify
	DHCPDelete
)

// UpdateDHCPHost adds, modifies or deletes a host entry in the persistent definition and,
// when the network runs, in the live network too (network-update: no restart of the
// network, no interruption for its guests).
func (c *Client) UpdateDHCPHost(ctx context.Context, network string, what DHCPUpdate, h DHCPHost) error {
	entry := libvirtxml.NetworkDHCPHost{MAC: h.MAC, IP: h.IP, Name: h.Name}
	b, err := xml.Marshal(entry)
	if err != nil {
		return err
	}
	cmd := map[DHCPUpdate]golibvirt.NetworkUpdateCommand{
		DHCPAdd: golibvirt.NetworkUpdateCommandAddLast, DHCPModify: golibvirt.NetworkUpdateCommandModify, DHCPDelete: golibvirt.NetworkUpdateCommandDelete,
	}[what]
	op := map[DHCPUpdate]string{DHCPAdd: "add", DHCPModify: "modify", DHCPDelete: "delete"}[what]
	return c.Write(ctx, fmt.Sprintf("%s DHCP host %s in network %s", op, h.MAC, network), func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(network)
		if err != nil {
			return err
		}
		active, err := l.NetworkIsActive(n)
		if err != nil {
			return err
		}
		flags := golibvirt.NetworkUpdateAffectConfig
		if active == 1 {
			flags |= golibvirt.NetworkUpdateAffectLive
		}
		// Name the <ip> element whose subnet holds the address: with -1 libvirt takes the
		// first element that has DHCP, which may be an IPv6 one.
		parent := int32(-1)
		if x, err := l.NetworkGetXMLDesc(n, uint32(golibvirt.NetworkXMLInactive)); err == nil {
			var def libvirtxml.Network
			if def.Unmarshal(x) == nil {
				parent = int32(hostxml.IPIndexFor(&def, h.IP))
			}
		}
		return l.NetworkUpdateCompat(n, cmd, golibvirt.NetworkSectionIPDhcpHost, parent, string(b), flags)
	})
}
