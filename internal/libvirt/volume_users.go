package libvirt

import (
	"context"
	"slices"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// PathUsers is what uses a file on a host: the domains whose definition has it as a disk,
// writing it while they run (Writers), writing it when they run (StoppedWriters: their
// definition does, they are shut off) or only reading it (Readers: a CD-ROM, a read-only
// or shareable disk), and the volumes that have it as their backing file (Overlays).
type PathUsers struct {
	Writers, StoppedWriters, Readers, Overlays []string
}

// InUse is true when anything uses the file.
func (u PathUsers) InUse() bool {
	return len(u.Writers)+len(u.StoppedWriters)+len(u.Readers)+len(u.Overlays) > 0
}

// PathUsers says what on c's host uses the file at path, except the domain named except
// (the one that is moving away, say). Definitions are the persistent ones; overlays are
// found in the active pools.
func (c *Client) PathUsers(ctx context.Context, path, except string) (PathUsers, error) {
	var out PathUsers
	err := c.Read(ctx, "find what uses "+path, func(l *golibvirt.Libvirt) error {
		out = PathUsers{}
		doms, _, err := l.ConnectListAllDomains(1, 0)
		if err != nil {
			return err
		}
		for _, d := range doms {
			if d.Name == except {
				continue
			}
			doc, err := l.DomainGetXMLDesc(d, golibvirt.DomainXMLInactive)
			if err != nil {
				if isNotFound(err) {
					continue // undefined while we looked
				}
				return err
			}
			writes, reads := diskUse(doc, path)
			switch {
			case writes:
				state, _, err := l.DomainGetState(d, 0)
				if err != nil && !isNotFound(err) {
					return err
				}
				if state == int32(golibvirt.DomainShutoff) || state == int32(golibvirt.DomainCrashed) {
					out.StoppedWriters = append(out.StoppedWriters, d.Name)
				} else {
					out.Writers = append(out.Writers, d.Name)
				}
			case reads:
				out.Readers = append(out.Readers, d.Name)
			}
		}
		pools, _, err := l.ConnectListAllStoragePools(1, golibvirt.ConnectListStoragePoolsActive)
		if err != nil {
			return err
		}
		for _, p := range pools {
			vols, _, err := l.StoragePoolListAllVolumes(p, 1, 0)
			if err != nil {
				continue // a pool stopped while we looked
			}
			for _, v := range vols {
				doc, err := l.StorageVolGetXMLDesc(v, 0)
				if err != nil {
					continue
				}
				var x libvirtxml.StorageVolume
				if x.Unmarshal(doc) == nil && x.BackingStore != nil && x.BackingStore.Path == path && x.Target != nil {
					out.Overlays = append(out.Overlays, x.Target.Path)
				}
			}
		}
		return nil
	})
	return out, err
}

// diskUse says whether a domain definition writes or only reads the file at path.
func diskUse(doc, path string) (writes, reads bool) {
	var d libvirtxml.Domain
	if d.Unmarshal(doc) != nil || d.Devices == nil {
		return false, false
	}
	for _, disk := range d.Devices.Disks {
		if disk.Source == nil {
			continue
		}
		var p string
		switch {
		case disk.Source.File != nil:
			p = disk.Source.File.File
		case disk.Source.Block != nil:
			p = disk.Source.Block.Dev
		}
		if p != path {
			continue
		}
		if disk.ReadOnly != nil || slices.Contains([]string{"cdrom", "floppy"}, disk.Device) {
			reads = true
		} else {
			writes = true
		}
	}
	return writes, reads
}
