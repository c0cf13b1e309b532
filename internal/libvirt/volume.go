package libvirt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// VolumeRef names a volume: by its key, by <pool>/<name>, or by a key with the pool (and
// name) it is known to be in.
//
// Keys come in many shapes: a path for dir, fs, netfs and logical pools, an LVM UUID or an
// iSCSI LUN id elsewhere, "<ceph pool>/<image>" for rbd pools. So a key is always tried
// as a key first, and "<pool>/<name>" is only the fallback for an id that names no key.
//
// libvirt looks keys and paths up in running pools only: the volumes of a stopped pool (a
// host rebooted without pool autostart, an NFS pool whose share did not mount) answer
// "no such volume" while their files are all there. So a ref carries the pool when it is
// known (every resource has it in state), and LookupVolume asks that pool before it calls
// a volume gone: a pool that exists but is not running is a *PoolInactiveError, never
// ErrNotFound; only a pool that no longer exists at all makes its volumes gone.
type VolumeRef struct {
	// Key is the volume's key, tried first when set.
	Key string
	// Pool is the pool the volume is in, when known. With Key alone it only tells
	// "gone" (the pool runs, or is gone itself) from "in a stopped pool".
	Pool string
	// Name is the volume's name in Pool: the lookup when Key is empty, and the fallback
	// when no volume has Key (an id the user wrote as <pool>/<name>).
	Name string
}

// ParseVolumeRef reads a volume id as users write it (import ids, volume_id,
// backing_volume, clone_from): any key libvirt uses, or <pool>/<name>. Every id is a key
// first; one of the form <pool>/<name> (not starting with "/") is also that pool and
// name, looked up when no volume has it as its key. Only an empty id and control
// characters are refused.
func ParseVolumeRef(id string) (VolumeRef, error) {
	if id == "" {
		return VolumeRef{}, fmt.Errorf("volume id is empty: expected the volume's key (libvirt_volume.id; for directory pools its path) or <pool>/<name>")
	}
	if strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return VolumeRef{}, fmt.Errorf("volume id %q contains control characters: expected the volume's key (libvirt_volume.id) or <pool>/<name>", id)
	}
	ref := VolumeRef{Key: id}
	if pool, name, ok := strings.Cut(id, "/"); ok && pool != "" && name != "" && !strings.Contains(name, "/") {
		ref.Pool, ref.Name = pool, name
	}
	return ref, nil
}

// String is the id the ref was parsed from (ParseVolumeRef(r.String()) gives r back).
func (r VolumeRef) String() string {
	if r.Key != "" {
		return r.Key
	}
	return r.Pool + "/" + r.Name
}

// PoolInactiveError says a volume cannot be looked up because its storage pool exists but
// is not running. The volume is not gone: a resource keeps its state, and a delete deletes
// nothing.
type PoolInactiveError struct {
	Pool   string // the pool's name
	Volume string // the volume as it was asked for: key, path or name
}

func (e *PoolInactiveError) Error() string {
	return fmt.Sprintf("storage pool %q is not running, so libvirt cannot see volume %s in it (the volume is not gone: "+
		"libvirt only looks into running pools). Start the pool: `virsh pool-start %s`; to have it start with the host, "+
		"set autostart = true on its libvirt_pool (or run `virsh pool-autostart %s`)", e.Pool, e.Volume, e.Pool, e.Pool)
}

// FromAnswer makes it an rpc.Verdict: drawn from libvirt's answers, never the transport.
func (e *PoolInactiveError) FromAnswer() {}

// volumeLookups are the calls LookupVolume makes (a *golibvirt.Libvirt; a fake in tests).
type volumeLookups interface {
	StorageVolLookupByKey(key string) (golibvirt.StorageVol, error)
	StorageVolLookupByName(pool golibvirt.StoragePool, name string) (golibvirt.StorageVol, error)
	StoragePoolLookupByName(name string) (golibvirt.StoragePool, error)
	StoragePoolIsActive(pool golibvirt.StoragePool) (int32, error)
	ConnectListAllStoragePools(needResults int32, flags golibvirt.ConnectListAllStoragePoolsFlags) ([]golibvirt.StoragePool, uint32, error)
	StoragePoolGetXMLDesc(pool golibvirt.StoragePool, flags golibvirt.StorageXMLFlags) (string, error)
}

// LookupVolume finds the volume ref names on the given connection (see VolumeRef).
// A volume that is not there, or whose pool is not there, is libvirt's "no such ..."
// error, which classify turns into ErrNotFound; one whose pool is stopped is a
// *PoolInactiveError.
func LookupVolume(l volumeLookups, ref VolumeRef) (golibvirt.StorageVol, error) {
	if ref.Key != "" {
		v, err := l.StorageVolLookupByKey(ref.Key)
		if err == nil || !isNotFound(err) {
			return v, err
		}
		switch {
		case ref.Pool == "":
			// Which pool would hold it? For a path, a stopped pool whose directory it is in.
			if strings.HasPrefix(ref.Key, "/") {
				if perr := inactivePoolHolding(l, ref.Key); perr != nil {
					return golibvirt.StorageVol{}, perr
				}
			}
			return v, err
		case ref.Name == "":
			if perr := poolRunning(l, ref.Pool, ref.Key); perr != nil && !isNotFound(perr) {
				return golibvirt.StorageVol{}, perr
			}
			return v, err // the pool runs (the volume is gone), or is gone itself
		}
	}
	p, err := l.StoragePoolLookupByName(ref.Pool)
	if err != nil {
		return golibvirt.StorageVol{}, err
	}
	if err := checkRunning(l, p, ref.Name); err != nil {
		return golibvirt.StorageVol{}, err
	}
	return l.StorageVolLookupByName(p, ref.Name)
}

// poolRunning returns nil when the named pool runs, its lookup error when there is none
// (or the lookup fails), and a *PoolInactiveError for volume when it is stopped.
func poolRunning(l volumeLookups, pool, volume string) error {
	p, err := l.StoragePoolLookupByName(pool)
	if err != nil {
		return err
	}
	return checkRunning(l, p, volume)
}

func checkRunning(l volumeLookups, p golibvirt.StoragePool, volume string) error {
	active, err := l.StoragePoolIsActive(p)
	if err != nil {
		return err
	}
	if active != 1 {
		return &PoolInactiveError{Pool: p.Name, Volume: volume}
	}
	return nil
}

// inactivePoolHolding returns a *PoolInactiveError when path lies in the target
// directory of a stopped pool (where the volume of that path would be), nil when no
// stopped pool holds it, or the error that kept it from finding out: a path is never
// called gone while that is unknown.
func inactivePoolHolding(l volumeLookups, path string) error {
	pools, _, err := l.ConnectListAllStoragePools(1, golibvirt.ConnectListStoragePoolsInactive)
	if err != nil {
		return err
	}
	for _, p := range pools {
		doc, err := l.StoragePoolGetXMLDesc(p, golibvirt.StorageXMLInactive)
		if err != nil {
			if isNotFound(err) {
				continue // undefined meanwhile
			}
			return err
		}
		var x libvirtxml.StoragePool
		if err := x.Unmarshal(doc); err != nil {
			return fmt.Errorf("parse the definition of storage pool %s: %w", p.Name, err)
		}
		if x.Target == nil || x.Target.Path == "" {
			continue
		}
		if dir := filepath.Clean(x.Target.Path); dir != "/" && strings.HasPrefix(filepath.Clean(path), dir+"/") {
			return &PoolInactiveError{Pool: p.Name, Volume: path}
		}
	}
	return nil
}

// IsPoolInactive reports whether err says a volume's pool is not running.
func IsPoolInactive(err error) bool {
	var pi *PoolInactiveError
	return errors.As(err, &pi)
}

// VolumePath returns the path of the volume a reference names (what a domain's disk uses).
func (c *Client) VolumePath(ctx context.Context, ref VolumeRef) (string, error) {
	var path string
	err := c.Read(ctx, "look up volume "+ref.String(), func(l *golibvirt.Libvirt) error {
		v, err := LookupVolume(l, ref)
		if err != nil {
			return err
		}
		path, err = l.StorageVolGetPath(v)
		return err
	})
	return path, err
}

// DeleteVolume removes a volume. A volume already gone is ErrNotFound.
func (c *Client) DeleteVolume(ctx context.Context, ref VolumeRef) error {
	return c.Write(ctx, "delete volume "+ref.String(), func(l *golibvirt.Libvirt) error {
		v, err := LookupVolume(l, ref)
		if err != nil {
			return err
		}
		return l.StorageVolDelete(v, 0)
	})
}
