package libvirt

import (
	"context"
	"errors"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Devices changed, plugged and unplugged on a running domain; each call is one RPC on
// the running domain (and its persistent definition where it says so). The waiting for
// a guest to let a device go is the caller's (workflow), which reads the live XML.

const liveAndConfig = golibvirt.DomainDeviceModifyLive | golibvirt.DomainDeviceModifyConfig

// UpdateDevice rewrites a device in place (a NIC's link state, a cdrom's medium), live
// and persistent. With force, a refusal because the guest locked the tray is retried
// with the force flag (the medium is then swapped under the guest).
func (c *Client) UpdateDevice(ctx context.Context, id, xml string, force bool) error {
	return c.onDomain(ctx, "update a device of", id, func(l *golibvirt.Libvirt, d Domain) error {
		err := l.DomainUpdateDeviceFlags(d, xml, liveAndConfig)
		if err != nil && force && strings.Contains(strings.ToLower(err.Error()), "locked") {
			err = l.DomainUpdateDeviceFlags(d, xml, liveAndConfig|golibvirt.DomainDeviceModifyForce)
		}
		return err
	})
}

// AttachDevice plugs the device XML into a running domain and its persistent definition.
// A USB hostdev's ids go in the order libvirt's schema wants, as in a define
// (domain_xml_order.go); so they do in both detaches.
func (c *Client) AttachDevice(ctx context.Context, id, xml string) error {
	xml = vendorFirst(xml)
	return c.onDomain(ctx, "attach a device to", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainAttachDeviceFlags(d, xml, uint32(liveAndConfig))
	})
}

// DetachDeviceLive asks the running domain to let the device go: by its alias (from the
// live XML) when it has one, else by its XML. libvirt returns once the request is made,
// or after its own short wait; the device is gone when the live XML no longer has it.
// A device libvirt no longer has returns an error IsDeviceMissing reports.
func (c *Client) DetachDeviceLive(ctx context.Context, id, alias, xml string) error {
	xml = vendorFirst(xml)
	return c.onDomain(ctx, "detach a device from", id, func(l *golibvirt.Libvirt, d Domain) error {
		if alias != "" {
			err := l.DomainDetachDeviceAlias(d, alias, uint32(golibvirt.DomainDeviceModifyLive))
			if err == nil || lvCode(err) == golibvirt.ErrDeviceMissing {
				return err
			}
		}
		return l.DomainDetachDeviceFlags(d, xml, uint32(golibvirt.DomainDeviceModifyLive))
	})
}

// DetachDeviceConfig removes the device from the persistent definition; one it no longer
// has is not an error.
func (c *Client) DetachDeviceConfig(ctx context.Context, id, xml string) error {
	xml = vendorFirst(xml)
	err := c.onDomain(ctx, "detach a device from the definition of", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainDetachDeviceFlags(d, xml, uint32(golibvirt.DomainDeviceModifyConfig))
	})
	if IsDeviceMissing(err) {
		return nil
	}
	return err
}

// IsDeviceMissing reports whether err is libvirt's "device not found".
func IsDeviceMissing(err error) bool { return HasCode(err, golibvirt.ErrDeviceMissing) }

func lvCode(err error) golibvirt.ErrorNumber {
	var e golibvirt.Error
	if errors.As(err, &e) {
		return golibvirt.ErrorNumber(e.Code)
	}
	return -1
}
