package libvirt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// Export methods: how ExportVolume got a copy in the wanted format.
const (
	ExportDirect    = "download"   // the volume's own bytes, unchanged
	ExportConvert   = "convert"    // a temporary volume made with virStorageVolCreateXMLFrom (qemu-img convert)
	ExportBlockCopy = "block-copy" // a temporary volume filled by a block copy job of the running domain
)

// ExportOptions tune ExportVolume.
type ExportOptions struct {
	// Log, when set, is told about each stage (which method, temporary volume, ...).
	Log func(msg string, fields map[string]any)
	// TempName names the temporary volume (tests); default <volume>.tfexport-<random>.<format>.
	TempName string
	// BlockJobPoll is how often a block copy's progress is polled (default 200 ms, BlockCopy's).
	BlockJobPoll time.Duration
	// Quiesce freezes the guest's filesystems (FreezeDuring) for the instant a block copy
	// of a running domain's disk takes its copy point. A volume no running domain has
	// open needs no freeze: nothing writes to it, its copy is consistent as it is.
	Quiesce bool
}

// ExportResult says how an export was done.
type ExportResult struct {
	Method       string // ExportDirect, ExportConvert or ExportBlockCopy
	Domain       string // the running domain that had the volume open (block copy)
	SourceFormat string
	TempVolume   string // <pool>/<name> of the temporary volume, removed again
	Bytes        uint64 // bytes written to w
	Quiesced     bool   // the guest's filesystems were frozen at the copy point (block copy with Quiesce)
}

// exportFormat is a volume format as an export compares it: libvirt's directory pools
// may call a raw file holding a CD image "iso"; its bytes are what a raw export wants.
func exportFormat(f string) string {
	if f == "" || f == "iso" {
		return "raw"
	}
	return f
}

// ExportVolume streams a volume into w in format (qcow2 or raw), always as a standalone
// image (a backing chain is flattened):
//   - a volume no running domain has open, already in that format and without a backing
//     file, is downloaded as it is;
//   - a volume no running domain has open otherwise is converted on the host into a
//     temporary volume in the same pool (virStorageVolCreateXMLFrom, which runs
//     qemu-img convert), and that is downloaded;
//   - a volume a running domain has open as a disk cannot be read by qemu-img (QEMU
//     holds its write lock), so the domain copies it itself: a block copy job into a
//     temporary volume, ended without pivot once in sync, leaves a point-in-time,
//     crash-consistent copy of the disk while the guest keeps running; with
//     opts.Quiesce the guest's filesystems are frozen through its agent just around the
//     end of the job, which makes the copy filesystem-consistent (no agent: an error,
//     and no copy).
//
// The temporary volume is removed afterwards, also on failure and when ctx is cancelled
// (on its own deadline then) — except while a block copy job that could not be ended may
// still write into it: the error, a *BlockJobRunningError, then names the domain, the
// disk and the temporary volume, and what to do by hand. A failure of w stops the
// download at once and is the error returned.
func (c *Client) ExportVolume(ctx context.Context, ref VolumeRef, format string, w io.Writer, opts ExportOptions) (res *ExportResult, err error) {
	if format != "qcow2" && format != "raw" {
		return nil, fmt.Errorf("export format %q: use qcow2 or raw", format)
	}
	logf := logOrNop(opts.Log)
	var info *VolumeInfo
	var user *VolumeUser
	err = c.Read(ctx, "look up volume "+ref.String(), func(l *golibvirt.Libvirt) error {
		var err error
		_, info, user, err = volumeAndUser(l, ref)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The volume is read as its trusted format, never as libvirt's probe of its bytes.
	srcFormat, doubt, err := c.trustVolume(ctx, info)
	if err != nil {
		return nil, err
	}
	res = &ExportResult{SourceFormat: srcFormat}
	if doubt != nil {
		logf("volume read as raw", map[string]any{"volume": info.Pool + "/" + info.Name, "libvirt_format": info.Format, "reason": doubt.Error()})
		info.Capacity, info.Backing = RawCapacity(info), ""
	}
	src := VolumeRef{Key: info.Key}

	// The writer's own failure (a full disk, say) cancels the download at once.
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fw := &failWriter{w: w, cancel: cancel}

	switch {
	case user != nil && opts.Quiesce:
		if err := c.requireAgent(ctx, user.Domain); err != nil {
			return nil, err // before anything is copied or made
		}
		res.Method, res.Domain = ExportBlockCopy, user.Domain.Name
	case user != nil:
		res.Method, res.Domain = ExportBlockCopy, user.Domain.Name
	case res.SourceFormat == format && (format == "raw" || info.Backing == ""):
		// A raw volume's bytes are the image, whatever they look like (a backing file named
		// in them is data).
		res.Method = ExportDirect
		logf("downloading volume as it is", map[string]any{"volume": info.Pool + "/" + info.Name, "format": format})
		err = c.DownloadVolume(dctx, src, fw)
		res.Bytes = fw.count()
		return res, fw.cause(err)
	case res.SourceFormat != exportFormat(info.Format):
		// libvirt's conversion (qemu-img convert -f <libvirt's format>) would read the
		// volume as libvirt probed it.
		if doubt == nil {
			doubt = &FormatDoubt{Volume: info.Pool + "/" + info.Name, Reported: info.Format, Reason: "the provider does not read that format"}
		}
		return nil, fmt.Errorf("volume %s/%s cannot be converted to %s on the host: %w. A raw export (format = \"raw\") "+
			"copies its bytes as they are", info.Pool, info.Name, format, doubt)
	default:
		res.Method = ExportConvert
	}

	tmp := VolumeSpec{Pool: info.Pool, Name: opts.TempName, Format: format, Capacity: info.Capacity}
	if tmp.Name == "" {
		tmp.Name = tempVolumeName(info.Name, format)
	}
	res.TempVolume = tmp.String()
	defer func() {
		var running *BlockJobRunningError
		if errors.As(err, &running) {
			logf("temporary volume kept: the block copy job may still write into it", map[string]any{"volume": tmp.String(), "error": err.Error()})
			return
		}
		if derr := c.removeTemp(ctx, tmp); derr != nil {
			logf("temporary volume could not be removed", map[string]any{"volume": tmp.String(), "error": derr.Error()})
			if err == nil {
				err = derr
			}
		}
	}()
	var tmpKey string
	if res.Method == ExportBlockCopy {
		logf("volume is a disk of a running domain: copying it through a block copy job into a temporary volume",
			map[string]any{"volume": info.Pool + "/" + info.Name, "domain": user.Domain.Name, "disk": user.Target, "temporary_volume": tmp.String(), "format": format})
		tmpKey, err = c.blockCopy(dctx, user, tmp, opts)
		res.Quiesced = err == nil && opts.Quiesce
	} else {
		logf("converting the volume on the host into a temporary volume",
			map[string]any{"volume": info.Pool + "/" + info.Name, "from": res.SourceFormat, "to": format, "flatten": info.Backing != "", "temporary_volume": tmp.String()})
		tmpKey, err = c.convertInto(dctx, src, tmp)
	}
	if err != nil {
		return nil, err
	}
	logf("downloading the temporary volume", map[string]any{"temporary_volume": tmp.String()})
	err = c.DownloadVolume(dctx, VolumeRef{Key: tmpKey}, fw)
	res.Bytes = fw.count()
	err = fw.cause(err)
	return res, err
}

// tempVolumeName is <volume>.tfexport-<8 hex>.<format>.
func tempVolumeName(volume, format string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s.tfexport-%s.%s", volume, hex.EncodeToString(b[:]), format)
}

// IsExportTemp reports whether name is a temporary export volume (for sweepers and tests).
func IsExportTemp(name string) bool { return strings.Contains(name, ".tfexport-") }

// convertInto makes tmp as a copy of src in tmp's format (qemu-img convert on the host,
// flattening any backing chain) and returns its key.
func (c *Client) convertInto(ctx context.Context, src VolumeRef, tmp VolumeSpec) (string, error) {
	doc, err := volumeXML(tmp, tmp.Capacity, nil)
	if err != nil {
		return "", err
	}
	var key string
	err = c.Write(ctx, fmt.Sprintf("convert volume %s into temporary volume %s", src, tmp), func(l *golibvirt.Libvirt) error {
		sv, err := LookupVolume(l, src)
		if err != nil {
			return err
		}
		p, err := l.StoragePoolLookupByName(tmp.Pool)
		if err != nil {
			return err
		}
		v, err := l.StorageVolCreateXMLFrom(p, doc, sv, 0)
		key = v.Key
		return err
	})
	return key, err
}

// blockCopy fills a new temporary volume through a BlockCopy of the running domain that
// has the volume open: the guest stays on its own disk and the copy holds the disk as it
// was at that moment. A job it cannot end is a *BlockJobRunningError: the caller must
// keep tmp then.
func (c *Client) blockCopy(ctx context.Context, user *VolumeUser, tmp VolumeSpec, opts ExportOptions) (key string, err error) {
	vol, path, err := c.createTemp(ctx, tmp)
	if err != nil {
		return "", err
	}
	err = c.BlockCopy(ctx, BlockCopyJob{
		Domain: user.Domain, Disk: user.Target, Dest: path, Format: tmp.Format,
		DestName: "temporary volume " + tmp.String(),
		Cleanup:  fmt.Sprintf("virsh vol-delete --pool %s %s", tmp.Pool, tmp.Name),
		Refused: fmt.Sprintf("the volume is a disk of running domain %s: shut it down (running = false) or "+
			"snapshot it and export while it is stopped", user.Domain.Name),
		Poll:        opts.BlockJobPoll,
		AtCopyPoint: c.freezeAtCopyPoint(ctx, user.Domain, opts.Quiesce, opts.Log),
	})
	if err != nil {
		return "", err
	}
	return vol.Key, nil
}

// freezeAtCopyPoint is a BlockCopyJob.AtCopyPoint that ends the job with dom's
// filesystems frozen; nil (no freeze) unless quiesce. The freeze's thaw attempts go to
// logf.
func (c *Client) freezeAtCopyPoint(ctx context.Context, dom Domain, quiesce bool, logf func(string, map[string]any)) func(func() error) error {
	if !quiesce {
		return nil
	}
	return func(endJob func() error) error { return c.FreezeDuring(ctx, dom, logf, endJob) }
}

// createTemp makes the empty temporary volume tmp (of its capacity) that a copy job of
// the running domain writes into, and returns it with its path on the host.
func (c *Client) createTemp(ctx context.Context, tmp VolumeSpec) (golibvirt.StorageVol, string, error) {
	vol, err := c.create(ctx, tmp, tmp.Capacity, nil)
	if err != nil {
		return vol, "", err
	}
	var path string
	err = c.Read(ctx, "look up temporary volume "+tmp.String(), func(l *golibvirt.Libvirt) (err error) {
		path, err = l.StorageVolGetPath(vol)
		return err
	})
	return vol, path, err
}

// removeTemp deletes a temporary volume by name, whether or not it was made: on its own
// deadline (the caller's may be what expired), waiting while libvirt still builds it (a
// conversion whose call was cancelled goes on on the host; libvirt refuses to delete a
// volume it is still allocating).
func (c *Client) removeTemp(ctx context.Context, tmp VolumeSpec) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	var last error
	err := poll.Until(dctx, poll.Options{Every: time.Second}, func(dctx context.Context) (bool, error) {
		last = c.Write(dctx, "delete temporary volume "+tmp.String(), func(l *golibvirt.Libvirt) error {
			v, err := LookupVolume(l, VolumeRef{Pool: tmp.Pool, Name: tmp.Name})
			if err != nil {
				return err
			}
			return l.StorageVolDelete(v, 0)
		})
		switch {
		case last == nil, errors.Is(last, ErrNotFound):
			return true, nil
		case HasCode(last, golibvirt.ErrOperationInvalid) || IsTransport(last):
			return false, nil // still being built, or the connection broke: try again shortly
		}
		return false, last
	})
	if err != nil {
		return fmt.Errorf("delete temporary volume %s (remove it by hand: virsh vol-delete --pool %s %s): %w", tmp, tmp.Pool, tmp.Name, last)
	}
	return nil
}

// failWriter remembers the first error of w and cancels the download when it happens, so
// a full local disk ends the export at once instead of after the stall detection.
type failWriter struct {
	mu     sync.Mutex
	w      io.Writer
	n      uint64
	err    error
	cancel context.CancelFunc
}

func (f *failWriter) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(b)
	f.n += uint64(n)
	if err != nil {
		f.err = err
		f.cancel()
	}
	return n, err
}

func (f *failWriter) count() uint64 { f.mu.Lock(); defer f.mu.Unlock(); return f.n }

// cause is the writer's error when it failed (the download then only says "cancelled").
func (f *failWriter) cause(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil && f.err != nil {
		return f.err
	}
	return err
}

// volumeAndUser looks up the volume ref, its info and the running domain that uses it
// (nil when none does): what a copy of a volume needs first.
func volumeAndUser(l *golibvirt.Libvirt, ref VolumeRef) (golibvirt.StorageVol, *VolumeInfo, *VolumeUser, error) {
	v, err := LookupVolume(l, ref)
	if err != nil {
		return v, nil, nil, err
	}
	info, err := volumeInfo(l, v)
	if err != nil {
		return v, nil, nil, err
	}
	user, err := RunningUserOf(l, info)
	return v, info, user, err
}

// logOrNop is logf, or a log that drops everything when logf is nil.
func logOrNop(logf func(string, map[string]any)) func(string, map[string]any) {
	if logf == nil {
		return func(string, map[string]any) {}
	}
	return logf
}
