package libvirt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

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
		info, err := volumeInfo(l, v)
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
	return out, err
}

// PoolExists looks a storage pool up by name (ErrNotFound when there is none).
func (c *Client) PoolExists(ctx context.Context, name string) error {
	return c.Read(ctx, "look up pool "+name, func(l *golibvirt.Libvirt) error {
		_, err := l.StoragePoolLookupByName(name)
		return err
	})
}

// CreateVolumeOver makes a qcow2 volume in spec.Pool of the given capacity; with a
// backing file, an overlay on it. On failure nothing is left.
func (c *Client) CreateVolumeOver(ctx context.Context, spec VolumeSpec, capacity uint64, backing, backingFormat string) (*VolumeInfo, error) {
	var b *VolumeInfo
	if backing != "" {
		b = &VolumeInfo{Path: backing, Format: backingFormat}
	}
	vol, err := c.create(ctx, spec, capacity, b)
	if err != nil {
		return nil, err
	}
	return c.finish(ctx, spec, vol, capacity)
}

// blockJobPoll is how often CopyDiskLive looks at the copy job.
var blockJobPoll = 200 * time.Millisecond

// CopyDiskLive copies disk target of a running (or paused) domain into dest, an existing
// image (REUSE_EXT), through QEMU's mirror (virDomainBlockCopy): the domain keeps running;
// once the copy has caught up, the job is cancelled, which leaves dest a point-in-time,
// crash-consistent copy of the disk as it was at that moment (QEMU's block-job-cancel of
// a ready mirror). shallow copies only the top image: dest must then be an overlay on
// the same backing file. The job is transient (libvirt does not persist it), so a
// persistent domain may run it; it is always ended, also when ctx runs out.
func (c *Client) CopyDiskLive(ctx context.Context, domain, target, dest, destFormat string, shallow bool) error {
	op := fmt.Sprintf("copy disk %s of domain %s into %s", target, domain, dest)
	destXML := fmt.Sprintf("<disk type='file'><source file='%s'/><driver type='%s'/></disk>", xmlAttr(dest), xmlAttr(destFormat))
	flags := golibvirt.DomainBlockCopyReuseExt | golibvirt.DomainBlockCopyTransientJob
	if shallow {
		flags |= golibvirt.DomainBlockCopyShallow
	}
	// A disk has one block job at a time: clones of one source made in one apply take
	// turns here, and a job someone else runs on the disk is waited for.
	unlock := lockDisk(domain, target)
	defer unlock()
	for {
		err := c.Write(ctx, op, func(l *golibvirt.Libvirt) error {
			d, err := LookupDomainOn(l, domain)
			if err != nil {
				return err
			}
			return l.DomainBlockCopy(d, target, destXML, nil, flags)
		})
		if err == nil {
			break
		}
		if !HasCode(err, golibvirt.ErrBlockCopyActive) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waited for another block job on the disk to end)", err)
		case <-time.After(time.Second):
		}
	}
	// endBlockJob retries the abort until the job is gone; a job it cannot end may still
	// write into dest, and the error says so (dest must be kept then).
	stopJob := func() (first, err error) {
		first, err = c.endBlockJob(ctx, domain, target, op)
		if err != nil {
			err = &BlockJobRunningError{Domain: domain, Disk: target, Dest: dest, Err: err}
		}
		return first, err
	}
	abort := func() error { _, err := stopJob(); return err }
	finish := func() error {
		first, err := stopJob()
		if err == nil && first != nil {
			// Not ended by our first abort (a lost answer, a later try): the copy is not trusted.
			err = fmt.Errorf("end the %s: %w (the job was ended on a later try, so the copy is not used)", op, first)
		}
		return err
	}
	for {
		var found int32
		var cur, end uint64
		err := c.Read(ctx, "watch the "+op, func(l *golibvirt.Libvirt) error {
			d, err := LookupDomainOn(l, domain)
			if err != nil {
				return err
			}
			found, _, _, cur, end, err = l.DomainGetBlockJobInfo(d, target, 0)
			return err
		})
		switch {
		case err != nil:
			if aerr := abort(); aerr != nil {
				err = fmt.Errorf("%w; ending the copy job failed too: %v", err, aerr)
			}
			return err
		case found == 0:
			return fmt.Errorf("%s: the copy job ended before it was complete (see libvirtd's log)", op)
		case cur == end:
			// libvirt reports cur == end for a copy only once the mirror is ready.
			return finish()
		}
		select {
		case <-ctx.Done():
			if aerr := abort(); aerr != nil {
				return fmt.Errorf("%s: %w (ending the copy job failed too: %w)", op, ctx.Err(), aerr)
			}
			return fmt.Errorf("%s: %w", op, ctx.Err())
		case <-time.After(blockJobPoll):
		}
	}
}

var (
	diskLocksMu sync.Mutex
	diskLocks   = map[string]*sync.Mutex{}
)

// lockDisk serialises block jobs on one disk of one domain within this process.
func lockDisk(domain, target string) func() {
	diskLocksMu.Lock()
	m, ok := diskLocks[domain+"\x00"+target]
	if !ok {
		m = &sync.Mutex{}
		diskLocks[domain+"\x00"+target] = m
	}
	diskLocksMu.Unlock()
	m.Lock()
	return m.Unlock
}

func xmlAttr(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&':
			out = append(out, "&amp;"...)
		case '<':
			out = append(out, "&lt;"...)
		case '\'':
			out = append(out, "&apos;"...)
		case '"':
			out = append(out, "&quot;"...)
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// SuspendDomain pauses a running domain's vCPUs; ResumeDomain lets it run again.
func (c *Client) SuspendDomain(ctx context.Context, id string) error {
	return c.onDomain(ctx, "suspend", id, func(l *golibvirt.Libvirt, d Domain) error { return l.DomainSuspend(d) })
}

func (c *Client) ResumeDomain(ctx context.Context, id string) error {
	return c.onDomain(ctx, "resume", id, func(l *golibvirt.Libvirt, d Domain) error { return l.DomainResume(d) })
}

// CopyNVRAM copies a UEFI varstore file into dst, a new file in the same directory,
// through libvirt's storage API (so it works on remote hosts too): the directory is
// reached through the pool that already holds src, else through a transient dir pool
// made for the copy and destroyed after it (destroying a dir pool leaves its files).
// It reports false, and copies nothing, when src does not exist.
func (c *Client) CopyNVRAM(ctx context.Context, src, dst string) (bool, error) {
	if filepath.Dir(src) != filepath.Dir(dst) {
		return false, fmt.Errorf("copy nvram %s to %s: both must be in one directory", src, dst)
	}
	copied := false
	err := c.Write(ctx, fmt.Sprintf("copy nvram %s to %s", src, dst), func(l *golibvirt.Libvirt) error {
		var pool golibvirt.StoragePool
		v, err := l.StorageVolLookupByPath(src)
		if err == nil {
			if pool, err = l.StoragePoolLookupByVolume(v); err != nil {
				return err
			}
		} else {
			var lerr golibvirt.Error
			if !errors.As(err, &lerr) || golibvirt.ErrorNumber(lerr.Code) != golibvirt.ErrNoStorageVol {
				return err
			}
			var rnd [4]byte
			_, _ = rand.Read(rnd[:])
			name := "kvmforge-nvram-" + hex.EncodeToString(rnd[:])
			px := fmt.Sprintf("<pool type='dir'><name>%s</name><target><path>%s</path></target></pool>", name, xmlAttr(filepath.Dir(src)))
			if pool, err = l.StoragePoolCreateXML(px, 0); err != nil {
				return fmt.Errorf("reach the nvram directory %s through a transient pool: %w", filepath.Dir(src), err)
			}
			defer func() { _ = l.StoragePoolDestroy(pool) }()
			v, err = l.StorageVolLookupByName(pool, filepath.Base(src))
			if err != nil {
				var lerr golibvirt.Error
				if errors.As(err, &lerr) && golibvirt.ErrorNumber(lerr.Code) == golibvirt.ErrNoStorageVol {
					return nil // the source has no varstore yet: libvirt makes one from the template
				}
				return err
			}
		}
		_, capacity, _, err := l.StorageVolGetInfo(v)
		if err != nil {
			return err
		}
		// Capacity only, no allocation: the copy has exactly the source's size (pflash
		// needs it), where a copy of the source's own XML would round up to its allocation.
		vx := fmt.Sprintf("<volume><name>%s</name><capacity unit='bytes'>%d</capacity><target><format type='raw'/></target></volume>",
			xmlAttr(filepath.Base(dst)), capacity)
		if _, err := l.StorageVolCreateXMLFrom(pool, vx, v, 0); err != nil {
			return err
		}
		copied = true
		return nil
	})
	return copied, err
}

// SetDomainSizing sets the vCPU count and memory of a domain in its persistent
// definition and, when live, in the running domain too (within its ceilings).
func (c *Client) SetDomainSizing(ctx context.Context, id string, vcpu uint, mib uint64, live bool) error {
	flags := uint32(golibvirt.DomainAffectConfig)
	if live {
		flags |= uint32(golibvirt.DomainAffectLive)
	}
	return c.onDomain(ctx, fmt.Sprintf("set vcpus %d and memory %d MiB of", vcpu, mib), id, func(l *golibvirt.Libvirt, d Domain) error {
		if vcpu > 0 {
			if err := l.DomainSetVcpusFlags(d, uint32(vcpu), flags); err != nil {
				return err
			}
		}
		if mib > 0 {
			return l.DomainSetMemoryFlags(d, mib*1024, flags)
		}
		return nil
	})
}
