package qcow2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Writing a backing file into a qcow2 header, what `qemu-img rebase -u -b FILE -F qcow2`
// does: an incremental export arrives as a standalone qcow2 holding only the clusters
// that changed (the others unallocated), and becomes a link of a chain once its header
// names the previous link as its backing file. This is done on the bytes as they stream
// to the local file, so the file's digest is of what is on disk and nothing is rewritten
// afterwards.

// Header extension types (QEMU's docs/interop/qcow2.txt).
const (
	extEnd           = 0x00000000
	extBackingFormat = 0xe2792aca
)

// MaxBackingName is QEMU's limit on a backing file name (1023 bytes).
const MaxBackingName = 1023

// SetBacking rewrites the header cluster of a qcow2 image (cluster 0, at least one whole
// cluster of b; longer b is left alone past it) so that it names backing as its backing
// file with format as its format (the backing-format header extension). The other header
// extensions are kept in their order; the backing file name goes right after them, as
// QEMU places it. It fails when the image already has a backing file, when anything but
// the header lives in cluster 0, or when the name does not fit before the first cluster.
func SetBacking(b []byte, backing, format string) error {
	if !IsQCOW2(b) {
		return ErrNotQCOW2
	}
	if backing == "" || len(backing) > MaxBackingName {
		return fmt.Errorf("qcow2 backing file name must be 1 to %d bytes, got %d", MaxBackingName, len(backing))
	}
	if len(b) < v2HeaderLen {
		return fmt.Errorf("qcow2 header truncated: %d bytes", len(b))
	}
	version := binary.BigEndian.Uint32(b[4:8])
	hdrLen := uint64(v2HeaderLen)
	switch version {
	case 2:
	case 3:
		if len(b) < v3HeaderLen {
			return fmt.Errorf("qcow2 header truncated: %d bytes", len(b))
		}
		hdrLen = uint64(binary.BigEndian.Uint32(b[100:104]))
		if hdrLen < v3HeaderLen || hdrLen%8 != 0 {
			return fmt.Errorf("qcow2 header: implausible header_length %d", hdrLen)
		}
	default:
		return fmt.Errorf("qcow2 header: unsupported version %d", version)
	}
	cluster, err := clusterSize(b)
	if err != nil {
		return err
	}
	if uint64(len(b)) < cluster {
		return fmt.Errorf("qcow2 header cluster incomplete: %d of %d bytes", len(b), cluster)
	}
	if binary.BigEndian.Uint64(b[8:16]) != 0 {
		return errors.New("qcow2 image already has a backing file")
	}
	// QEMU never puts tables into cluster 0; if something claims to be there, the room
	// after the extensions is not ours to write.
	tables := map[string]uint64{"L1 table": binary.BigEndian.Uint64(b[40:48]), "refcount table": binary.BigEndian.Uint64(b[48:56])}
	if binary.BigEndian.Uint32(b[60:64]) != 0 {
		tables["snapshot table"] = binary.BigEndian.Uint64(b[64:72])
	}
	for what, off := range tables {
		if off < cluster {
			return fmt.Errorf("qcow2 header: the %s starts at %d, inside the header cluster: no room for a backing file name", what, off)
		}
	}
	exts, err := extensions(b[:cluster], hdrLen)
	if err != nil {
		return err
	}
	area := appendExt(nil, extBackingFormat, []byte(format))
	for _, e := range exts {
		if e.typ != extBackingFormat {
			area = appendExt(area, e.typ, e.data)
		}
	}
	area = appendExt(area, extEnd, nil)
	nameOff := hdrLen + uint64(len(area))
	if nameOff+uint64(len(backing)) > cluster {
		return fmt.Errorf("qcow2 header: the backing file name (%d bytes) does not fit into the header cluster (%d bytes, %d used by the header and its extensions)",
			len(backing), cluster, nameOff)
	}
	clear(b[hdrLen:cluster])
	copy(b[hdrLen:], area)
	copy(b[nameOff:], backing)
	binary.BigEndian.PutUint64(b[8:16], nameOff)
	binary.BigEndian.PutUint32(b[16:20], uint32(len(backing)))
	return nil
}

// clusterSize is 1 << cluster_bits, within what QEMU allows (512 B to 2 MiB).
func clusterSize(b []byte) (uint64, error) {
	bits := binary.BigEndian.Uint32(b[20:24])
	if bits < 9 || bits > 21 {
		return 0, fmt.Errorf("qcow2 header: implausible cluster_bits %d", bits)
	}
	return 1 << bits, nil
}

type extension struct {
	typ  uint32
	data []byte
}

// extensions reads the header extensions from off up to the end marker.
func extensions(b []byte, off uint64) ([]extension, error) {
	var out []extension
	for {
		if off+8 > uint64(len(b)) {
			return nil, errors.New("qcow2 header extensions run past the header cluster")
		}
		typ, n := binary.BigEndian.Uint32(b[off:]), uint64(binary.BigEndian.Uint32(b[off+4:]))
		if typ == extEnd {
			return out, nil
		}
		start := off + 8
		if start+n > uint64(len(b)) {
			return nil, fmt.Errorf("qcow2 header extension %#x (%d bytes) runs past the header cluster", typ, n)
		}
		out = append(out, extension{typ: typ, data: b[start : start+n]})
		off = start + (n+7)/8*8
	}
}

// appendExt appends one extension, its data padded to 8 bytes.
func appendExt(b []byte, typ uint32, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, typ)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	return append(b, make([]byte, (8-len(data)%8)%8)...)
}

// BackingWriter passes a qcow2 stream on to w with its header cluster rewritten by
// SetBacking: it holds back the first cluster (at most 2 MiB) until it is complete.
// Close reports a stream that ended before that.
type BackingWriter struct {
	w               io.Writer
	backing, format string
	buf             []byte
	need            int // bytes to hold back: the header, then the whole cluster
	done            bool
}

// NewBackingWriter makes a BackingWriter naming backing (format: its format) in the
// image that is written through it.
func NewBackingWriter(w io.Writer, backing, format string) *BackingWriter {
	return &BackingWriter{w: w, backing: backing, format: format, need: v3HeaderLen}
}

func (x *BackingWriter) Write(p []byte) (int, error) {
	if x.done {
		return x.w.Write(p)
	}
	total := len(p)
	for !x.done && len(p) > 0 {
		n := min(len(p), x.need-len(x.buf))
		x.buf, p = append(x.buf, p[:n]...), p[n:]
		if len(x.buf) < x.need {
			break
		}
		if x.need == v3HeaderLen {
			if !IsQCOW2(x.buf) {
				return 0, ErrNotQCOW2
			}
			c, err := clusterSize(x.buf)
			if err != nil {
				return 0, err
			}
			x.need = int(c)
			continue
		}
		if err := SetBacking(x.buf, x.backing, x.format); err != nil {
			return 0, err
		}
		x.done = true
		if _, err := x.w.Write(x.buf); err != nil {
			return 0, err
		}
		x.buf = nil
	}
	if len(p) > 0 {
		if _, err := x.w.Write(p); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// Close fails when the stream ended before its header cluster was complete; it never
// closes w.
func (x *BackingWriter) Close() error {
	if !x.done {
		return fmt.Errorf("qcow2 stream ended after %d bytes, before its header cluster was complete", len(x.buf))
	}
	return nil
}
