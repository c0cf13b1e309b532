package imagesource

import (
	"fmt"
	"io"
	"strconv"
)

// Limits bound what a compressed source may make the provider allocate: the decoders
// allocate the dictionary (xz) or window (zstd) that a stream's own header asks for,
// before a byte of the image comes out, so a 92-byte xz file whose header asks for a
// 4 GiB dictionary would cost 4 GiB. A stream asking for more than its limit is refused
// (*LimitError) before its decoder sees the header. gzip (32 KiB) and bzip2 (at most
// 900 kB blocks) have fixed windows.
type Limits struct {
	XZDictionary uint64 // largest LZMA2 dictionary an xz block may ask for
	ZstdWindow   uint64 // largest window a zstd frame may ask for
}

// DefaultLimits are what the tools that make images write at their strongest settings:
// xz -9 / -9e use a 64 MiB dictionary, zstd --ultra -22 a 128 MiB window. Larger ones
// need explicit options (xz --lzma2=dict=..., zstd --long=31), and zstd itself refuses to
// decompress a window over 128 MiB unless told --long=31 or --memory=...: so does the
// provider, which keeps a source's decoder within 128 MiB.
var DefaultLimits = Limits{XZDictionary: 64 << 20, ZstdWindow: 128 << 20}

// LimitError says a compressed stream asks for more decoder memory than Limits allow.
type LimitError struct {
	Kind  string // XZ or Zstd
	What  string // "dictionary" or "window"
	Asked uint64
	Limit uint64
	Hint  string // what real tools use, and what to do
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s stream asks for a %s (%d-byte) %s; the provider allows at most %s (%s)",
		e.Kind, FormatSize(e.Asked), e.Asked, e.What, FormatSize(e.Limit), e.Hint)
}

// TooLargeError says an image brought more bytes than its bound (Bound).
type TooLargeError struct {
	Name  string // the source
	Limit uint64
	Why   string // the bound, said as what it is: "capacity_bytes = 1048576 (1 MiB): ..."
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the image %s is larger than %s; stopped after %d bytes", e.Name, e.Why, e.Limit)
}

// Bound returns r cut at limit bytes: it never returns a byte past limit, and a read
// that finds one fails with *TooLargeError, so that the consumer (libvirt's upload)
// never takes a truncated image for a whole one.
func Bound(r io.Reader, limit uint64, name, why string) io.Reader {
	return &bounded{r: r, left: limit, err: &TooLargeError{Name: name, Limit: limit, Why: why}}
}

type bounded struct {
	r    io.Reader
	left uint64
	err  *TooLargeError
	one  [1]byte
}

func (b *bounded) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left == 0 {
		// At the bound: one more byte means too large; EOF (or any error) is the image's end.
		n, err := b.r.Read(b.one[:])
		if n > 0 {
			return 0, b.err
		}
		if err == nil {
			return 0, nil
		}
		return 0, err
	}
	if uint64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= uint64(n)
	return n, err
}

// FormatSize writes n bytes as a short binary size: "64 MiB", "4.0 GiB".
func FormatSize(n uint64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i, v := 0, n
	for v >= 1024 && i < len(units)-1 {
		if v%1024 != 0 {
			break
		}
		v /= 1024
		i++
	}
	if v < 1024 || i == len(units)-1 {
		return strconv.FormatUint(v, 10) + " " + units[i]
	}
	f := float64(n)
	i = 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
}
