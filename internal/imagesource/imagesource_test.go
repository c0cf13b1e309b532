package imagesource

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// compress gives data compressed as kind (bzip2: the testdata file, as Go writes no bzip2).
func compress(t testing.TB, kind string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch kind {
	case Gzip:
		w = gzip.NewWriter(&buf)
	case XZ:
		w, err = xz.NewWriter(&buf)
	case Zstd:
		w, err = zstd.NewWriter(&buf)
	default:
		t.Fatalf("no writer for %s", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func bzip2Sample(t testing.TB) ([]byte, []byte) {
	b, err := os.ReadFile("testdata/hello.txt.bz2")
	if err != nil {
		t.Fatal(err)
	}
	return b, []byte(strings.Repeat("hello, bzip2 image\n", 200))
}

func TestOpenDecompresses(t *testing.T) {
	data := bytes.Repeat([]byte("QFI\xfb not really a qcow2 image, "), 40000)
	cases := map[string][]byte{None: data}
	for _, k := range []string{Gzip, XZ, Zstd} {
		cases[k] = compress(t, k, data)
	}
	bz, bzWant := bzip2Sample(t)
	for kind, in := range cases {
		for _, want := range []string{Auto, kind} {
			img, got, err := Open(bytes.NewReader(in), want, "https://example.com/disk.img?sig=x")
			if err != nil || got != kind {
				t.Fatalf("%s (source_compression %s): kind %q, err %v", kind, want, got, err)
			}
			out, err := io.ReadAll(img)
			if err != nil || !bytes.Equal(out, data) {
				t.Fatalf("%s: %d bytes back (err %v), want the %d in", kind, len(out), err, len(data))
			}
		}
	}
	img, got, err := Open(bytes.NewReader(bz), Auto, "disk.raw.bz2")
	if err != nil || got != Bzip2 {
		t.Fatalf("bzip2: %q %v", got, err)
	}
	if out, err := io.ReadAll(img); err != nil || !bytes.Equal(out, bzWant) {
		t.Fatalf("bzip2: %q %v", out, err)
	}
	// none uploads the bytes as they are, compressed or not.
	img, _, _ = Open(bytes.NewReader(cases[Gzip]), None, "x.gz")
	if out, _ := io.ReadAll(img); !bytes.Equal(out, cases[Gzip]) {
		t.Fatal("none changed the bytes")
	}
}

func TestResolve(t *testing.T) {
	gz := compress(t, Gzip, []byte("x"))
	qcow := []byte("QFI\xfb\x00\x00\x00\x03\x00\x00\x00\x00")
	for _, c := range []struct {
		want, name string
		head       []byte
		kind, err  string
	}{
		{Auto, "https://h/jammy.img", qcow, None, ""},
		{"", "/images/x.qcow2.gz", gz, Gzip, ""},
		{Auto, "/images/x.img", gz, Gzip, ""}, // magic wins over a name that says nothing
		{Auto, "https://h/x.qcow2.XZ?token=1", qcow, "", `says xz but its content is not compressed`},
		{Auto, "x.zst", gz, "", `says zstd but its content is gzip-compressed: set source_compression = "gzip"`},
		{Gzip, "x", qcow, "", `source_compression = "gzip" but x is not compressed`},
		{XZ, "x", gz, "", `set source_compression = "gzip"`},
		{None, "x.gz", gz, None, ""},
		{"lz4", "x", gz, "", `not one of auto, none`},
		{Auto, "x", nil, None, ""},
		{Bzip2, "x", []byte("BZh9 not a block"), "", `is not compressed`},
	} {
		kind, err := Resolve(c.want, c.name, c.head)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Resolve(%q, %q): %v, want an error with %q", c.want, c.name, err, c.err)
			}
			continue
		}
		if err != nil || kind != c.kind {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", c.want, c.name, kind, err, c.kind)
		}
	}
}

func TestByExtension(t *testing.T) {
	for name, want := range map[string]string{
		"a.gz": Gzip, "A.XZ": XZ, "https://h/p/a.zst?x=1.gz": Zstd, "file:///x/a.bz2": Bzip2,
		"a.qcow2": "", "https://h/a.img#x.gz": "", "a.zstd": Zstd, "dir.gz/a": "",
	} {
		if got := ByExtension(name); got != want {
			t.Errorf("ByExtension(%q) = %q, want %q", name, got, want)
		}
	}
}

// failAtEnd is a source whose last read fails, as the upload's checksum meter does on a
// mismatch: the image must not end in EOF then.
type failAtEnd struct{ r io.Reader }

var errSum = errors.New("checksum mismatch")

func (f failAtEnd) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errSum
	}
	return n, err
}

func TestOpenPassesTheSourceVerdict(t *testing.T) {
	data := bytes.Repeat([]byte("abc"), 100000)
	for _, k := range []string{Gzip, XZ, Zstd} {
		in := compress(t, k, data)
		// Padding after the stream is read too (the meter must reach the source's end).
		in = append(in, make([]byte, 3)...)
		img, _, err := Open(failAtEnd{bytes.NewReader(in)}, Auto, "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(img); !errors.Is(err, errSum) {
			t.Errorf("%s: read ended with %v, want the source's checksum error", k, err)
		}
	}
	// A corrupt stream names its compression.
	bad := compress(t, Gzip, data)
	bad[len(bad)/2] ^= 0xff
	img, _, _ := Open(bytes.NewReader(bad), Gzip, "x")
	if _, err := io.ReadAll(img); err == nil || !strings.Contains(err.Error(), "decompress gzip") {
		t.Errorf("corrupt gzip: %v", err)
	}
}

// FuzzSniff: Sniff and Resolve never panic, Sniff looks at SniffLen bytes only, and
// auto with a name that says nothing takes what Sniff says.
func FuzzSniff(f *testing.F) {
	for _, k := range []string{Gzip, XZ, Zstd} {
		f.Add(compress(f, k, []byte("seed")), "x")
	}
	bz, _ := bzip2Sample(f)
	f.Add(bz, "x.bz2")
	f.Add([]byte("QFI\xfb\x00\x00\x00\x03"), "https://h/a.qcow2.gz")
	f.Add([]byte("BZh9"), "a")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		got := Sniff(b)
		if len(b) >= SniffLen && Sniff(b[:SniffLen]) != got {
			t.Fatalf("Sniff looks beyond %d bytes", SniffLen)
		}
		if kind, err := Resolve(Auto, "plain", b); err != nil || kind != got {
			t.Fatalf("Resolve(auto) = %q, %v; Sniff says %q", kind, err, got)
		}
		for _, want := range Names {
			kind, err := Resolve(want, name, b)
			if err == nil && want != Auto && kind != want {
				t.Fatalf("Resolve(%q) = %q", want, kind)
			}
		}
	})
}
