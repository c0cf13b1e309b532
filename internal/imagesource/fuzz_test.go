package imagesource

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// The fuzz targets' bounds are small, so that each input decodes in a few milliseconds
// and a bound that does not hold shows at once.
const (
	fuzzDict   = 1 << 20   // xz dictionary and zstd window
	fuzzOutput = 256 << 10 // decompressed bytes
	// fuzzSlack is what a decoder may allocate beyond its window: bufio buffers, zstd's
	// block buffers and tables, bzip2's 900 kB block (3.6 MB of uint32), the output chunks.
	fuzzSlack = 12 << 20
)

// fuzzDecompress opens in as kind with small limits and reads it through Bound, as the
// upload does: it never panics, never gives more than fuzzOutput bytes, never allocates
// much past the dictionary bound, and fails only with the documented errors.
func fuzzDecompress(t *testing.T, kind string, in []byte) {
	lim := Limits{XZDictionary: fuzzDict, ZstdWindow: fuzzDict}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := int64(0), error(nil)
	img, got, err := lim.Open(bytes.NewReader(in), kind, "fuzz")
	if err == nil {
		if got != kind {
			t.Fatalf("Open(%s) read it as %s", kind, got)
		}
		n, err = io.Copy(io.Discard, Bound(img, fuzzOutput, "fuzz", "the fuzz bound"))
	}
	runtime.ReadMemStats(&after)
	if n > fuzzOutput {
		t.Fatalf("%d bytes out, bound %d", n, fuzzOutput)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > fuzzDict+fuzzSlack {
		t.Fatalf("%s: %d bytes allocated for a %d-byte input (dictionary bound %d)", kind, a, len(in), fuzzDict)
	}
	var le *LimitError
	var tl *TooLargeError
	switch {
	case err == nil, errors.As(err, &tl):
	case errors.As(err, &le):
		if le.Asked <= le.Limit || le.Kind != kind {
			t.Fatalf("LimitError for what is allowed: %v", le)
		}
	case strings.HasPrefix(err.Error(), "decompress "+kind+": "), // while streaming
		strings.HasPrefix(err.Error(), "fuzz: "+kind+": "),                // the stream's header
		strings.HasPrefix(err.Error(), `source_compression = "`+kind+`"`): // not kind's magic
	default:
		t.Fatalf("%s: undocumented error %q", kind, err)
	}
}

// seeds adds valid streams, bombs (much output from a small input), truncations and
// streams asking for a large dictionary or window.
func seeds(f *testing.F, files ...[]byte) {
	for _, b := range files {
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:min(len(b), 16)])
	}
}

func FuzzDecompressGzip(f *testing.F) {
	seeds(f, compress(f, Gzip, []byte("gzip seed")), compress(f, Gzip, make([]byte, 1<<20)),
		append(compress(f, Gzip, []byte("a")), compress(f, Gzip, []byte("b"))...))
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecompress(t, Gzip, in) })
}

func FuzzDecompressXZ(f *testing.F) {
	seeds(f, compress(f, XZ, []byte("xz seed")), compress(f, XZ, make([]byte, 1<<20)),
		xzFile(0, []byte("hand-made")), xzFile(40, []byte("4 GiB dictionary")), xzFile(21, []byte("3 MiB dictionary")),
		append(append(xzFile(1, []byte("one")), 0, 0, 0, 0), xzFile(2, []byte("two"))...))
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecompress(t, XZ, in) })
}

func FuzzDecompressZstd(f *testing.F) {
	seeds(f, compress(f, Zstd, []byte("zstd seed")), compress(f, Zstd, make([]byte, 1<<20)),
		zstdFile(0, []byte("small window")), zstdFile(21, []byte("2 GiB window")), zstdFile(11, []byte("2 MiB window")),
		append([]byte{0x50, 0x2a, 0x4d, 0x18, 1, 0, 0, 0, 'x'}, zstdFile(1, []byte("after a skippable frame"))...))
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecompress(t, Zstd, in) })
}

func FuzzDecompressBzip2(f *testing.F) {
	bz, _ := bzip2Sample(f)
	seeds(f, bz)
	f.Fuzz(func(t *testing.T, in []byte) { fuzzDecompress(t, Bzip2, in) })
}
