// Package imagesource turns a source image as downloaded into the image itself: it tells
// a compressed download by its name and its first bytes, and decompresses it while it
// streams (gzip, xz, zstd, bzip2), never holding more than the decoders' windows. It
// knows nothing of libvirt: the upload hands it the bytes after they were counted and
// hashed (source_checksum is over the download, compressed).
package imagesource

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// The values of source_compression.
const (
	Auto  = "auto"
	None  = "none"
	Gzip  = "gzip"
	XZ    = "xz"
	Zstd  = "zstd"
	Bzip2 = "bzip2"
)

// Names are the values source_compression accepts.
var Names = []string{Auto, None, Gzip, XZ, Zstd, Bzip2}

// SniffLen is how many leading bytes Sniff looks at.
const SniffLen = 10

// magics are the formats' leading bytes. bzip2's "BZh" is short, so its block size digit
// and the magic of its first block (or of an empty stream's end) are checked too.
var magics = []struct {
	kind  string
	match func([]byte) bool
}{
	{Gzip, func(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }},
	{XZ, func(b []byte) bool { return bytes.HasPrefix(b, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}) }},
	{Zstd, func(b []byte) bool { return bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}) }},
	{Bzip2, func(b []byte) bool {
		return len(b) >= 10 && bytes.HasPrefix(b, []byte("BZh")) && b[3] >= '1' && b[3] <= '9' &&
			(bytes.Equal(b[4:10], []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}) || bytes.Equal(b[4:10], []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}))
	}},
}

// Sniff names the compression whose magic bytes head starts with, None for any other
// content (a qcow2 header, a boot sector, an ISO's zeros).
func Sniff(head []byte) string {
	for _, m := range magics {
		if m.match(head) {
			return m.kind
		}
	}
	return None
}

// extensions are the file name endings that say a compression.
var extensions = map[string]string{".gz": Gzip, ".gzip": Gzip, ".xz": XZ, ".zst": Zstd, ".zstd": Zstd, ".bz2": Bzip2}

// ByExtension names the compression the last element of name (a path, or a URL whose
// query is ignored) ends in, "" when it names none.
func ByExtension(name string) string {
	p := name
	if u, err := url.Parse(name); err == nil && u.Scheme != "" {
		p = u.Path
		if p == "" {
			p = u.Opaque
		}
	}
	return extensions[strings.ToLower(path.Ext(p))]
}

// Resolve decides how to read a source named name whose first bytes are head, for
// source_compression = want. "auto" goes by the magic bytes, which say what the content
// is; a name ending in a compression's extension whose content is not that compression
// is an error (a server that decompressed it, an error page), so that it is not
// uploaded as the image. An explicit compression must match the magic bytes.
func Resolve(want, name string, head []byte) (string, error) {
	got := Sniff(head)
	switch want {
	case "", Auto:
		if ext := ByExtension(name); ext != "" && ext != got {
			return "", fmt.Errorf("the name of %s says %s but its content is %s: set source_compression = %q "+
				"if it really is stored that way, or check what the server sends", name, ext, describe(got), got)
		}
		return got, nil
	case None:
		return None, nil
	case Gzip, XZ, Zstd, Bzip2:
		if got != want {
			return "", fmt.Errorf("source_compression = %q but %s is %s: set source_compression = %q (or \"auto\")",
				want, name, describe(got), got)
		}
		return want, nil
	}
	return "", fmt.Errorf("source_compression %q is not one of %s", want, strings.Join(Names, ", "))
}

func describe(kind string) string {
	if kind == None {
		return "not compressed (no gzip, xz, zstd or bzip2 magic bytes)"
	}
	return kind + "-compressed"
}

// Open is DefaultLimits.Open.
func Open(r io.Reader, want, name string) (image io.Reader, kind string, err error) {
	return DefaultLimits.Open(r, want, name)
}

// Open reads the start of r, resolves its compression (Resolve) and returns the image:
// r decompressed, or r itself for None. The image reader reads r to its end before it
// says EOF, so that whatever counts or hashes r below sees every byte and can fail the
// stream (a wrong checksum) before its consumer takes it as complete. A stream whose
// header asks for a dictionary or window above l fails with *LimitError before its
// decoder allocates it. The image's length is not bounded here (Bound).
func (l Limits) Open(r io.Reader, want, name string) (image io.Reader, kind string, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(SniffLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", err
	}
	if kind, err = Resolve(want, name, head); err != nil {
		return nil, "", err
	}
	if kind == None {
		return br, kind, nil
	}
	d, err := l.decoder(br, kind)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			return nil, "", fmt.Errorf("%s: %w", name, err)
		}
		return nil, "", fmt.Errorf("%s: %s: %w", name, kind, err)
	}
	return &drained{d: d, src: br, kind: kind}, kind, nil
}

// decoder reads r as kind. xz and zstd streams pass through a guard that reads their
// headers first and refuses a dictionary or window above l (xzGuard, zstdGuard).
func (l Limits) decoder(r io.Reader, kind string) (io.Reader, error) {
	switch kind {
	case Gzip:
		return gzip.NewReader(r) // multistream: concatenated members, as gzip -d reads them
	case XZ:
		// DictCap 0: each block gets the dictionary its header asks for, which the guard
		// bounded (a DictCap would be a floor, allocated for every block).
		return xz.ReaderConfig{}.NewReader(newXZGuard(r, l.XZDictionary))
	case Zstd:
		// One goroutine: the frames decode as they arrive, never read far ahead of the
		// upload. The decoder's own window bound stays, behind the guard's.
		d, err := zstd.NewReader(newZstdGuard(r, l.ZstdWindow), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(max(l.ZstdWindow, zstd.MinWindowSize)), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	case Bzip2:
		return bzip2.NewReader(r), nil
	}
	return nil, fmt.Errorf("unknown compression %q", kind)
}

// drained is a decompressing reader that, at the decoder's end, reads what is left of
// the compressed source (nothing, or padding) before it says EOF, and names the
// compression in its errors.
type drained struct {
	d    io.Reader
	src  io.Reader
	kind string
	done bool
}

func (d *drained) Read(p []byte) (int, error) {
	if d.done {
		return 0, io.EOF
	}
	n, err := d.d.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		if _, derr := io.Copy(io.Discard, d.src); derr != nil {
			return n, derr
		}
		d.done = true
		if c, ok := d.d.(io.Closer); ok {
			c.Close()
		}
		return n, io.EOF
	case err != nil:
		var le *LimitError
		if errors.As(err, &le) {
			return n, err
		}
		return n, fmt.Errorf("decompress %s: %w", d.kind, err)
	}
	return n, nil
}
