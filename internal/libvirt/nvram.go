package libvirt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// CopyNVRAM copies a UEFI varstore file into dst, a new file in the same directory,
// through libvirt's storage API (so it works on remote hosts too): the directory is
// reached through the pool that already holds src, else through a transient dir pool
// made for the copy and destroyed after it (destroying a dir pool leaves its files).
// It reports false, and copies nothing, when src does not exist.
func (c *Client) CopyNVRAM(ctx context.Context, src, dst string) (bool, error) {
	if filepath.Dir(src) != filepath.Dir(dst) {
		return false, fmt.Errorf("copy nvram %s to %s: both must be in one directory", src, dst)
	}
	copied := false
	err := c.Write(ctx, fmt.Sprintf("copy nvram %s to %s", src, dst), func(l *golibvirt.Libvirt) error {
		var pool golibvirt.StoragePool
		v, err := l.StorageVolLookupByPath(src)
		if err == nil {
			if pool, err = l.StoragePoolLookupByVolume(v); err != nil {
				return err
			}
		} else {
			var lerr golibvirt.Error
			if !errors.As(err, &lerr) || golibvirt.ErrorNumber(lerr.Code) != golibvirt.ErrNoStorageVol {
				return err
			}
			var rnd [4]byte
			_, _ = rand.Read(rnd[:])
			name := "kvmforge-nvram-" + hex.EncodeToString(rnd[:])
			px, err := dirPoolXML(name, filepath.Dir(src))
			if err != nil {
				return err
			}
			if pool, err = l.StoragePoolCreateXML(px, 0); err != nil {
				return fmt.Errorf("reach the nvram directory %s through a transient pool: %w", filepath.Dir(src), err)
			}
			defer func() { _ = l.StoragePoolDestroy(pool) }()
			v, err = l.StorageVolLookupByName(pool, filepath.Base(src))
			if err != nil {
				var lerr golibvirt.Error
				if errors.As(err, &lerr) && golibvirt.ErrorNumber(lerr.Code) == golibvirt.ErrNoStorageVol {
					return nil // the source has no varstore yet: libvirt makes one from the template
				}
				return err
			}
		}
		_, capacity, _, err := l.StorageVolGetInfo(v)
		if err != nil {
			return err
		}
		// Capacity only, no allocation: the copy has exactly the source's size (pflash
		// needs it), where a copy of the source's own XML would round up to its allocation.
		vx, err := rawVolumeXML(filepath.Base(dst), capacity)
		if err != nil {
			return err
		}
		if _, err := l.StorageVolCreateXMLFrom(pool, vx, v, 0); err != nil {
			return err
		}
		copied = true
		return nil
	})
	return copied, err
}

// dirPoolXML is the definition of a dir pool on directory dir.
func dirPoolXML(name, dir string) (string, error) {
	return (&libvirtxml.StoragePool{Type: "dir", Name: name, Target: &libvirtxml.StoragePoolTarget{Path: dir}}).Marshal()
}

// rawVolumeXML is the definition of a raw volume of exactly capacity bytes (no allocation).
func rawVolumeXML(name string, capacity uint64) (string, error) {
	return (&libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: capacity},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "raw"}},
	}).Marshal()
}
