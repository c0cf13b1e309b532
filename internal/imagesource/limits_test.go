package imagesource

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

func TestXZDictionaryLimit(t *testing.T) {
	data := bytes.Repeat([]byte("an xz image "), 20000)
	// The hand-made file is valid: the library decodes it as it is.
	ok := xzFile(0, data)
	r, err := xz.NewReader(bytes.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := io.ReadAll(r); err != nil || !bytes.Equal(out, data) {
		t.Fatalf("hand-made xz file: %d bytes, %v", len(out), err)
	}
	for _, c := range []struct {
		dict byte
		err  string
	}{
		{0, ""},
		{28, ""}, // 64 MiB: xz -9
		{29, "xz stream asks for a 96 MiB (100663296-byte) dictionary; the provider allows at most 64 MiB (xz -9 and -9e use 64 MiB"},
		{40, "xz stream asks for a 4.0 GiB (4294967295-byte) dictionary; the provider allows at most 64 MiB"},
	} {
		img, _, err := Open(bytes.NewReader(xzFile(c.dict, data)), Auto, "disk.raw.xz")
		if err == nil {
			var out []byte
			out, err = io.ReadAll(img)
			if err == nil && !bytes.Equal(out, data) {
				t.Fatalf("dict %d: %d bytes back", c.dict, len(out))
			}
		}
		var le *LimitError
		switch {
		case c.err == "" && err != nil:
			t.Errorf("dict %d: %v", c.dict, err)
		case c.err != "" && (!errors.As(err, &le) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("dict %d: %v, want a LimitError with %q", c.dict, err, c.err)
		}
	}
	// Real files: xz at its strongest preset, several blocks and streams, padding.
	w := xz.WriterConfig{DictCap: 64 << 20, BlockSize: 50000}
	var buf bytes.Buffer
	zw, err := w.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	two := append(append(append([]byte{}, buf.Bytes()...), 0, 0, 0, 0), xzFile(3, data)...)
	img, _, err := Open(bytes.NewReader(two), XZ, "x")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := io.ReadAll(img); err != nil || !bytes.Equal(out, append(append([]byte{}, data...), data...)) {
		t.Fatalf("two streams: %d bytes, %v", len(out), err)
	}
	// A second stream asking too much is refused when it comes.
	bad := append(append([]byte{}, buf.Bytes()...), xzFile(40, data)...)
	img, _, _ = Open(bytes.NewReader(bad), XZ, "x")
	if _, err := io.ReadAll(img); !errors.As(err, new(*LimitError)) {
		t.Fatalf("second stream of 4 GiB: %v", err)
	}
}

func TestZstdWindowLimit(t *testing.T) {
	data := bytes.Repeat([]byte("a zstd image "), 20000)
	for _, c := range []struct {
		exp byte
		err string
	}{
		{7, ""},
		{17, ""}, // 128 MiB: zstd --ultra -22
		{18, "zstd stream asks for a 256 MiB (268435456-byte) window; the provider allows at most 128 MiB (zstd --ultra -22 uses 128 MiB"},
		{21, "asks for a 2 GiB (2147483648-byte) window"}, // --long=31
		{31, "asks for a 2 TiB"},
	} {
		in := zstdFile(c.exp, data)
		img, _, err := Open(bytes.NewReader(in), Auto, "disk.raw.zst")
		if err == nil {
			var out []byte
			out, err = io.ReadAll(img)
			if err == nil && !bytes.Equal(out, data) {
				t.Fatalf("exp %d: %d bytes back", c.exp, len(out))
			}
		}
		var le *LimitError
		switch {
		case c.err == "" && err != nil:
			t.Errorf("window exp %d: %v", c.exp, err)
		case c.err != "" && (!errors.As(err, &le) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("window exp %d: %v, want a LimitError with %q", c.exp, err, c.err)
		}
	}
	// A single-segment frame's window is its content size.
	enc, _ := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
	small := enc.EncodeAll(data, nil)
	lim := Limits{XZDictionary: 1 << 20, ZstdWindow: 64 << 10}
	img, _, err := lim.Open(bytes.NewReader(small), Zstd, "x")
	if err == nil {
		_, err = io.ReadAll(img)
	}
	if !strings.Contains(err.Error(), "asks for a 253.9 KiB (260000-byte) window") {
		t.Errorf("single segment: %v", err)
	}
	// Skippable frames, several frames, a checksum: read through.
	enc, _ = zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithWindowSize(1<<20))
	skip := []byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}
	many := append(append(append(enc.EncodeAll(data, nil), skip...), zstdFile(2, data)...), enc.EncodeAll(data, nil)...)
	img, _, err = Open(bytes.NewReader(many), Zstd, "x")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := io.ReadAll(img); err != nil || len(out) != 3*len(data) {
		t.Fatalf("frames: %d bytes, %v", len(out), err)
	}
}

func TestBound(t *testing.T) {
	data := bytes.Repeat([]byte{7}, 10000)
	for _, c := range []struct {
		limit uint64
		err   bool
	}{{0, true}, {9999, true}, {10000, false}, {10001, false}, {1, true}} {
		out, err := io.ReadAll(Bound(bytes.NewReader(data), c.limit, "x", "the bound"))
		var tl *TooLargeError
		if c.err != errors.As(err, &tl) || uint64(len(out)) > c.limit {
			t.Errorf("limit %d: %d bytes, %v", c.limit, len(out), err)
		}
	}
	_, err := io.ReadAll(Bound(bytes.NewReader(data), 100, "https://h/x.img", "capacity_bytes = 100"))
	if err == nil || err.Error() != "the image https://h/x.img is larger than capacity_bytes = 100; stopped after 100 bytes" {
		t.Errorf("message: %v", err)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 bytes", 1023: "1023 bytes", 64 << 20: "64 MiB", 1<<32 - 1: "4.0 GiB", 96 << 20: "96 MiB", 1536: "1.5 KiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
