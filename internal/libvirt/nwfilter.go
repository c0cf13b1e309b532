package libvirt

import (
	"context"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// LookupNWFilter looks a network filter (nwfilter) up by name: ErrNotFound when there is
// none. libvirt defines a domain whose NIC names a missing filter; only its start fails.
func (c *Client) LookupNWFilter(ctx context.Context, name string) error {
	return c.Read(ctx, "look up nwfilter "+name, func(l *golibvirt.Libvirt) error {
		_, err := l.NwfilterLookupByName(name)
		return err
	})
}
