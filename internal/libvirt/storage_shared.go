package libvirt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// SharesDirWith tells whether the directory dir on c's host is the same storage as the
// directory of that path on other's host (an NFS or cluster filesystem both mount): then
// deleting a file here deletes it there too, and a "copy" there is this very file. It asks
// the only way libvirt's API allows: a marker volume made in the pool over dir here, looked
// for in the pool over dir there. When it cannot tell (no active pool over dir on either
// host, a call that fails) it answers true: the callers then keep the file.
func (c *Client) SharesDirWith(ctx context.Context, other *Client, dir string) (bool, error) {
	here, err := c.poolOver(ctx, dir)
	if err != nil {
		return true, err
	}
	there, err := other.poolOver(ctx, dir)
	if err != nil {
		return true, err
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := ".kvmforge-shared-probe-" + hex.EncodeToString(b)
	doc, err := (&libvirtxml.StorageVolume{Name: name, Capacity: &libvirtxml.StorageVolumeSize{Value: 0},
		Target: &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "raw"}}}).Marshal()
	if err != nil {
		return true, err
	}
	err = c.Write(ctx, "make a marker volume in pool "+here, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(here)
		if err != nil {
			return err
		}
		_, err = l.StorageVolCreateXML(p, doc, 0)
		return err
	})
	if err != nil {
		return true, err
	}
	marker := filepath.Join(dir, name)
	var seen bool
	defer func() {
		// The marker goes; where it was seen, that pool is refreshed once more so that it
		// does not linger in its list.
		wctx := context.WithoutCancel(ctx)
		c.RemoveVolumesAt(wctx, []string{marker})
		if seen {
			_ = other.Write(wctx, "refresh pool "+there, func(l *golibvirt.Libvirt) error {
				p, err := l.StoragePoolLookupByName(there)
				if err != nil {
					return err
				}
				return l.StoragePoolRefresh(p, 0)
			})
		}
	}()
	err = other.Write(ctx, "look for the marker in pool "+there, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(there)
		if err != nil {
			return err
		}
		if err := l.StoragePoolRefresh(p, 0); err != nil {
			return err
		}
		_, err = l.StorageVolLookupByPath(marker)
		switch {
		case err == nil:
			seen = true
		case isNotFound(err):
		default:
			return err
		}
		return nil
	})
	if err != nil {
		return true, err
	}
	return seen, nil
}

// poolOver is the name of the active pool whose directory is dir.
func (c *Client) poolOver(ctx context.Context, dir string) (string, error) {
	var name string
	err := c.Read(ctx, "find the pool over "+dir, func(l *golibvirt.Libvirt) error {
		pools, _, err := l.ConnectListAllStoragePools(1, golibvirt.ConnectListStoragePoolsActive)
		if err != nil {
			return err
		}
		for _, p := range pools {
			doc, err := l.StoragePoolGetXMLDesc(p, 0)
			if err != nil {
				continue
			}
			var x libvirtxml.StoragePool
			if x.Unmarshal(doc) == nil && x.Target != nil && filepath.Clean(x.Target.Path) == filepath.Clean(dir) {
				name = p.Name
				return nil
			}
		}
		return errors.New("no active pool over " + dir)
	})
	return name, err
}
