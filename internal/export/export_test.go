package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
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
			if _, err := os.Stat(dest + PartialSuffix); err != nil {
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
			if _, err := os.Stat(dest + PartialSuffix); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("partial file left after commit: %v", err)
			}
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

// TestFileAbort: an aborted export removes its partial file and leaves an earlier export
// at the destination alone; a leftover partial of an earlier crash is overwritten.
func TestFileAbort(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "disk.qcow2")
	if err := os.WriteFile(dest, []byte("earlier export"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest+PartialSuffix, bytes.Repeat([]byte("x"), 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := Create(dest, Options{Compression: Gzip})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dest + PartialSuffix); st.Size() != 0 {
		t.Fatalf("leftover partial not truncated: %d bytes", st.Size())
	}
	if _, err := x.Write([]byte("some bytes")); err != nil {
		t.Fatal(err)
	}
	if err := x.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dest + PartialSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial left after abort: %v", err)
	}
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
	if err := os.Symlink("/dev/full", dest+PartialSuffix); err != nil {
		t.Fatal(err)
	}
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
	if _, err := os.Lstat(dest + PartialSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial left after a failed export: %v", err)
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination made by a failed export: %v", err)
	}
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
	if _, err := os.Stat(filepath.Join(dir, "x"+PartialSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial left by a refused Create: %v", err)
	}
}

func TestStampMissing(t *testing.T) {
	if _, err := StampOf(filepath.Join(t.TempDir(), "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
