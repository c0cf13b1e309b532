// Package qcow2 reads the little of a qcow2 header the provider needs: whether a stream
// is qcow2 at all, the image's virtual size (what the guest sees, not the file's length),
// and whether QEMU would open other files on its behalf (a backing file, an external
// data file) or refuse it, before such an image is uploaded into a volume.
package qcow2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// HeaderSize is how many leading bytes Probe wants to see: the whole version 3 header
// (104 bytes; version 2's is 72). A stream shorter than that is still probed: anything
// but qcow2 may be short, and a qcow2 image too short for its own header is an error.
const HeaderSize = 104

const (
	v2HeaderLen = 72
	v3HeaderLen = 104
)

// magic is "QFI\xfb", the first four bytes of every qcow2 file.
var magic = []byte{'Q', 'F', 'I', 0xfb}

// Header is what Probe found.
type Header struct {
	Version     uint32
	VirtualSize uint64 // bytes 24..32, big-endian: the disk size the guest sees
	HasBacking  bool   // backing_file_offset (bytes 8..16) is set: an overlay
	// IncompatibleFeatures (v3, bytes 72..80) are the feature bits Probe accepted: dirty,
	// compression type, extended L2 (never corrupt, external data file or unknown ones).
	IncompatibleFeatures uint64
}

// Incompatible feature bits of a version 3 header (QEMU's docs/interop/qcow2.txt): a
// reader that does not know a set bit must refuse the image.
const (
	FeatureDirty           = 1 << 0 // refcounts may be stale: QEMU repairs them on open
	FeatureCorrupt         = 1 << 1 // QEMU refuses to open the image for writing
	FeatureExternalData    = 1 << 2 // guest data lives in another file, named in a header extension
	FeatureCompressionType = 1 << 3 // compression_type (byte 104) is not zlib
	FeatureExtendedL2      = 1 << 4 // subclusters
	knownFeatures          = FeatureDirty | FeatureCorrupt | FeatureExternalData | FeatureCompressionType | FeatureExtendedL2
)

// ErrNotQCOW2 means the bytes do not start with the qcow2 magic.
var ErrNotQCOW2 = errors.New("not a qcow2 image (no QFI\\xfb magic)")

// ErrUnsafe is wrapped by the errors for images the provider will not upload, because
// QEMU would open another file of the host for them or refuse them.
var ErrUnsafe = errors.New("qcow2 image refused")

// IsQCOW2 reports whether b starts with the qcow2 magic.
func IsQCOW2(b []byte) bool {
	return len(b) >= len(magic) && string(b[:len(magic)]) == string(magic)
}

// Probe parses the first bytes of an image. It returns ErrNotQCOW2 for anything that is
// not qcow2 (raw, iso, ...), an error wrapping ErrUnsafe for an image with an external
// data file, marked corrupt or with incompatible features it does not know, and a
// descriptive error for a truncated or implausible header. A backing file is reported in
// Header.HasBacking, not refused here: the caller decides.
func Probe(b []byte) (Header, error) {
	if !IsQCOW2(b) {
		return Header{}, ErrNotQCOW2
	}
	if len(b) < 8 {
		return Header{}, fmt.Errorf("qcow2 header truncated: %d bytes, need at least %d", len(b), v2HeaderLen)
	}
	h := Header{Version: binary.BigEndian.Uint32(b[4:8])}
	need := v2HeaderLen
	switch h.Version {
	case 2:
	case 3:
		need = v3HeaderLen
	default:
		return Header{}, fmt.Errorf("qcow2 header: unsupported version %d (want 2 or 3)", h.Version)
	}
	if len(b) < need {
		return Header{}, fmt.Errorf("qcow2 header truncated: %d bytes, a version %d header has %d", len(b), h.Version, need)
	}
	h.VirtualSize = binary.BigEndian.Uint64(b[24:32])
	h.HasBacking = binary.BigEndian.Uint64(b[8:16]) != 0
	if h.Version == 3 {
		if hl := binary.BigEndian.Uint32(b[100:104]); hl < v3HeaderLen {
			return Header{}, fmt.Errorf("qcow2 header: header_length %d is shorter than a version 3 header (104)", hl)
		}
		f := binary.BigEndian.Uint64(b[72:80])
		if err := checkFeatures(f); err != nil {
			return Header{}, err
		}
		h.IncompatibleFeatures = f
	}
	if h.VirtualSize == 0 {
		return Header{}, errors.New("qcow2 header: virtual size is 0")
	}
	return h, nil
}

// checkFeatures refuses the incompatible features that would make QEMU open a file of
// the host's choosing, or refuse the image, or that nobody knows.
func checkFeatures(f uint64) error {
	switch {
	case f&FeatureExternalData != 0:
		// The header extension names a path that QEMU opens on the host, read-write, as the
		// guest's disk: an image from a URL could point it at any file QEMU may open.
		return fmt.Errorf("%w: it keeps its data in an external data file (the data-file incompatible feature): "+
			"QEMU would open a file on the host that the image names. Convert it into a standalone image "+
			"first: qemu-img convert -O qcow2 IMAGE standalone.qcow2", ErrUnsafe)
	case f&FeatureCorrupt != 0:
		return fmt.Errorf("%w: it is marked corrupt (the corrupt incompatible feature): QEMU will not open it for "+
			"writing. Repair it (qemu-img check -r all IMAGE) or convert it (qemu-img convert -O qcow2 IMAGE new.qcow2) first", ErrUnsafe)
	case f&^knownFeatures != 0:
		var bits []string
		for i := range 64 {
			if f&^knownFeatures&(1<<i) != 0 {
				bits = append(bits, fmt.Sprint(i))
			}
		}
		return fmt.Errorf("%w: it uses incompatible features this provider does not know (bits %s of incompatible_features): "+
			"convert it with a qemu-img of this host first: qemu-img convert -O qcow2 IMAGE standalone.qcow2", ErrUnsafe, strings.Join(bits, ", "))
	}
	return nil
}
