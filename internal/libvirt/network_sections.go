package libvirt

import (
	"context"
	"encoding/xml"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
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
		switch ch.Op {
		case netaddr.Add:
			u.command = golibvirt.NetworkUpdateCommandAddLast
		case netaddr.Modify:
			u.command = golibvirt.NetworkUpdateCommandModify
		case netaddr.Delete:
			u.command = golibvirt.NetworkUpdateCommandDelete
		}
		if err := c.networkUpdate(ctx, name, ch.String(), u); err != nil {
			return err
		}
	}
	return nil
}
