// Package export writes a stream of volume bytes into a local file the way
// libvirt_volume_export needs it: optionally compressed (gzip or zstd), hashed and
// counted as written, into a temporary file of its own next to <path>
// (<name>.<random>.partial) that is renamed to <path> only when all went well and
// removed otherwise. Two exports to one path (two resources, two applies) never share
// that file: each renames a whole file of its own, and the last rename wins. Nothing is
// buffered whole; nothing else touches the disk. It knows nothing of libvirt: the caller
// feeds the bytes.
package export

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compression kinds.
const (
	None = "none"
	Gzip = "gzip"
	Zstd = "zstd"
)

// Compressions are the accepted values of compression, the default first.
var Compressions = []string{None, Gzip, Zstd}

// PartialSuffix ends the name of the file an export is written into, next to its
// destination: <name>.<random>.partial (PartialPattern).
const PartialSuffix = ".partial"

// PartialPattern is the os.CreateTemp pattern of the partial file of an export to path,
// in path's directory: the destination's name, a random part, PartialSuffix.
func PartialPattern(path string) string { return filepath.Base(path) + ".*" + PartialSuffix }

// FileMode is the mode of every export: disk images may hold anything, so only the owner
// reads it. The partial file is always made afresh with this mode (less the umask) and
// renamed over the destination, so neither an earlier export nor anything else passes
// its mode on; whoever wants the file shared changes its mode afterwards.
const FileMode os.FileMode = 0o600

// NewCompressor returns a writer that compresses into w with the named kind ("" and
// "none" pass the bytes through). Close flushes the compressor; it never closes w.
func NewCompressor(w io.Writer, kind string) (io.WriteCloser, error) {
	switch kind {
	case "", None:
		return nopCloser{w}, nil
	case Gzip:
		return gzip.NewWriterLevel(w, gzip.DefaultCompression)
	case Zstd:
		// The default level (≈ zstd -3) with the encoder's goroutines: fast enough not to
		// hold back the stream from libvirt on two cores.
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault))
	default:
		return nil, fmt.Errorf("compression %q is not supported: use none, gzip or zstd", kind)
	}
}

// NewDecompressor reads what NewCompressor wrote (for checks and tests).
func NewDecompressor(r io.Reader, kind string) (io.ReadCloser, error) {
	switch kind {
	case "", None:
		return io.NopCloser(r), nil
	case Gzip:
		return gzip.NewReader(r)
	case Zstd:
		d, err := zstd.NewReader(r)
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	default:
		return nil, fmt.Errorf("compression %q is not supported: use none, gzip or zstd", kind)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Progress is called every interval while bytes flow, and once at the end: in is how
// many volume bytes went in, out how many bytes reached the file; rate is the average
// of in per second since the start.
type Progress func(in, out int64, rate float64)

// Options tune a File.
type Options struct {
	Compression string
	Progress    Progress
	Interval    time.Duration // default 5 s
	Now         func() time.Time
}

// File is an export being written: Write the volume's bytes, then Commit or Abort.
// Write hands the bytes to a goroutine that compresses, hashes and writes them, through
// a bounded queue (queueDepth chunks), so the stream from libvirt is not held up by the
// local disk and the hashing; a write error shows on a later Write and at Commit.
// It is safe for one writer; Counts may be called from anywhere.
type File struct {
	path    string // destination
	partial string
	f       *os.File
	out     *counter // what reaches the file (written by the goroutine only)
	comp    io.WriteCloser
	hash    hash.Hash
	queue   chan []byte
	drained chan struct{} // closed when the goroutine has ended

	wmu      sync.Mutex // one Write, Commit or Abort at a time
	mu       sync.Mutex // the fields below
	in       int64
	start    time.Time
	last     time.Time
	interval time.Duration
	progress Progress
	now      func() time.Time
	err      error // first write error: every later Write returns it
	done     bool
}

// queueDepth bounds what is in flight between Write and the disk (chunks of at most
// the stream's packet size, 256 KiB for libvirt): memory stays a few MiB whatever the volume.
const queueDepth = 16

var chunks = sync.Pool{New: func() any { b := make([]byte, 0, 256<<10); return &b }}

// Create makes a new partial file next to path (PartialPattern), for writing. The
// directory must exist.
func Create(path string, opts Options) (*File, error) {
	if path == "" {
		return nil, errors.New("export path is empty")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("export path %s is a directory: name a file", path)
	}
	f, err := createPartial(path)
	if err != nil {
		return nil, err
	}
	partial := f.Name()
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	x := &File{path: path, partial: partial, f: f, hash: sha256.New(), interval: interval, progress: opts.Progress, now: now,
		queue: make(chan []byte, queueDepth), drained: make(chan struct{})}
	x.out = &counter{w: io.MultiWriter(f, x.hash)}
	comp, err := NewCompressor(x.out, opts.Compression)
	if err != nil {
		f.Close()
		os.Remove(partial)
		return nil, err
	}
	x.comp = comp
	x.start = now()
	x.last = x.start
	go x.drain()
	return x, nil
}

// createPartial makes the partial file of an export to path: a new file of a name of its
// own in path's directory (os.CreateTemp: O_EXCL, mode 0600, never through a symlink,
// never an existing file, always mode FileMode), so that two exports to one path never write into, or remove,
// each other's. A variable, so that a test can hand out /dev/full; the returned file's
// Name is what is renamed or removed.
var createPartial = func(path string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), PartialPattern(path))
	if err != nil {
		return nil, fmt.Errorf("create the partial file of %s: %w", path, err)
	}
	return f, nil // mode 0600 (FileMode), less the umask
}

// drain compresses, hashes and writes what Write queued; after an error it only discards.
func (x *File) drain() {
	defer close(x.drained)
	var failed bool
	for b := range x.queue {
		if !failed {
			_, err := x.comp.Write(b)
			x.mu.Lock()
			if err != nil {
				failed = true
				if x.err == nil {
					x.err = fmt.Errorf("write %s after %d bytes: %w", x.partial, x.out.n.Load(), err)
				}
			}
			x.mu.Unlock()
		}
		b = b[:0]
		chunks.Put(&b)
	}
}

// Partial is the path being written.
func (x *File) Partial() string { return x.partial }

// Write queues b to be compressed into the partial file and hashed. After the first
// failure every Write fails the same way.
func (x *File) Write(b []byte) (int, error) {
	x.wmu.Lock() // held while queueing, so that Commit and Abort never close the queue under it
	defer x.wmu.Unlock()
	total := len(b)
	x.mu.Lock()
	if x.err != nil {
		defer x.mu.Unlock()
		return 0, x.err
	}
	if x.done {
		x.mu.Unlock()
		return 0, errors.New("export file already finished")
	}
	x.in += int64(len(b))
	if x.progress != nil {
		if t := x.now(); t.Sub(x.last) >= x.interval {
			x.last = t
			x.progress(x.in, x.out.n.Load(), x.rateLocked(t))
		}
	}
	x.mu.Unlock()
	for len(b) > 0 {
		var c []byte
		if p, ok := chunks.Get().(*[]byte); ok {
			c = *p
		}
		if cap(c) == 0 {
			c = make([]byte, 0, 256<<10)
		}
		n := min(len(b), cap(c))
		c = append(c[:0], b[:n]...)
		x.queue <- c // blocks while the disk is behind: the queue is bounded
		b = b[n:]
	}
	return total, nil
}

// stop ends the goroutine and waits for it; the caller holds wmu and has set done.
func (x *File) stop() {
	close(x.queue)
	<-x.drained
}

// Err is the first write error, nil while all went well.
func (x *File) Err() error { x.mu.Lock(); defer x.mu.Unlock(); return x.err }

// Counts says how many bytes went in and how many reached the file so far.
func (x *File) Counts() (in, out int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.in, x.out.n.Load()
}

func (x *File) rateLocked(t time.Time) float64 {
	s := t.Sub(x.start).Seconds()
	if s <= 0 {
		return 0
	}
	return float64(x.in) / s
}

// Result describes a committed export.
type Result struct {
	Path    string
	Size    int64  // bytes in the file
	SHA256  string // hex digest of the file as written
	In      int64  // volume bytes that went in
	ModTime time.Time
	Elapsed time.Duration
}

// Commit flushes the compressor, syncs the file to disk and renames it to the
// destination. On any failure the partial file is removed and nothing is left.
func (x *File) Commit() (*Result, error) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.mu.Lock()
	if x.done {
		x.mu.Unlock()
		return nil, errors.New("export file already finished")
	}
	x.done = true
	x.mu.Unlock()
	x.stop()
	x.mu.Lock()
	defer x.mu.Unlock()
	fail := func(err error) (*Result, error) {
		x.f.Close()
		os.Remove(x.partial)
		return nil, err
	}
	if x.err != nil {
		return fail(x.err)
	}
	if err := x.comp.Close(); err != nil {
		return fail(fmt.Errorf("finish compressing %s: %w", x.partial, err))
	}
	if err := x.f.Sync(); err != nil {
		return fail(fmt.Errorf("sync %s: %w", x.partial, err))
	}
	if err := x.f.Close(); err != nil {
		return fail(fmt.Errorf("close %s: %w", x.partial, err))
	}
	if err := os.Rename(x.partial, x.path); err != nil {
		os.Remove(x.partial)
		return nil, fmt.Errorf("rename %s to %s: %w", x.partial, x.path, err)
	}
	syncDir(filepath.Dir(x.path))
	st, err := os.Stat(x.path)
	if err != nil {
		return nil, fmt.Errorf("export written to %s, but it cannot be read back: %w", x.path, err)
	}
	if st.Size() != x.out.n.Load() {
		return nil, fmt.Errorf("export %s is %d bytes on disk, but %d were written: something else changed it", x.path, st.Size(), x.out.n.Load())
	}
	t := x.now()
	if x.progress != nil {
		x.progress(x.in, x.out.n.Load(), x.rateLocked(t))
	}
	return &Result{
		Path: x.path, Size: x.out.n.Load(), SHA256: hex.EncodeToString(x.hash.Sum(nil)), In: x.in,
		ModTime: st.ModTime(), Elapsed: t.Sub(x.start),
	}, nil
}

// Abort stops the export and removes its partial file; the destination, if an earlier
// export left one, is not touched, nor is another export's partial file. Safe to call after Commit (it does nothing then).
func (x *File) Abort() error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.mu.Lock()
	if x.done {
		x.mu.Unlock()
		return nil
	}
	x.done = true
	x.mu.Unlock()
	x.stop()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err == nil {
		x.err = errors.New("export aborted")
	}
	x.f.Close()
	if err := os.Remove(x.partial); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", x.partial, err)
	}
	return nil
}

// syncDir makes a rename durable where the platform allows it (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// counter counts what reaches the file; the zstd encoder writes from its own goroutines.
type counter struct {
	w io.Writer
	n atomic.Int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// Stamp is what Read compares to tell whether the file is still the one written: its size
// and modification time (hashing a large file on every refresh would be too slow).
type Stamp struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime_ns"`
}

// StampOf stats path. A missing file is os.ErrNotExist (errors.Is).
func StampOf(path string) (Stamp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Stamp{}, err
	}
	if !st.Mode().IsRegular() {
		return Stamp{}, fmt.Errorf("%s is not a regular file", path)
	}
	return Stamp{Size: st.Size(), ModTime: st.ModTime().UnixNano()}, nil
}

// HashFile returns the sha256 and size of a file (for tests and checks).
func HashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
