package libvirt

import (
	"context"
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
