package libvirt

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// NetworkState is a network as libvirt has it.
type NetworkState struct {
	UUID       string
	Active     bool
	Autostart  bool
	Persistent bool
	Def        *libvirtxml.Network // persistent definition (the live one for a transient network)
	Live       *libvirtxml.Network // running network; nil when inactive
	// Doc and LiveDoc are Def and Live with what libvirtxml drops (port group bandwidth).
	Doc, LiveDoc *hostxml.NetworkXML
	// Connections counts the interfaces of running domains plugged into the network
	// (libvirt's connections attribute of the live XML).
	Connections int
}

// ReadNetwork reads a network's definition, live XML, state and autostart flag.
func (c *Client) ReadNetwork(ctx context.Context, name string) (*NetworkState, error) {
	out := &NetworkState{}
	var persistent, live string
	err := c.Read(ctx, "read network "+name, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(name)
		if err != nil {
			return err
		}
		active, err := l.NetworkIsActive(n)
		if err != nil {
			return err
		}
		pers, err := l.NetworkIsPersistent(n)
		if err != nil {
			return err
		}
		auto, err := l.NetworkGetAutostart(n)
		if err != nil {
			return err
		}
		out.Active, out.Persistent, out.Autostart = active == 1, pers == 1, auto == 1
		flags := uint32(golibvirt.NetworkXMLInactive)
		if !out.Persistent {
			flags = 0
		}
		if persistent, err = l.NetworkGetXMLDesc(n, flags); err != nil {
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
	if out.Doc, err = hostxml.ParseNetworkXML(persistent); err != nil {
		return nil, fmt.Errorf("parse the definition of network %s: %w", name, err)
	}
	out.Def = out.Doc.Network
	out.UUID = out.Def.UUID
	if out.Active {
		if out.LiveDoc, err = hostxml.ParseNetworkXML(live); err != nil {
			return nil, fmt.Errorf("parse the live XML of network %s: %w", name, err)
		}
		out.Live = out.LiveDoc.Network
		var conns struct {
			N int `xml:"connections,attr"`
		}
		if xml.Unmarshal([]byte(live), &conns) == nil {
			out.Connections = conns.N
		}
	}
	return out, nil
}

// CreateNetwork defines a network, sets autostart and starts it when active. When a step
// after the definition fails, the definition is removed again, so that nothing is left on
// the host that the caller does not know about.
//
// Every step is safe to send again, so each is re-sent when its answer is lost (a daemon
// restart, a dropped link; see writeSettled): the definition carries a UUID chosen here,
// and defining the same name with the same UUID again only rewrites it, while a network
// of that name that was there before has another UUID and refuses it; autostart and
// start look before they change anything.
func (c *Client) CreateNetwork(ctx context.Context, def *hostxml.NetworkXML, active, autostart bool) error {
	x := *def.Network
	d := hostxml.NetworkXML{Network: &x, PortGroups: def.PortGroups}
	if d.UUID == "" {
		d.UUID = uuid.NewString()
	}
	id, err := uuid.Parse(d.UUID)
	if err != nil {
		return fmt.Errorf("network %s: uuid %q: %w", d.Name, d.UUID, err)
	}
	doc, err := d.Marshal()
	if err != nil {
		return fmt.Errorf("network %s: %w", d.Name, err)
	}
	// The handle names the network by its UUID: the rollback removes this definition and
	// never another network of the same name.
	net := golibvirt.Network{Name: d.Name, UUID: golibvirt.UUID(id)}
	undo := func(cause error) error {
		uctx, cancel := rollbackContext(ctx)
		defer cancel()
		uerr := c.writeSettled(uctx, "remove half-made network "+d.Name, func(l *golibvirt.Libvirt) error {
			_ = l.NetworkDestroy(net)
			return l.NetworkUndefine(net)
		})
		if uerr != nil && !errors.Is(uerr, ErrNotFound) {
			return fmt.Errorf("%w (and removing the half-made network failed: %v; check with `virsh net-list --all` "+
				"and remove network %s (uuid %s) by hand: virsh net-destroy %s; virsh net-undefine %s)", cause, uerr, d.Name, d.UUID, d.Name, d.Name)
		}
		return cause
	}
	if err := c.writeSettled(ctx, "define network "+d.Name, func(l *golibvirt.Libvirt) error {
		_, err := l.NetworkDefineXML(doc)
		return err
	}); err != nil {
		if IsTransport(err) {
			return undo(err) // the define may have landed
		}
		return err
	}
	if autostart {
		if err := c.SetNetworkAutostart(ctx, d.Name, true); err != nil {
			return undo(err)
		}
	}
	if active {
		if err := c.SetNetworkActive(ctx, d.Name, true); err != nil {
			return undo(err)
		}
	}
	return nil
}

// SetNetworkAutostart turns autostart on or off (re-sent when its answer is lost: setting
// it twice is setting it once).
func (c *Client) SetNetworkAutostart(ctx context.Context, name string, on bool) error {
	v := int32(0)
	if on {
		v = 1
	}
	return c.writeSettled(ctx, fmt.Sprintf("set autostart=%t on network %s", on, name), func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(name)
		if err != nil {
			return err
		}
		return l.NetworkSetAutostart(n, v)
	})
}

// SetNetworkActive starts or stops a network (no-op when it already is so; re-sent when
// its answer is lost, since it looks first).
func (c *Client) SetNetworkActive(ctx context.Context, name string, on bool) error {
	op := "start network " + name
	if !on {
		op = "stop network " + name
	}
	return c.writeSettled(ctx, op, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(name)
		if err != nil {
			return err
		}
		active, err := l.NetworkIsActive(n)
		if err != nil {
			return err
		}
		switch {
		case on && active == 0:
			return l.NetworkCreate(n)
		case !on && active == 1:
			return l.NetworkDestroy(n)
		}
		return nil
	})
}

// DeleteNetwork stops and undefines a network. A missing network is ErrNotFound.
func (c *Client) DeleteNetwork(ctx context.Context, name string) error {
	return c.Write(ctx, "delete network "+name, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(name)
		if err != nil {
			return err
		}
		active, err := l.NetworkIsActive(n)
		if err != nil {
			return err
		}
		if active == 1 {
			if err := l.NetworkDestroy(n); err != nil {
				return err
			}
		}
		pers, err := l.NetworkIsPersistent(n)
		if err != nil || pers == 0 {
			return err
		}
		return l.NetworkUndefine(n)
	})
}

// UpdateNetwork applies host-entry changes in order with network-update, to the
// persistent definition and, when the network runs, to the live network as well (no
// restart: dnsmasq re-reads its host files on SIGHUP). It stops at the first failure,
// naming the entry.
func (c *Client) UpdateNetwork(ctx context.Context, name string, changes []netaddr.HostChange) error {
	for _, ch := range changes {
		u, err := networkUpdateOf(ch)
		if err != nil {
			return fmt.Errorf("%s in network %s: %w", ch, name, err)
		}
		if err := c.networkUpdate(ctx, name, ch.String(), u); err != nil {
			return err
		}
	}
	return nil
}

// networkUpdate sends one network-update, to the definition and, when the network
// runs, to the live network too.
func (c *Client) networkUpdate(ctx context.Context, name, what string, u networkUpdate) error {
	return c.Write(ctx, fmt.Sprintf("%s in network %s (network-update)", what, name), func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(name)
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
		return l.NetworkUpdateCompat(n, u.command, u.section, u.parent, u.xml, flags)
	})
}

// networkUpdate is a host change in go-libvirt's terms.
type networkUpdate struct {
	command golibvirt.NetworkUpdateCommand
	section golibvirt.NetworkUpdateSection
	parent  int32 // index of the <ip> element for the DHCP section (-1: libvirt picks)
	xml     string
}

func networkUpdateOf(ch netaddr.HostChange) (networkUpdate, error) {
	u := networkUpdate{parent: int32(ch.Parent)}
	var err error
	if u.command, err = commandOf(ch.Op); err != nil {
		return u, err
	}
	var elem any
	switch {
	case ch.DHCP != nil && ch.DNS == nil:
		u.section, elem = golibvirt.NetworkSectionIPDhcpHost, ch.DHCP.XML()
	case ch.DNS != nil && ch.DHCP == nil:
		// DNS hosts are not per <ip> element.
		u.section, u.parent, elem = golibvirt.NetworkSectionDNSHost, -1, ch.DNS.XML()
	default:
		return u, fmt.Errorf("a host change names exactly one DHCP or DNS host entry")
	}
	b, err := xml.Marshal(elem)
	u.xml = string(b)
	return u, err
}

// commandOf is network-update's command for op (additions go last).
func commandOf(op netaddr.Op) (golibvirt.NetworkUpdateCommand, error) {
	switch op {
	case netaddr.Add:
		return golibvirt.NetworkUpdateCommandAddLast, nil
	case netaddr.Modify:
		return golibvirt.NetworkUpdateCommandModify, nil
	case netaddr.Delete:
		return golibvirt.NetworkUpdateCommandDelete, nil
	}
	return 0, fmt.Errorf("unknown host change %d", op)
}
