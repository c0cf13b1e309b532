package libvirt

import (
	"context"
	"fmt"
	"path/filepath"

	"libvirt.org/go/libvirtxml"
)

// After a migration that copied the disks (CopyStorage "all"), libvirt leaves the source's
// volumes where they were: a stale copy of each disk. The caller that moved the disks
// removes them once the domain runs on the destination.

// RemoveVolumesAt deletes the volumes at paths on c's daemon, those that are there, and
// says which it removed and which it could not (with why).
func (c *Client) RemoveVolumesAt(ctx context.Context, paths []string) (removed, left []string) {
	return c.removeVolumesAt(ctx, paths)
}

// MigrationFiles are the files a domain's disks are made of, as a move to another host
// sees them.
type MigrationFiles struct {
	Active bool     // the domain runs (or is paused): a live move
	Disks  []string // its writable file and block disks: what a storage copy moves
	Media  []string // its read-only disks and CD-ROMs (a cloud-init seed): never copied by libvirt
	// Backing are the backing files of its disks, nearest first then deeper (a base image
	// under an overlay): a live storage copy flattens them away; a copy of a stopped
	// domain's disks needs them on the new host, deepest first.
	Backing []string
}

// MigrationFiles reads what MigrationFiles says of domain id.
func (c *Client) MigrationFiles(ctx context.Context, id string) (*MigrationFiles, error) {
	src, err := c.readMigrationSource(ctx, id)
	if err != nil {
		return nil, err
	}
	st, err := c.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &MigrationFiles{Active: src.active, Disks: src.disks, Media: readOnlyDiskPaths(st.XML)}
	for _, p := range src.disks {
		for range 16 { // a backing chain, bounded
			info, err := c.VolumeInfo(ctx, VolumeRef{Key: p})
			if err != nil || info.Backing == "" {
				break
			}
			p = info.Backing
			out.Backing = append(out.Backing, p)
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

// RemoveOldCopies removes, on c's host, those of paths that dest has too (moved or
// copied there), that are not on storage the two hosts share (SharesDirWith: deleting
// would delete dest's too), and that nothing on c's host uses any more. It says what it
// removed and what it left (with why).
func (c *Client) RemoveOldCopies(ctx context.Context, dest *Client, paths []string) (removed, left []string) {
	shared := map[string]bool{}
	for _, p := range paths {
		dir := filepath.Dir(p)
		s, known := shared[dir]
		if !known {
			s, _ = c.SharesDirWith(ctx, dest, dir)
			shared[dir] = s
		}
		if s {
			left = append(left, p+" (on storage both hosts see, or that could not be told apart)")
			continue
		}
		if _, err := dest.VolumeInfo(ctx, VolumeRef{Key: p}); err != nil {
			left = append(left, fmt.Sprintf("%s (not on the new host: %v)", p, err))
			continue
		}
		users, err := c.PathUsers(ctx, p, "")
		if err != nil || users.InUse() {
			left = append(left, fmt.Sprintf("%s (still used here: %+v %v)", p, users, err))
			continue
		}
		r, l := c.RemoveVolumesAt(ctx, []string{p})
		removed, left = append(removed, r...), append(left, l...)
	}
	return removed, left
}
