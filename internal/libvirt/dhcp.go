package libvirt

import (
	"context"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// ReadNetworkDHCP reads what a writer of a network's DHCP host entries needs: its
// subnets and the entries of its persistent definition and, when it runs, of the live
// network. A missing network is ErrNotFound.
func (c *Client) ReadNetworkDHCP(ctx context.Context, network string) (*netaddr.Network, error) {
	var persistent, live string
	err := c.Read(ctx, "read network "+network, func(l *golibvirt.Libvirt) error {
		persistent, live = "", ""
		n, err := l.NetworkLookupByName(network)
		if err != nil {
			return err
		}
		active, err := l.NetworkIsActive(n)
		if err != nil {
			return err
		}
		if persistent, err = l.NetworkGetXMLDesc(n, uint32(golibvirt.NetworkXMLInactive)); err != nil {
			return err
		}
		if active == 1 {
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
	var liveDef *libvirtxml.Network
	if live != "" {
		liveDef = &libvirtxml.Network{}
		if err := liveDef.Unmarshal(live); err != nil {
			return nil, fmt.Errorf("parse the live XML of network %s: %w", network, err)
		}
	}
	return netaddr.NewNetwork(&def, liveDef)
}
