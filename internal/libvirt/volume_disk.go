package libvirt

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// DiskVolume is the volume behind a domain disk: where it lives and what it sits on.
type DiskVolume struct {
	Key, Name, Pool, Path, Format string
	Capacity                      uint64
	Backing, BackingFormat        string // the backing file of an overlay ("" for a standalone image)
}

// DiskVolumeByPath finds the volume a disk file is (ErrNotFound when no pool holds it, a
// *PoolInactiveError when a stopped pool would: libvirt looks paths up in running pools
// only). With pool and volume given instead (a <disk type='volume'>), it looks that up.
func (c *Client) DiskVolumeByPath(ctx context.Context, path, pool, volume string) (*DiskVolume, error) {
	op := "look up the volume of disk file " + path
	if path == "" {
		op = "look up volume " + pool + "/" + volume
	}
	var out *DiskVolume
	var info *VolumeInfo
	err := c.Read(ctx, op, func(l *golibvirt.Libvirt) error {
		var v golibvirt.StorageVol
		var err error
		if path != "" {
			v, err = l.StorageVolLookupByPath(path)
			if isNotFound(err) {
				if perr := inactivePoolHolding(l, path); perr != nil {
					return perr
				}
			}
		} else {
			v, err = LookupVolume(l, VolumeRef{Pool: pool, Name: volume})
		}
		if err != nil {
			return err
		}
		info, err = volumeInfo(l, v)
		if err != nil {
			return err
		}
		dv := &DiskVolume{Key: info.Key, Name: info.Name, Pool: v.Pool, Path: info.Path, Format: info.Format, Capacity: info.Capacity, Backing: info.Backing}
		if dv.Format == "" {
			dv.Format = "raw"
		}
		if dv.Backing != "" {
			doc, err := l.StorageVolGetXMLDesc(v, 0)
			if err != nil {
				return err
			}
			var x libvirtxml.StorageVolume
			if err := x.Unmarshal(doc); err != nil {
				return err
			}
			if x.BackingStore != nil && x.BackingStore.Format != nil {
				dv.BackingFormat = x.BackingStore.Format.Type
			}
			if dv.BackingFormat == "" {
				dv.BackingFormat = formatFromName(dv.Backing)
			}
		}
		out = dv
		return nil
	})
	if err != nil {
		return out, err
	}
	// The format is the trusted one (TrustedFormat), not libvirt's probe; a volume taken
	// for raw has no backing file whatever its bytes say.
	format, doubt, err := c.trustVolume(ctx, info)
	if err != nil {
		return nil, err
	}
	out.Format = format
	if doubt != nil {
		out.Capacity, out.Backing, out.BackingFormat = RawCapacity(info), "", ""
	}
	return out, nil
}

// DiskSource resolves what a domain disk points at: a volume reference (key or
// pool/name) or a path. It returns the path and the image format (the volume's own
// format when libvirt knows the file as a volume, else guessed from the file name).
func (c *Client) DiskSource(ctx context.Context, volumeID, path string) (string, string, error) {
	src, err := c.DiskSourceOf(ctx, volumeID, path)
	return src.Path, src.Format, err
}

// ResolvedDisk is what a domain disk's source resolves to (DiskSourceOf).
type ResolvedDisk struct {
	Path, Format string
	// Encryption is the volume's, with the secret libvirt reports for it, else the volume
	// secret whose usage names the path; nil for a plain volume, a file outside libvirt,
	// or an encrypted volume whose secret no one can tell.
	Encryption *VolumeEncryption
}

// DiskSourceOf is DiskSource with the volume's encryption.
func (c *Client) DiskSourceOf(ctx context.Context, volumeID, path string) (ResolvedDisk, error) {
	op := "look up disk " + path
	if volumeID != "" {
		op = "look up volume " + volumeID
	}
	var format string
	var enc *VolumeEncryption
	var info *VolumeInfo
	err := c.Read(ctx, op, func(l *golibvirt.Libvirt) error {
		var vol golibvirt.StorageVol
		var err error
		if volumeID != "" {
			ref, perr := ParseVolumeRef(volumeID)
			if perr != nil {
				return perr
			}
			if vol, err = LookupVolume(l, ref); err != nil {
				return err
			}
			if path, err = l.StorageVolGetPath(vol); err != nil {
				return err
			}
		} else if vol, err = l.StorageVolLookupByPath(path); err != nil {
			var lerr golibvirt.Error
			if errors.As(err, &lerr) && golibvirt.ErrorNumber(lerr.Code) == golibvirt.ErrNoStorageVol {
				// No running pool holds the file. One of a stopped pool would be taken for a
				// file outside libvirt and its format guessed: say the pool is stopped instead.
				if perr := inactivePoolHolding(l, path); perr != nil {
					return perr
				}
				format = formatFromName(path)
				return nil
			}
			return err
		}
		if info, err = volumeInfo(l, vol); err != nil {
			return err
		}
		enc = info.Encryption
		return nil
	})
	if err == nil && info != nil {
		// A volume's format is the trusted one (TrustedFormat): never a qcow2 header that
		// a guest wrote on a raw disk, so a new disk's driver never follows its backing file.
		format, _, err = c.trustVolume(ctx, info)
	}
	return ResolvedDisk{Path: path, Format: format, Encryption: enc}, err
}

func formatFromName(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".qcow2", ".qcow":
		return "qcow2"
	case ".vmdk":
		return "vmdk"
	}
	return "raw"
}
