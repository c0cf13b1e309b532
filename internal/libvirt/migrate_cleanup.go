package libvirt

import (
	"context"
	"fmt"

	"libvirt.org/go/libvirtxml"
)

// After a migration that copied the disks (CopyStorage "all"), libvirt leaves the source's
// volumes where they were: a stale copy of each disk. The caller that moved the disks
// removes them once the domain runs on the destination.

// MigratedDiskPaths are the paths of the disks a storage copy of domain id moves: its
// file and block disks that are neither read-only nor CD-ROMs (libvirt copies no others).
func (c *Client) MigratedDiskPaths(ctx context.Context, id string) ([]string, error) {
	src, err := c.readMigrationSource(ctx, id)
	if err != nil {
		return nil, err
	}
	return src.disks, nil
}

// RemoveVolumesAt deletes the volumes at paths on c's daemon, those that are there, and
// says which it removed and which it could not (with why).
func (c *Client) RemoveVolumesAt(ctx context.Context, paths []string) (removed, left []string) {
	return c.removeVolumesAt(ctx, paths)
}

// MigrationCompanions are the files a domain's disks need but a storage copy does not
// move: its read-only disks and CD-ROMs (a cloud-init seed) and the backing files of its
// writable disks (a base image). Their own volumes move them (libvirt_volume's host); once
// the domain runs on the new host, the old copies are removed where nothing else uses them.
func (c *Client) MigrationCompanions(ctx context.Context, id string) ([]string, error) {
	st, err := c.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	writable, err := writableDiskPaths(st.XML)
	if err != nil {
		return nil, err
	}
	out := readOnlyDiskPaths(st.XML)
	for _, p := range writable {
		for seen := 0; seen < 16; seen++ { // a backing chain, bounded
			info, err := c.VolumeInfo(ctx, VolumeRef{Key: p})
			if err != nil || info.Backing == "" {
				break
			}
			p = info.Backing
			out = append(out, p)
		}
	}
	return out, nil
}

// readOnlyDiskPaths are the paths of a definition's read-only disks and CD-ROMs.
func readOnlyDiskPaths(doc string) []string {
	var d libvirtxml.Domain
	if d.Unmarshal(doc) != nil || d.Devices == nil {
		return nil
	}
	var out []string
	for _, disk := range d.Devices.Disks {
		if disk.Source == nil || disk.Source.File == nil || disk.Source.File.File == "" {
			continue
		}
		if disk.ReadOnly != nil || disk.Device == "cdrom" || disk.Device == "floppy" {
			out = append(out, disk.Source.File.File)
		}
	}
	return out
}

// RemoveMovedCompanions removes, on c's host, those of paths that dest has too (moved
// there) and that nothing on c's host uses any more; it says what it removed and what it
// left (with why).
func (c *Client) RemoveMovedCompanions(ctx context.Context, dest *Client, paths []string) (removed, left []string) {
	for _, p := range paths {
		if _, err := dest.VolumeInfo(ctx, VolumeRef{Key: p}); err != nil {
			left = append(left, fmt.Sprintf("%s (not on the new host: %v)", p, err))
			continue
		}
		users, err := c.PathUsers(ctx, p, "")
		if err != nil || users.InUse() {
			left = append(left, fmt.Sprintf("%s (still used here: %v %v)", p, users, err))
			continue
		}
		r, l := c.RemoveVolumesAt(ctx, []string{p})
		removed, left = append(removed, r...), append(left, l...)
	}
	return removed, left
}
