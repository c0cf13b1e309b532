package imagesource

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// xzGuard reads an xz file's structure (stream headers, block headers, LZMA2 chunk
// headers, index, footer) as the bytes pass on to the decoder, and refuses a block whose
// LZMA2 filter asks for a dictionary above max before the decoder has seen that block's
// header: github.com/ulikunitz/xz allocates whatever dictionary a block header asks for
// (its ReaderConfig.DictCap is a floor for xz files, not a ceiling), up to 4 GiB.
//
// It only tracks where the headers are; the decoder checks everything else (magic bytes,
// CRCs, the index against the blocks). Bytes it cannot place (an invalid chunk control
// byte, a malformed block header) are an error here too, so the two never disagree on
// where a block header is.
type xzGuard struct {
	headerGuard
	max   uint64
	state int

	streams int
	check   uint64 // the current stream's check size
	packed  uint64 // bytes of the current block's LZMA2 data so far
	index   uint64 // bytes of the current index so far
	records uint64 // index records left
}

const (
	xzStreamStart = iota // a stream header, stream padding, or the end
	xzBlockStart         // a block header or the index indicator
	xzChunk              // an LZMA2 chunk's control byte
	xzRecords            // index records
)

func newXZGuard(r io.Reader, limit uint64) *xzGuard {
	g := &xzGuard{headerGuard: newHeaderGuard(r), max: limit}
	g.headerGuard.step = g.step
	return g
}

// uvarint reads an xz multibyte integer (at most 9 bytes) and passes it on.
func (g *xzGuard) uvarint() (uint64, int, error) {
	var x uint64
	for i := 0; i < 9; i++ {
		b, err := g.take(1)
		if err != nil {
			return 0, i, err
		}
		g.out = append(g.out, b[0])
		x |= uint64(b[0]&0x7f) << (7 * i)
		if b[0] < 0x80 {
			return x, i + 1, nil
		}
	}
	return 0, 9, errors.New("xz: malformed multibyte integer")
}

var checkSizes = [16]uint64{0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64}

func (g *xzGuard) step() error {
	switch g.state {
	case xzStreamStart:
		b := make([]byte, 4)
		k, err := io.ReadFull(g.r, b)
		g.out = append(g.out, b[:k]...)
		switch {
		case k == 0 && errors.Is(err, io.EOF):
			return io.EOF
		case errors.Is(err, io.ErrUnexpectedEOF):
			return io.EOF // 1 to 3 bytes: the decoder says what is wrong with them
		case err != nil:
			return err
		case b[0]|b[1]|b[2]|b[3] == 0 && g.streams > 0:
			return nil // stream padding
		}
		rest, err := g.take(8)
		if err != nil {
			return err
		}
		g.out = append(g.out, rest...)
		g.check = checkSizes[rest[3]&0x0f] // stream flags: bytes 6 and 7
		g.streams++
		g.state = xzBlockStart
	case xzBlockStart:
		first, err := g.take(1)
		if err != nil {
			return err
		}
		if first[0] == 0 { // the index indicator
			g.out = append(g.out, 0)
			n, k, err := g.uvarint()
			if err != nil {
				return err
			}
			g.index, g.records, g.state = uint64(1+k), n, xzRecords
			return nil
		}
		rest, err := g.take((int(first[0])+1)*4 - 1)
		if err != nil {
			g.out = nil // never hand the decoder part of a header that was not checked
			return err
		}
		hdr := append(first, rest...)
		if err := g.checkBlockHeader(hdr); err != nil {
			g.out = nil
			return err
		}
		g.out = append(g.out, hdr...)
		g.packed, g.state = 0, xzChunk
	case xzChunk:
		c, err := g.take(1)
		if err != nil {
			return err
		}
		g.out = append(g.out, c[0])
		g.packed++
		switch ctl := c[0]; {
		case ctl == 0: // end of the block's data: padding to 4, then the check
			g.skip = (4-g.packed%4)%4 + g.check
			g.state = xzBlockStart
		case ctl == 1 || ctl == 2: // an uncompressed chunk
			s, err := g.take(2)
			if err != nil {
				return err
			}
			g.out = append(g.out, s...)
			g.skip = uint64(binary.BigEndian.Uint16(s)) + 1
			g.packed += 2 + g.skip
		case ctl >= 0x80: // an LZMA chunk: unpacked size, packed size, properties on a reset
			n := 4
			if ctl >= 0xc0 {
				n = 5
			}
			s, err := g.take(n)
			if err != nil {
				return err
			}
			g.out = append(g.out, s...)
			g.skip = uint64(binary.BigEndian.Uint16(s[2:4])) + 1
			g.packed += uint64(n) + g.skip
		default:
			return fmt.Errorf("xz: invalid LZMA2 chunk control byte %#x", ctl)
		}
	case xzRecords:
		for i := 0; i < 256 && g.records > 0; i++ {
			for j := 0; j < 2; j++ {
				_, k, err := g.uvarint()
				if err != nil {
					return err
				}
				g.index += uint64(k)
			}
			g.records--
		}
		if g.records == 0 { // index padding, its CRC32, the stream footer
			g.skip = (4-g.index%4)%4 + 4 + 12
			g.state = xzStreamStart
		}
	}
	return nil
}

// checkBlockHeader finds the LZMA2 filter of a block header and refuses its dictionary
// when it is larger than max.
func (g *xzGuard) checkBlockHeader(h []byte) error {
	body := h[:len(h)-4] // the CRC32 is the decoder's to check
	if len(body) < 2 {
		return errors.New("xz: block header too short")
	}
	flags := body[1]
	pos := 2
	uvarint := func() (uint64, error) {
		var x uint64
		for i := 0; i < 9 && pos < len(body); i++ {
			b := body[pos]
			pos++
			x |= uint64(b&0x7f) << (7 * i)
			if b < 0x80 {
				return x, nil
			}
		}
		return 0, errors.New("xz: malformed block header")
	}
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} { // compressed, uncompressed size
		if present {
			if _, err := uvarint(); err != nil {
				return err
			}
		}
	}
	filters := int(flags&3) + 1
	for i := 0; i < filters; i++ {
		id, err := uvarint()
		if err != nil {
			return err
		}
		size, err := uvarint()
		if err != nil {
			return err
		}
		if size > uint64(len(body)-pos) {
			return errors.New("xz: malformed block header (filter properties)")
		}
		props := body[pos : pos+int(size)]
		pos += int(size)
		if id != 0x21 {
			continue // not LZMA2: the decoder refuses it
		}
		if len(props) != 1 || props[0] > 40 {
			return errors.New("xz: malformed LZMA2 filter properties")
		}
		if dict := xzDictSize(props[0]); dict > g.max {
			return &LimitError{Kind: XZ, What: "dictionary", Asked: dict, Limit: g.max,
				Hint: "xz -9 and -9e use 64 MiB; recompress the image with xz -9 or less, or upload it uncompressed"}
		}
	}
	return nil
}

// xzDictSize decodes an LZMA2 dictionary size byte (0..40).
func xzDictSize(b byte) uint64 {
	if b == 40 {
		return 1<<32 - 1
	}
	return uint64(2|b&1) << (b/2 + 11)
}
