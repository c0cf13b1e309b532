package imagesource

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// zstdGuard reads a zstd file's structure (frame headers, block headers, checksums,
// skippable frames) as the bytes pass on to the decoder, and refuses a frame whose
// window is above max before the decoder has seen that frame's header, naming the window
// asked. The decoder enforces the same bound (WithDecoderMaxWindow), but only says
// "window size exceeded"; this says how large and what to do.
type zstdGuard struct {
	headerGuard
	max   uint64
	state int

	frames   int
	checksum bool
}

const (
	zstdFrameStart = iota // a frame, a skippable frame, or the end
	zstdBlock             // a block header
)

func newZstdGuard(r io.Reader, limit uint64) *zstdGuard {
	g := &zstdGuard{headerGuard: newHeaderGuard(r), max: limit}
	g.headerGuard.step = g.step
	return g
}

// fcsSizes are the Frame_Content_Size field's lengths by its flag (0: 1 byte in a
// single-segment frame, none otherwise).
var fcsSizes = [4]int{0, 2, 4, 8}

func (g *zstdGuard) step() error {
	switch g.state {
	case zstdFrameStart:
		magic := make([]byte, 4)
		k, err := io.ReadFull(g.r, magic)
		if k == 0 && errors.Is(err, io.EOF) {
			return io.EOF
		}
		if err != nil {
			g.out = append(g.out, magic[:k]...)
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return io.EOF // the decoder says what is wrong with a stub
			}
			return err
		}
		m := binary.LittleEndian.Uint32(magic)
		if m&0xfffffff0 == 0x184d2a50 { // a skippable frame: its length, then that many bytes
			n, err := g.take(4)
			if err != nil {
				g.out = append(append([]byte{}, magic...), g.out...)
				return err
			}
			g.out = append(append(g.out, magic...), n...)
			g.skip = uint64(binary.LittleEndian.Uint32(n))
			return nil
		}
		if m != 0xfd2fb528 {
			return fmt.Errorf("zstd: no frame magic after frame %d (%x)", g.frames, magic)
		}
		fhd, err := g.take(1)
		if err != nil {
			g.out = nil
			return err
		}
		d := fhd[0]
		single := d&0x20 != 0
		n := []int{0, 1, 2, 4}[d&3] + fcsSizes[d>>6]
		if !single {
			n++ // the window descriptor
		} else if d>>6 == 0 {
			n++ // a single-segment frame's content size takes a byte at least
		}
		rest, err := g.take(n)
		if err != nil {
			g.out = nil
			return err
		}
		window, err := zstdWindow(d, rest)
		if err != nil {
			return err
		}
		if window > g.max {
			hint := "zstd --ultra -22 uses 128 MiB; a larger window comes from --long: zstd itself decompresses it only with --long=31 or --memory; recompress without --long, or upload the image uncompressed"
			return &LimitError{Kind: Zstd, What: "window", Asked: window, Limit: g.max, Hint: hint}
		}
		g.out = append(append(append(g.out, magic...), d), rest...)
		g.checksum = d&0x04 != 0
		g.frames++
		g.state = zstdBlock
	case zstdBlock:
		h, err := g.take(3)
		if err != nil {
			return err
		}
		g.out = append(g.out, h...)
		v := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		size := uint64(v >> 3)
		switch (v >> 1) & 3 {
		case 0, 2: // raw, compressed: size bytes follow
			g.skip = size
		case 1: // RLE: one byte
			g.skip = 1
		default:
			return errors.New("zstd: reserved block type")
		}
		if v&1 != 0 { // the last block: then the checksum, if any
			if g.checksum {
				g.skip += 4
			}
			g.state = zstdFrameStart
		}
	}
	return nil
}

// zstdWindow is the window a frame asks for: its window descriptor's, or a
// single-segment frame's content size.
func zstdWindow(fhd byte, rest []byte) (uint64, error) {
	if fhd&0x08 != 0 {
		return 0, errors.New("zstd: reserved bit set in a frame header")
	}
	if fhd&0x20 == 0 {
		wd := rest[0]
		exp, mant := uint64(wd>>3), uint64(wd&7)
		base := uint64(1) << (10 + exp)
		return base + base/8*mant, nil
	}
	fcs := rest[len(rest)-max(1, fcsSizes[fhd>>6]):]
	switch len(fcs) {
	case 1:
		return uint64(fcs[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(fcs)) + 256, nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(fcs)), nil
	case 8:
		return binary.LittleEndian.Uint64(fcs), nil
	}
	return 0, fmt.Errorf("zstd: frame content size of %d bytes", len(fcs))
}
