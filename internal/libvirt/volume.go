package libvirt

import (
	"context"
	"fmt"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// VolumeRef is how users name a volume: its key (for dir pools, its path) or <pool>/<name>.
// It is the import id of libvirt_volume and the value of volume_id attributes.
type VolumeRef struct {
	Key  string
	Pool string
	Name string
}

// ParseVolumeRef accepts a key (an absolute path, or any string libvirt uses as a key)
// or <pool>/<name>. A leading "/" means a key: dir, fs and logical pools use paths.
func ParseVolumeRef(id string) (VolumeRef, error) {
	if id == "" {
		return VolumeRef{}, fmt.Errorf("volume id is empty: expected <pool>/<name> or the volume key (its path)")
	}
	if strings.HasPrefix(id, "/") {
		return VolumeRef{Key: id}, nil
	}
	pool, name, ok := strings.Cut(id, "/")
	if !ok || pool == "" || name == "" || strings.Contains(name, "/") {
		return VolumeRef{}, fmt.Errorf("volume id %q: expected <pool>/<name> or the volume key (its path)", id)
	}
	return VolumeRef{Pool: pool, Name: name}, nil
}

func (r VolumeRef) String() string {
	if r.Key != "" {
		return r.Key
	}
	return r.Pool + "/" + r.Name
}

// LookupVolume finds a volume by reference on the given connection. A missing pool or
// volume is a libvirt "no such ..." error, which classify turns into ErrNotFound.
func LookupVolume(l *golibvirt.Libvirt, ref VolumeRef) (golibvirt.StorageVol, error) {
	if ref.Key != "" {
		return l.StorageVolLookupByKey(ref.Key)
	}
	pool, err := l.StoragePoolLookupByName(ref.Pool)
	if err != nil {
		return golibvirt.StorageVol{}, err
	}
	return l.StorageVolLookupByName(pool, ref.Name)
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
