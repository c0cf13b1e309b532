package libvirt

import (
	"context"
	"errors"
	"fmt"
	"sort"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"
)

// PoolState is a storage pool as libvirt has it.
type PoolState struct {
	UUID       string
	Active     bool
	Autostart  bool
	Def        *libvirtxml.StoragePool // persistent definition
	Capacity   uint64                  // bytes, after a refresh (0 when inactive)
	Allocation uint64
	Available  uint64
}

// ReadPool refreshes an active pool (so that its sizes are current) and reads its
// definition, sizes and autostart flag. A failed refresh is not an error: the sizes are
// then libvirt's last known ones.
func (c *Client) ReadPool(ctx context.Context, name string) (*PoolState, error) {
	out := &PoolState{}
	var doc string
	err := c.Read(ctx, "read storage pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		active, err := l.StoragePoolIsActive(p)
		if err != nil {
			return err
		}
		out.Active = active == 1
		if out.Active {
			_ = l.StoragePoolRefresh(p, 0)
		}
		auto, err := l.StoragePoolGetAutostart(p)
		if err != nil {
			return err
		}
		out.Autostart = auto == 1
		if _, out.Capacity, out.Allocation, out.Available, err = l.StoragePoolGetInfo(p); err != nil {
			return err
		}
		doc, err = l.StoragePoolGetXMLDesc(p, golibvirt.StorageXMLInactive)
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Def = &libvirtxml.StoragePool{}
	if err := out.Def.Unmarshal(doc); err != nil {
		return nil, fmt.Errorf("parse the definition of storage pool %s: %w", name, err)
	}
	out.UUID = out.Def.UUID
	return out, nil
}

// CreatePool defines, builds and starts a pool, and sets autostart. Build makes the
// directory of a dir pool, the mount point of a netfs pool, and the volume group of a
// logical pool — with NoOverwrite, so devices that carry any signature (a volume group
// among them) are never formatted; when they already hold the group, it is used as is.
// When a step fails the pool's definition is removed again (and the directory or mount
// point that build made, when empty), so nothing is left that the caller does not know
// about.
//
// Every step is safe to send again, so each is re-sent when its answer is lost (a daemon
// restart, a dropped link; see writeSettled): the definition carries a UUID chosen here,
// and defining the same name with the same UUID again only rewrites it, while a pool of
// that name that was there before has another UUID and refuses it; building a directory
// that exists keeps it (and a logical pool's second build finds the group it made);
// start and autostart look before they change anything.
//
// With start false the pool is only defined (and autostart set): nothing is built or
// started, so no storage and no server is touched — the way to manage a pool whose
// server is not reachable from here yet.
func (c *Client) CreatePool(ctx context.Context, def *libvirtxml.StoragePool, autostart, start bool) error {
	d := *def
	if d.UUID == "" {
		d.UUID = uuid.NewString()
	}
	id, err := uuid.Parse(d.UUID)
	if err != nil {
		return fmt.Errorf("storage pool %s: uuid %q: %w", d.Name, d.UUID, err)
	}
	doc, err := d.Marshal()
	if err != nil {
		return fmt.Errorf("storage pool %s: %w", d.Name, err)
	}
	// The handle names the pool by its UUID: the rollback removes this definition and
	// never another pool of the same name.
	pool := golibvirt.StoragePool{Name: d.Name, UUID: golibvirt.UUID(id)}
	built := false
	undo := func(cause error) error {
		uctx, cancel := rollbackContext(ctx)
		defer cancel()
		uerr := c.writeSettled(uctx, "remove half-made storage pool "+d.Name, func(l *golibvirt.Libvirt) error {
			_ = l.StoragePoolDestroy(pool)
			if built && (d.Type == "dir" || d.Type == "netfs") {
				// rmdir of the directory or mount point build made; fails when not empty.
				_ = l.StoragePoolDelete(pool, golibvirt.StoragePoolDeleteNormal)
			}
			return l.StoragePoolUndefine(pool)
		})
		if uerr != nil && !errors.Is(uerr, ErrNotFound) {
			return fmt.Errorf("%w (and removing the half-made pool failed: %v; check with `virsh pool-list --all` "+
				"and remove pool %s (uuid %s) by hand: virsh pool-destroy %s; virsh pool-undefine %s)", cause, uerr, d.Name, d.UUID, d.Name, d.Name)
		}
		return cause
	}
	if err := c.writeSettled(ctx, "define storage pool "+d.Name, func(l *golibvirt.Libvirt) error {
		_, err := l.StoragePoolDefineXML(doc, 0)
		return err
	}); err != nil {
		if IsTransport(err) {
			return undo(err) // the define may have landed
		}
		return err
	}
	if !start {
		if autostart {
			if err := c.SetPoolAutostart(ctx, d.Name, true); err != nil {
				return undo(err)
			}
		}
		return nil
	}
	flags, build := buildFlags(&d)
	var buildErr error
	if build {
		buildErr = c.writeSettled(ctx, "build storage pool "+d.Name, func(l *golibvirt.Libvirt) error {
			return l.StoragePoolBuild(pool, flags)
		})
	}
	switch {
	case buildErr == nil:
		built = build
	case flags == golibvirt.StoragePoolBuildNoOverwrite && HasCode(buildErr, golibvirt.ErrStoragePoolBuilt):
		// The devices carry a signature: a volume group, we hope; starting the pool tells.
	default:
		built = IsTransport(buildErr) // it may have made the directory
		return undo(buildErr)
	}
	if err := c.StartPool(ctx, d.Name); err != nil {
		if buildErr != nil {
			err = fmt.Errorf("%w; the devices were not formatted because they are not empty (%v)", err, buildErr)
		}
		return undo(err)
	}
	if autostart {
		if err := c.SetPoolAutostart(ctx, d.Name, true); err != nil {
			return undo(err)
		}
	}
	return nil
}

// buildFlags says whether and how a pool is built before its first start. dir and netfs
// make their directory; logical and disk write a volume group or a partition table, so
// only on devices that carry no signature (NoOverwrite; a device that holds one already
// is used as it is); zfs makes its zpool only when devices are named (without them it
// uses the zpool that exists). The other types have nothing to build (their storage is a
// server's, or the host's devices).
func buildFlags(d *libvirtxml.StoragePool) (golibvirt.StoragePoolBuildFlags, bool) {
	switch d.Type {
	case "dir", "netfs":
		return golibvirt.StoragePoolBuildNew, true
	case "logical", "disk":
		return golibvirt.StoragePoolBuildNoOverwrite, true
	case "zfs":
		return golibvirt.StoragePoolBuildNew, d.Source != nil && len(d.Source.Device) > 0
	}
	return golibvirt.StoragePoolBuildNew, false
}

// ActivatePool builds (as CreatePool would, never overwriting a device that carries a
// signature) and starts a pool that was only defined; a running pool is left as it is.
func (c *Client) ActivatePool(ctx context.Context, name string) error {
	st, err := c.ReadPool(ctx, name)
	if err != nil || st.Active {
		return err
	}
	if flags, build := buildFlags(st.Def); build {
		err := c.writeSettled(ctx, "build storage pool "+name, func(l *golibvirt.Libvirt) error {
			p, err := l.StoragePoolLookupByName(name)
			if err != nil {
				return err
			}
			return l.StoragePoolBuild(p, flags)
		})
		if err != nil && (flags != golibvirt.StoragePoolBuildNoOverwrite || !HasCode(err, golibvirt.ErrStoragePoolBuilt)) {
			return err
		}
	}
	return c.StartPool(ctx, name)
}

// StopPool stops a running pool (no-op when it is stopped; re-sent when its answer is
// lost, since it looks first). Its storage is not touched.
func (c *Client) StopPool(ctx context.Context, name string) error {
	return c.writeSettled(ctx, "stop storage pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		active, err := l.StoragePoolIsActive(p)
		if err != nil || active == 0 {
			return err
		}
		return l.StoragePoolDestroy(p)
	})
}

// SetPoolAutostart turns autostart on or off (re-sent when its answer is lost: setting it
// twice is setting it once).
func (c *Client) SetPoolAutostart(ctx context.Context, name string, on bool) error {
	v := int32(0)
	if on {
		v = 1
	}
	return c.writeSettled(ctx, fmt.Sprintf("set autostart=%t on storage pool %s", on, name), func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		return l.StoragePoolSetAutostart(p, v)
	})
}

// StartPool starts an inactive pool (no-op when it runs; re-sent when its answer is
// lost, since it looks first).
func (c *Client) StartPool(ctx context.Context, name string) error {
	return c.writeSettled(ctx, "start storage pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		active, err := l.StoragePoolIsActive(p)
		if err != nil || active == 1 {
			return err
		}
		return l.StoragePoolCreate(p, golibvirt.StoragePoolCreateNormal)
	})
}

// PoolVolumes refreshes an active pool and lists its volumes' names, sorted.
func (c *Client) PoolVolumes(ctx context.Context, name string) ([]string, error) {
	var names []string
	err := c.Read(ctx, "list volumes of storage pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		if err := l.StoragePoolRefresh(p, 0); err != nil {
			return err
		}
		vols, _, err := l.StoragePoolListAllVolumes(p, 1, 0)
		if err != nil {
			return err
		}
		names = names[:0]
		for _, v := range vols {
			names = append(names, v.Name)
		}
		return nil
	})
	sort.Strings(names)
	return names, err
}

// DeletePoolVolume deletes one volume of a pool; a missing one is ErrNotFound.
func (c *Client) DeletePoolVolume(ctx context.Context, pool, vol string) error {
	return c.Write(ctx, fmt.Sprintf("delete volume %s/%s", pool, vol), func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(pool)
		if err != nil {
			return err
		}
		v, err := l.StorageVolLookupByName(p, vol)
		if err != nil {
			return err
		}
		return l.StorageVolDelete(v, golibvirt.StorageVolDeleteNormal)
	})
}

// DeletePool stops a pool, removes its directory when removeDir (the directory of a dir
// pool, the mount point of an unmounted netfs pool: libvirt removes it only when empty)
// and undefines it. A missing pool is ErrNotFound. It returns
// a non-nil warning when the directory could not be removed (the pool is gone anyway).
func (c *Client) DeletePool(ctx context.Context, name string, removeDir bool) (warning error, err error) {
	err = c.Write(ctx, "delete storage pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		active, err := l.StoragePoolIsActive(p)
		if err != nil {
			return err
		}
		if active == 1 {
			if err := l.StoragePoolDestroy(p); err != nil {
				return err
			}
		}
		if removeDir {
			if derr := l.StoragePoolDelete(p, golibvirt.StoragePoolDeleteNormal); derr != nil {
				warning = classify("remove the directory of storage pool "+name, c.uri.String(), derr)
				if IsTransport(warning) {
					return derr
				}
			}
		}
		return l.StoragePoolUndefine(p)
	})
	return warning, err
}

// PoolExists looks a storage pool up by name (ErrNotFound when there is none).
func (c *Client) PoolExists(ctx context.Context, name string) error {
	return c.Read(ctx, "look up pool "+name, func(l *golibvirt.Libvirt) error {
		_, err := l.StoragePoolLookupByName(name)
		return err
	})
}
