package libvirt

import (
	"context"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Moving a volume to another host (libvirt_volume's `host`). Two ways:
//   - PrecreateFor: a volume of the same name, format and capacity on the new host, for a
//     domain's migration with a storage copy to fill (libvirt writes into a volume that
//     exists at the disk's path: the whole disk, backing chain flattened into it);
//   - CopyVolumeFrom: the file byte for byte, streamed through the provider from the old
//     host's daemon into the new one's (no program on either host reads it as an image);
//     a qcow2 overlay keeps its backing file's path, which must exist on the new host.

// PrecreateFor makes on c a volume like src (its pool, name, format and capacity) for a
// migration's storage copy to fill: an overlay of the same backing file when c's host has
// it (a full copy into an overlay is the whole disk all the same), else an empty one. Made
// so, it is also what a domain made anew on it would want: when the domain that wrote src
// is replaced rather than moved (Terraform may update the volume before it destroys that
// domain), the new one starts from the same base, as a volume made anew would.
func (c *Client) PrecreateFor(ctx context.Context, src *VolumeInfo) (*VolumeInfo, error) {
	spec := VolumeSpec{Pool: src.Pool, Name: src.Name, Format: src.Format, Capacity: src.Capacity}
	var backing *VolumeInfo
	if src.Backing != "" {
		if b, err := c.VolumeInfo(ctx, VolumeRef{Key: src.Backing}); err == nil {
			backing = b
		}
	}
	vol, err := c.create(ctx, spec, src.Capacity, backing)
	if err != nil {
		return nil, err
	}
	return c.finish(ctx, spec, vol, src.Capacity)
}

// CopyVolumeFrom makes on c a byte-for-byte copy of the volume src on from's host, in the
// pool and under the name src has there. On failure nothing is left on c.
func (c *Client) CopyVolumeFrom(ctx context.Context, from *Client, src *VolumeInfo) (*VolumeInfo, error) {
	if src.Encryption != nil {
		return nil, fmt.Errorf("volume %s/%s is encrypted: its secret lives on its host; move it by hand", src.Pool, src.Name)
	}
	spec := VolumeSpec{Pool: src.Pool, Name: src.Name, Format: src.Format}
	size := RawCapacity(src)
	if src.Format == "qcow2" {
		// The new file is src's bytes: make it raw (no header of libvirt's to overwrite),
		// then let the pool read what it is once the bytes are in.
		spec.Format = "raw"
	}
	vol, err := c.create(ctx, spec, size, nil)
	if err != nil {
		return nil, err
	}
	err = c.streamCopy(ctx, from, src, vol, size, fmt.Sprintf("copy volume %s/%s from %s byte for byte", src.Pool, src.Name, from.URI()))
	if err != nil {
		return nil, c.discard(ctx, spec, vol, err)
	}
	if src.Format == "qcow2" {
		// libvirt reads a volume's format and capacity when it refreshes its pool.
		err := c.Write(ctx, "refresh pool "+src.Pool, func(l *golibvirt.Libvirt) error {
			p, err := l.StoragePoolLookupByName(src.Pool)
			if err != nil {
				return err
			}
			return l.StoragePoolRefresh(p, 0)
		})
		if err != nil {
			return nil, c.discard(ctx, spec, vol, err)
		}
	}
	return c.VolumeInfo(ctx, VolumeRef{Pool: src.Pool, Name: src.Name})
}
