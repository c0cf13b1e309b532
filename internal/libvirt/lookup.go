package libvirt

import (
	"context"
	"errors"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// NetworkActive looks a network up by name: ErrNotFound when there is none, else whether
// it runs.
func (c *Client) NetworkActive(ctx context.Context, name string) (bool, error) {
	var active int32
	err := c.Read(ctx, "look up network "+name, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(name)
		if err != nil {
			return err
		}
		active, err = l.NetworkIsActive(n)
		return err
	})
	return active == 1, err
}

// PoolActive looks a storage pool up by name: ErrNotFound when there is none, else
// whether it runs.
func (c *Client) PoolActive(ctx context.Context, name string) (bool, error) {
	var active int32
	err := c.Read(ctx, "look up storage pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		active, err = l.StoragePoolIsActive(p)
		return err
	})
	return active == 1, err
}

func isNotFound(err error) bool { return errors.Is(classify("", "", err), ErrNotFound) }
