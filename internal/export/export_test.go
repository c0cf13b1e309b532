package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// volumeBytes is something like a disk: runs of zeros and of random bytes.
func volumeBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i += 64 << 10 {
		if (i/(64<<10))%3 == 0 {
			end := min(i+32<<10, n)
			for j := i; j < end; j++ {
				b[j] = byte(r.Uint32())
			}
		}
	}
	return b
}

func TestCompressorRoundTrip(t *testing.T) {
	data := volumeBytes(1 << 20)
	for _, kind := range []string{"", None, Gzip, Zstd} {
		t.Run("kind="+kind, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewCompressor(&buf, kind)
			if err != nil {
				t.Fatal(err)
			}
			// Small writes, as a stream delivers them.
			for i := 0; i < len(data); i += 1000 {
				if _, err := w.Write(data[i:min(i+1000, len(data))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "", None:
				if !bytes.Equal(buf.Bytes(), data) {
					t.Fatal("none changed the bytes")
				}
			case Gzip:
				if !bytes.HasPrefix(buf.Bytes(), []byte{0x1f, 0x8b}) {
					t.Fatal("gzip output lacks the gzip magic")
				}
			case Zstd:
				if !bytes.HasPrefix(buf.Bytes(), []byte{0x28, 0xb5, 0x2f, 0xfd}) {
					t.Fatal("zstd output lacks the zstd magic")
				}
			}
			if kind == Gzip || kind == Zstd {
				if buf.Len() >= len(data) {
					t.Fatalf("%s did not compress: %d bytes from %d", kind, buf.Len(), len(data))
				}
			}
			r, err := NewDecompressor(&buf, kind)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("round trip through %q changed the data", kind)
			}
		})
	}
}

func TestCompressorUnknown(t *testing.T) {
	if _, err := NewCompressor(io.Discard, "bzip2"); err == nil {
		t.Fatal("bzip2 accepted")
	}
	if _, err := NewDecompressor(bytes.NewReader(nil), "xz"); err == nil {
		t.Fatal("xz accepted")
	}
}

// TestFileCommit: the sha256 and size are of the file as written (compressed), the
// partial file is renamed away, progress is reported with both counts, and the mode is 0600.
func TestFileCommit(t *testing.T) {
	data := volumeBytes(3 << 20)
	for _, kind := range Compressions {
		t.Run(kind, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "disk.img")
			clock := time.Unix(1000, 0)
			var calls int
			var lastIn, lastOut int64
			x, err := Create(dest, Options{
				Compression: kind, Interval: time.Second,
				Now: func() time.Time { clock = clock.Add(300 * time.Millisecond); return clock },
				Progress: func(in, out int64, rate float64) {
					calls++
					lastIn, lastOut = in, out
					if rate <= 0 {
						t.Errorf("rate %v", rate)
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if p := x.Partial(); filepath.Dir(p) != filepath.Dir(dest) || !strings.HasPrefix(filepath.Base(p), "disk.img.") ||
				!strings.HasSuffix(p, PartialSuffix) {
				t.Fatalf("partial file %s: want disk.img.<random>%s next to the destination", p, PartialSuffix)
			}
			if _, err := os.Stat(x.Partial()); err != nil {
				t.Fatalf("partial file not there while writing: %v", err)
			}
			if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("destination exists before commit: %v", err)
			}
			for i := 0; i < len(data); i += 256 << 10 {
				if _, err := x.Write(data[i:min(i+256<<10, len(data))]); err != nil {
					t.Fatal(err)
				}
			}
			res, err := x.Commit()
			if err != nil {
				t.Fatal(err)
			}
			noPartials(t, filepath.Dir(dest))
			onDisk, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(onDisk)
			if res.SHA256 != hex.EncodeToString(sum[:]) || res.Size != int64(len(onDisk)) || res.In != int64(len(data)) {
				t.Fatalf("result %+v; file has %d bytes, sha256 %x; %d went in", res, len(onDisk), sum, len(data))
			}
			if calls < 2 || lastIn != res.In || lastOut != res.Size {
				t.Fatalf("progress: %d calls, last %d in / %d out; want several and the final counts %d / %d", calls, lastIn, lastOut, res.In, res.Size)
			}
			st, _ := os.Stat(dest)
			if st.Mode().Perm() != FileMode {
				t.Fatalf("mode %v, want %v", st.Mode().Perm(), FileMode)
			}
			stamp, err := StampOf(dest)
			if err != nil || stamp.Size != res.Size || stamp.ModTime != res.ModTime.UnixNano() {
				t.Fatalf("stamp %+v, %v; result %+v", stamp, err, res)
			}
			r, _ := NewDecompressor(bytes.NewReader(onDisk), kind)
			back, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(back, data) {
				t.Fatalf("decompressed file differs from the input (%v)", err)
			}
		})
	}
}

// noPartials fails when dir holds a partial file.
func noPartials(t *testing.T, dir string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+PartialSuffix)); len(m) > 0 {
		t.Fatalf("partial files left: %v", m)
	}
}

// TestFileAbort: an aborted export removes its partial file and leaves an earlier export
// at the destination alone.
func TestFileAbort(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "disk.qcow2")
	if err := os.WriteFile(dest, []byte("earlier export"), 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := Create(dest, Options{Compression: Gzip})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Write([]byte("some bytes")); err != nil {
		t.Fatal(err)
	}
	if err := x.Abort(); err != nil {
		t.Fatal(err)
	}
	noPartials(t, dir)
	if b, _ := os.ReadFile(dest); string(b) != "earlier export" {
		t.Fatalf("abort touched the destination: %q", b)
	}
	if _, err := x.Write([]byte("more")); err == nil {
		t.Fatal("write after abort accepted")
	}
	if _, err := x.Commit(); err == nil {
		t.Fatal("commit after abort accepted")
	}
	if err := x.Abort(); err != nil {
		t.Fatalf("second abort: %v", err)
	}
}

// TestFileWriteFailure: a full disk (here /dev/full behind the partial file's name) fails
// the write, every later write, and the commit, which removes the partial file.
func TestFileWriteFailure(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	dest := filepath.Join(dir, "disk.raw")
	// The partial file's name is a link to /dev/full: the export removes the link, not /dev/full.
	link := filepath.Join(dir, "disk.raw.1"+PartialSuffix)
	if err := os.Symlink("/dev/full", link); err != nil {
		t.Fatal(err)
	}
	createPartial = func(string) (*os.File, error) { return os.OpenFile(link, os.O_WRONLY, 0) }
	t.Cleanup(func() { createPartial = createPartialFile })
	x, err := Create(dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The disk is written behind Write: the error shows on a later one.
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		_, err = x.Write(make([]byte, 4096))
		time.Sleep(time.Millisecond)
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write to a full disk: %v", err)
	}
	if _, err2 := x.Write([]byte("x")); !errors.Is(err2, syscall.ENOSPC) {
		t.Fatalf("later write: %v", err2)
	}
	if x.Err() == nil {
		t.Fatal("Err is nil after a failed write")
	}
	if _, err := x.Commit(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("commit after a failed write: %v", err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial left after a failed export: %v", err)
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatalf("/dev/full: %v", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination made by a failed export: %v", err)
	}
}

var createPartialFile = createPartial

// TestCreate_partialSymlink: a symlink planted at a name an export could use (the
// <path>.partial of earlier versions, in a shared directory, say) must not have the
// export written through it: the victim keeps its bytes and mode, the export is a new
// 0600 file. A dangling link must not create its target either.
func TestCreate_partialSymlink(t *testing.T) {
	for _, dangling := range []bool{false, true} {
		t.Run(fmt.Sprintf("dangling=%v", dangling), func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(victim, 0o644); err != nil {
				t.Fatal(err)
			}
			target := victim
			if dangling {
				target = filepath.Join(dir, "made-through-the-link")
			}
			dest := filepath.Join(t.TempDir(), "disk.raw")
			if err := os.Symlink(target, dest+PartialSuffix); err != nil {
				t.Fatal(err)
			}
			x, err := Create(dest, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := x.Write([]byte("exported bytes")); err != nil {
				t.Fatal(err)
			}
			if _, err := x.Commit(); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
				t.Fatalf("victim = %q, %v; want it untouched", b, err)
			}
			if st, _ := os.Stat(victim); st.Mode().Perm() != 0o644 {
				t.Fatalf("victim's mode changed to %v", st.Mode().Perm())
			}
			if _, err := os.Lstat(filepath.Join(dir, "made-through-the-link")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the dangling link's target was created: %v", err)
			}
			st, err := os.Lstat(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Mode().IsRegular() || st.Mode().Perm() != FileMode {
				t.Fatalf("export is %v, want a regular file of mode %v", st.Mode(), FileMode)
			}
			if b, _ := os.ReadFile(dest); string(b) != "exported bytes" {
				t.Fatalf("export = %q", b)
			}
		})
	}
}

// TestCreate_partialMode: an earlier export of mode 0644 does not pass its mode on: the
// new export is 0600.
func TestCreate_partialMode(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dest, 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := Create(dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(x.Partial()); st.Mode().Perm() != FileMode {
		t.Fatalf("partial file mode %v, want %v", st.Mode().Perm(), FileMode)
	}
	if _, err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dest); st.Mode().Perm() != FileMode {
		t.Fatalf("export mode %v, want %v", st.Mode().Perm(), FileMode)
	}
}

// TestCreate_partialDirectory: whatever sits at the old <path>.partial (here a
// directory) is no obstacle and is left alone: the partial file has a name of its own.
func TestCreate_partialDirectory(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.Mkdir(dest+PartialSuffix, 0o700); err != nil {
		t.Fatal(err)
	}
	x, err := Create(dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dest + PartialSuffix); err != nil || !st.IsDir() {
		t.Fatalf("the directory at the old partial name: %v, %v", st, err)
	}
}

// TestConcurrentExports: two exports to one path at once, their writes interleaved, each
// in a partial file of its own: neither clobbers the other's. The first to commit puts a
// whole file in place while the second still writes; the second's commit then replaces
// it with its own whole file (the last rename wins); no partial file is left. An export
// that fails meanwhile removes only its own partial file.
func TestConcurrentExports(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "disk.raw")
	a, err := Create(dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Create(dest, Options{Compression: Gzip})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Create(dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Partial() == b.Partial() || a.Partial() == c.Partial() || b.Partial() == c.Partial() {
		t.Fatalf("exports to one path share a partial file: %s, %s, %s", a.Partial(), b.Partial(), c.Partial())
	}
	dataA, dataB := bytes.Repeat([]byte("A"), 3<<20), volumeBytes(3<<20)
	for i := 0; i < 3<<20; i += 64 << 10 {
		for _, w := range []struct {
			x    *File
			data []byte
		}{{a, dataA}, {b, dataB}, {c, dataA}} {
			if _, err := w.x.Write(w.data[i : i+64<<10]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// c fails: its partial file goes, a's and b's stay.
	if err := c.Abort(); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*File{a, b} {
		if _, err := os.Stat(x.Partial()); err != nil {
			t.Fatalf("another export's abort removed %s: %v", x.Partial(), err)
		}
	}
	resA, err := a.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, dataA) {
		t.Fatalf("after the first commit the destination is not A's whole file (%d bytes)", len(got))
	}
	if _, err := b.Write([]byte("still writing")); err != nil {
		t.Fatalf("the second export, after the first committed: %v", err)
	}
	resB, err := b.Commit()
	if err != nil {
		t.Fatal(err)
	}
	sum, size, err := HashFile(dest)
	if err != nil || sum != resB.SHA256 || size != resB.Size || sum == resA.SHA256 {
		t.Fatalf("destination %s, %d bytes (%v): want B's %s, %d bytes", sum, size, err, resB.SHA256, resB.Size)
	}
	f, _ := os.Open(dest)
	defer f.Close()
	r, err := NewDecompressor(f, Gzip)
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(back, append(dataB, "still writing"...)) {
		t.Fatalf("B's file is not whole (%v)", err)
	}
	noPartials(t, dir)
}

func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(filepath.Join(dir, "missing", "disk.img"), Options{}); err == nil {
		t.Fatal("missing directory accepted")
	}
	if _, err := Create(dir, Options{}); err == nil {
		t.Fatal("a directory as destination accepted")
	}
	if _, err := Create(filepath.Join(dir, "x"), Options{Compression: "lz4"}); err == nil {
		t.Fatal("unknown compression accepted")
	}
	noPartials(t, dir)
}

func TestStampMissing(t *testing.T) {
	if _, err := StampOf(filepath.Join(t.TempDir(), "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestConcurrentExports_goroutines: two writers export to one path again and again at
// the same time: every commit succeeds, and the destination is always one writer's whole
// file, never a mix or a cut.
func TestConcurrentExports_goroutines(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "disk.raw")
	datas := [][]byte{bytes.Repeat([]byte("A"), 1<<20), volumeBytes(1 << 20)}
	errs := make(chan error, len(datas))
	for _, data := range datas {
		go func() {
			for range 20 {
				x, err := Create(dest, Options{})
				if err != nil {
					errs <- err
					return
				}
				for i := 0; i < len(data); i += 32 << 10 {
					if _, err := x.Write(data[i : i+32<<10]); err != nil {
						errs <- err
						return
					}
				}
				if _, err := x.Commit(); err != nil {
					errs <- err
					return
				}
				if got, err := os.ReadFile(dest); err != nil || !(bytes.Equal(got, datas[0]) || bytes.Equal(got, datas[1])) {
					errs <- fmt.Errorf("destination is neither whole file (%d bytes, %v)", len(got), err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range datas {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	noPartials(t, dir)
}
