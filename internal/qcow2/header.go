// Package qcow2 reads the little of a qcow2 header the provider needs: whether a stream
// is qcow2 at all, and the image's virtual size (what the guest sees), which is not the
// file's length.
package qcow2

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderSize is how many leading bytes Probe wants to see (the version 2 header is 72
// bytes; the fields read here end at byte 32).
const HeaderSize = 72

// magic is "QFI\xfb", the first four bytes of every qcow2 file.
var magic = []byte{'Q', 'F', 'I', 0xfb}

// Header is what Probe found.
type Header struct {
	Version     uint32
	VirtualSize uint64 // bytes 24..32, big-endian: the disk size the guest sees
	HasBacking  bool   // backing_file_offset (bytes 8..16) is set: an overlay
}

// ErrNotQCOW2 means the bytes do not start with the qcow2 magic.
var ErrNotQCOW2 = errors.New("not a qcow2 image (no QFI\\xfb magic)")

// IsQCOW2 reports whether b starts with the qcow2 magic.
func IsQCOW2(b []byte) bool {
	return len(b) >= len(magic) && string(b[:len(magic)]) == string(magic)
}

// Probe parses the first bytes of an image. It returns ErrNotQCOW2 for anything that is
// not qcow2 (raw, iso, ...) and a descriptive error for a truncated or implausible header.
func Probe(b []byte) (Header, error) {
	if !IsQCOW2(b) {
		return Header{}, ErrNotQCOW2
	}
	if len(b) < 32 {
		return Header{}, fmt.Errorf("qcow2 header truncated: %d bytes, need at least 32", len(b))
	}
	h := Header{
		Version:     binary.BigEndian.Uint32(b[4:8]),
		VirtualSize: binary.BigEndian.Uint64(b[24:32]),
		HasBacking:  binary.BigEndian.Uint64(b[8:16]) != 0,
	}
	if h.Version != 2 && h.Version != 3 {
		return Header{}, fmt.Errorf("qcow2 header: unsupported version %d (want 2 or 3)", h.Version)
	}
	if h.VirtualSize == 0 {
		return Header{}, errors.New("qcow2 header: virtual size is 0")
	}
	return h, nil
}
