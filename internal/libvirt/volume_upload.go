package libvirt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/imagesource"
)

// Decoder turns a source's bytes as downloaded (already counted and hashed) into the
// image to upload, e.g. decompressing them; name is the source's, for messages. decoded
// says the image is not the download byte for byte, so its length is not the download's.
// The image must read r to its end before it says EOF (the checksum is checked there).
type Decoder func(r io.Reader, name string) (image io.Reader, decoded bool, err error)

// rawSize is the capacity a volume for a raw image is made with, and the most bytes the
// image may bring (0: no bound of capacity_bytes). known is the image's length, -1 when
// it is not known before the image is all read (decompressed, or no Content-Length).
//
// A raw image of unknown length still uploads: libvirt's upload with length 0 writes
// until the stream ends, and a file-backed volume (dir, fs, netfs pools) grows as it is
// written (grows), so the volume is made empty and libvirt reads its capacity back from
// the file's length. A volume on a device (logical, disk, rbd, ...) cannot grow so: there
// capacity_bytes is needed, which also bounds the image.
func rawSize(spec VolumeSpec, name string, known int64, decoded, grows bool) (size, limit uint64, err error) {
	switch {
	case known >= 0:
		return uint64(known), 0, nil
	case spec.Capacity > 0:
		return spec.Capacity, spec.Capacity, nil
	}
	if !grows {
		why := "the server sent no Content-Length"
		if decoded {
			why = "it is compressed"
		}
		return 0, 0, fmt.Errorf("the size of %s is not known before it is all read (%s), and pool %s keeps its volumes on "+
			"devices of a fixed size: set capacity_bytes (at least the image's size)", name, why, spec.Pool)
	}
	return 0, 0, nil
}

// poolSpace is what an upload needs to know of its pool: whether it keeps its volumes in
// files of a filesystem (which an upload may grow), and the bytes libvirt reports free
// in it.
type poolSpace struct {
	grows     bool
	available uint64
}

func (c *Client) poolSpace(ctx context.Context, pool string) (poolSpace, error) {
	var doc string
	var available uint64
	err := c.Read(ctx, "look up storage pool "+pool, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(pool)
		if err != nil {
			return err
		}
		if doc, err = l.StoragePoolGetXMLDesc(p, 0); err != nil {
			return err
		}
		_, _, _, available, err = l.StoragePoolGetInfo(p)
		return err
	})
	if err != nil {
		return poolSpace{}, err
	}
	var x libvirtxml.StoragePool
	if err := x.Unmarshal(doc); err != nil {
		return poolSpace{}, fmt.Errorf("parse the definition of storage pool %s: %w", pool, err)
	}
	switch x.Type {
	case "dir", "fs", "netfs":
		return poolSpace{grows: true, available: available}, nil
	}
	return poolSpace{available: available}, nil
}

// imageBound is the most bytes an upload's image may bring, and why: the tightest of
// capacity_bytes (a raw image of unknown length), what its qcow2 header allows, and the
// free space of a pool whose files grow as they are written.
type imageBound struct {
	set   bool
	limit uint64
	why   string
}

func (b *imageBound) tighten(limit uint64, why string) {
	if !b.set || limit < b.limit {
		*b = imageBound{set: true, limit: limit, why: why}
	}
}

// bound reads r through the bound, if there is one (imagesource.Bound: never a byte past
// it, then *imagesource.TooLargeError).
func (b imageBound) bound(r io.Reader, name string) io.Reader {
	if !b.set {
		return r
	}
	return imagesource.Bound(r, b.limit, name, b.why)
}

// imageTail is the stream libvirt reads: the image (already bounded), counted, with the
// time it ended (the upload's wedge watch starts there, after the last byte, however far
// ahead of it a decoder read the download) and its first error.
type imageTail struct {
	r   io.Reader
	mu  sync.Mutex
	n   uint64
	end time.Time
	err error
}

func (t *imageTail) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n += uint64(n)
	if err != nil {
		t.end = time.Now()
		if !errors.Is(err, io.EOF) && t.err == nil {
			t.err = err
		}
	}
	return n, err
}

func (t *imageTail) ended() time.Time { t.mu.Lock(); defer t.mu.Unlock(); return t.end }

func (t *imageTail) failure() error { t.mu.Lock(); defer t.mu.Unlock(); return t.err }

func (t *imageTail) count() uint64 { t.mu.Lock(); defer t.mu.Unlock(); return t.n }
