package cloudinit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
)

// This file reads ISO9660 images that come from outside: a seed downloaded from a host on
// import (libvirt_cloudinit_iso, libvirt_cluster_machine) may hold any bytes. It is our
// own small reader, not github.com/kdomanski/iso9660's: v0.4.0 panics on an image cut
// short (a seed truncated at 36,864 bytes, where the root directory would begin) and
// loops forever on a System Use entry of length 0, and either would take the provider
// down with it. This reader reads only what a NoCloud seed needs (the label, the files of
// the root directory and their names), checks every offset and length against the image
// before it slices, and every loop advances by at least one byte of the image or is
// bounded by a count, so it ends for any input in time linear in the image's size.
//
// Names are what Linux shows for the image (isofs with its default options), which is
// what cloud-init sees: Rock Ridge NM names when the image has Rock Ridge (genisoimage
// -rock, cloud-localds), else Joliet names when it has a Joliet descriptor, else the
// ISO9660 identifier lower-cased, its ";1" version and a trailing "." dropped.

const (
	isoSystemArea   = 16 * sector // volume descriptors start at sector 16
	maxDescriptors  = 64          // a real image has 2 to 4; the set ends with type 255
	dirRecordMinLen = 34          // 33 fixed bytes and an identifier of at least 1
	maxCEHops       = 16          // SUSP continuation areas followed per record
)

// isoImage is an image being read, with the budget of System Use bytes still allowed to
// be scanned: continuation areas could otherwise make records re-read the same sectors
// over and over.
type isoImage struct {
	b          []byte
	blockSize  uint64
	suspBudget int
}

// extent returns n bytes at logical block loc, or an error when any of them lies outside
// the image.
func (im *isoImage) extent(what string, loc uint32, n uint64) ([]byte, error) {
	start := uint64(loc) * im.blockSize
	if start > uint64(len(im.b)) || n > uint64(len(im.b))-start {
		return nil, fmt.Errorf("%s (block %d, %d bytes) lies outside the image (%d bytes): the image is truncated or corrupt", what, loc, n, len(im.b))
	}
	return im.b[start : start+n : start+n], nil
}

// ReadISO returns the volume label and the files of the root directory of an ISO9660
// image. It never panics and always ends: a truncated or malformed image is an error. The
// returned contents share memory with img.
func ReadISO(img []byte) (string, map[string][]byte, error) {
	if len(img) < isoSystemArea+sector {
		return "", nil, fmt.Errorf("not an ISO9660 image: %d bytes is too short to hold a volume descriptor (at least %d)", len(img), isoSystemArea+sector)
	}
	var pvd, joliet []byte
	for i := range maxDescriptors {
		off := isoSystemArea + i*sector
		if off+sector > len(img) {
			break
		}
		d := img[off : off+sector]
		if string(d[1:6]) != "CD001" {
			break
		}
		switch d[0] {
		case 1:
			if pvd == nil {
				pvd = d
			}
		case 2:
			if joliet == nil && isJoliet(d) {
				joliet = d
			}
		}
		if d[0] == 255 {
			break
		}
	}
	if pvd == nil {
		return "", nil, errors.New("not an ISO9660 image: no primary volume descriptor (CD001) from sector 16 on")
	}
	bs := binary.LittleEndian.Uint16(pvd[128:130])
	if bs != 512 && bs != 1024 && bs != 2048 {
		return "", nil, fmt.Errorf("ISO9660 image: logical block size %d is not 512, 1024 or 2048", bs)
	}
	im := &isoImage{b: img, blockSize: uint64(bs), suspBudget: 2*len(img) + 1<<16}
	label := strings.TrimRight(string(pvd[40:72]), " \x00")

	root, err := im.dir("root directory", pvd[156:156+dirRecordMinLen])
	if err != nil {
		return "", nil, err
	}
	recs, err := im.records(root)
	if err != nil {
		return "", nil, err
	}
	// Rock Ridge (SUSP) is in use when the root's "." record starts with an SP entry; it
	// also says how many bytes to skip at the start of every System Use field.
	rock, skip := false, 0
	if len(recs) > 0 && recs[0].ident == "\x00" {
		if su := recs[0].systemUse; len(su) >= 7 && string(su[0:2]) == "SP" && su[2] >= 7 && su[4] == 0xbe && su[5] == 0xef {
			rock, skip = true, int(su[6])
		}
	}
	nameOf := func(r dirRecord) (string, error) {
		if rock {
			n, ok, err := im.rockName(r.systemUse, skip)
			if err != nil || ok {
				return n, err
			}
		}
		return plainName(r.ident), nil
	}
	if !rock && joliet != nil {
		jroot, err := im.dir("Joliet root directory", joliet[156:156+dirRecordMinLen])
		if err != nil {
			return "", nil, err
		}
		if recs, err = im.records(jroot); err != nil {
			return "", nil, err
		}
		nameOf = func(r dirRecord) (string, error) { return jolietName(r.ident) }
	}

	files := map[string][]byte{}
	for _, r := range recs {
		if r.ident == "\x00" || r.ident == "\x01" || r.flags&(flagDir|flagAssociated) != 0 {
			continue // ".", "..", subdirectories, associated files (Linux hides those)
		}
		name, err := nameOf(r)
		if err != nil {
			return "", nil, err
		}
		if r.flags&flagMultiExtent != 0 {
			return "", nil, fmt.Errorf("file %q is recorded in several extents (larger than 4 GiB): not a cloud-init seed", name)
		}
		if _, dup := files[name]; dup {
			return "", nil, fmt.Errorf("the root directory names the file %q twice", name)
		}
		data, err := im.extent("file "+name, r.loc, uint64(r.size))
		if err != nil {
			return "", nil, err
		}
		files[name] = data
	}
	return label, files, nil
}

// isJoliet reports whether a supplementary volume descriptor is Joliet's: its escape
// sequences (bytes 88..120) name UCS-2 level 1, 2 or 3.
func isJoliet(d []byte) bool {
	esc := d[88:120]
	for _, lvl := range []string{"%/@", "%/C", "%/E"} {
		if bytes.HasPrefix(esc, []byte(lvl)) {
			return true
		}
	}
	return false
}

const (
	flagDir         = 0x02
	flagAssociated  = 0x04
	flagMultiExtent = 0x80
)

// dirRecord is one directory record, its fields checked to lie inside the record.
type dirRecord struct {
	loc       uint32
	size      uint32
	flags     byte
	ident     string
	systemUse []byte
}

// parseRecord decodes a directory record; b is exactly the record's bytes (b[0] long).
func parseRecord(b []byte) (dirRecord, error) {
	if len(b) < dirRecordMinLen-1 {
		return dirRecord{}, fmt.Errorf("directory record of %d bytes is shorter than 33", len(b))
	}
	idLen := int(b[32])
	if idLen == 0 || 33+idLen > len(b) {
		return dirRecord{}, fmt.Errorf("directory record of %d bytes has an identifier of %d bytes", len(b), idLen)
	}
	su := 33 + idLen
	if idLen%2 == 0 {
		su++ // a padding byte keeps the System Use field at an even offset
	}
	su = min(su, len(b))
	return dirRecord{
		loc:       binary.LittleEndian.Uint32(b[2:6]),
		size:      binary.LittleEndian.Uint32(b[10:14]),
		flags:     b[25],
		ident:     string(b[33 : 33+idLen]),
		systemUse: b[su:],
	}, nil
}

// dir returns the extent of the directory a 34-byte root record (from a volume
// descriptor) points to.
func (im *isoImage) dir(what string, rec []byte) ([]byte, error) {
	if rec[0] < dirRecordMinLen {
		return nil, fmt.Errorf("%s: record length %d in the volume descriptor, want 34", what, rec[0])
	}
	r, err := parseRecord(rec[:rec[0]])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if r.flags&flagDir == 0 {
		return nil, fmt.Errorf("%s: the record is not marked as a directory", what)
	}
	if r.size == 0 {
		return nil, fmt.Errorf("%s: extent length is 0", what)
	}
	return im.extent(what, r.loc, uint64(r.size))
}

// records splits a directory extent into its records. A record never crosses a logical
// block; a length byte of 0 means the rest of the block is padding. Each step advances
// by at least one byte, so the loop ends within len(d) steps.
func (im *isoImage) records(d []byte) ([]dirRecord, error) {
	var out []dirRecord
	bs := int(im.blockSize)
	for p := 0; p < len(d); {
		n := int(d[p])
		if n == 0 {
			p = (p/bs + 1) * bs
			continue
		}
		if n < dirRecordMinLen-1 || p+n > len(d) || p/bs != (p+n-1)/bs {
			return nil, fmt.Errorf("directory record at offset %d (length %d) does not fit its block of the directory (%d bytes)", p, n, len(d))
		}
		r, err := parseRecord(d[p : p+n])
		if err != nil {
			return nil, fmt.Errorf("directory record at offset %d: %w", p, err)
		}
		out = append(out, r)
		p += n
	}
	return out, nil
}

// rockName returns the Rock Ridge name (NM entries, joined) of a record's System Use
// field, following SUSP continuation areas (CE). ok is false when there is no NM entry,
// or when NM names "." or "..".
func (im *isoImage) rockName(su []byte, skip int) (name string, ok bool, err error) {
	if skip > len(su) {
		return "", false, nil
	}
	area := su[skip:]
	var nm []byte
	for hop := 0; ; hop++ {
		var next []byte
	entries:
		for len(area) >= 4 { // fewer than 4 bytes left are padding (SUSP 4)
			n := int(area[2])
			if n < 4 || n > len(area) {
				return "", false, fmt.Errorf("file name (Rock Ridge): System Use entry %q of length %d does not fit (%d bytes left)", area[0:2], n, len(area))
			}
			im.suspBudget -= n
			if im.suspBudget < 0 {
				return "", false, errors.New("file name (Rock Ridge): the System Use entries add up to more than the image holds: the image is corrupt")
			}
			e := area[:n]
			switch string(e[0:2]) {
			case "NM":
				if n < 5 {
					return "", false, fmt.Errorf("file name (Rock Ridge): NM entry of length %d", n)
				}
				if e[4]&0x06 != 0 { // CURRENT or PARENT: "." or ".."
					return "", false, nil
				}
				nm = append(nm, e[5:]...)
				ok = true
			case "CE":
				if n < 28 {
					return "", false, fmt.Errorf("file name (Rock Ridge): CE entry of length %d, want 28", n)
				}
				loc := binary.LittleEndian.Uint32(e[4:8])
				off := uint64(binary.LittleEndian.Uint32(e[12:16]))
				ln := uint64(binary.LittleEndian.Uint32(e[20:24]))
				start := uint64(loc)*im.blockSize + off
				if start > uint64(len(im.b)) || ln > uint64(len(im.b))-start {
					return "", false, fmt.Errorf("file name (Rock Ridge): continuation area (block %d, offset %d, %d bytes) lies outside the image (%d bytes)", loc, off, ln, len(im.b))
				}
				next = im.b[start : start+ln]
			case "ST": // the System Use entries end here
				break entries
			}
			area = area[n:]
		}
		if next == nil {
			break
		}
		if hop >= maxCEHops {
			return "", false, fmt.Errorf("file name (Rock Ridge): more than %d continuation areas for one name", maxCEHops)
		}
		area = next
	}
	if !ok || len(nm) == 0 {
		return "", false, nil
	}
	return string(nm), true, nil
}

// plainName is how Linux shows an ISO9660 identifier without Rock Ridge or Joliet:
// lower case, without the ";1" version and without a trailing ".".
func plainName(id string) string {
	if i := strings.IndexByte(id, ';'); i >= 0 {
		id = id[:i]
	}
	id = strings.TrimSuffix(id, ".")
	return strings.ToLower(id)
}

// jolietName decodes a Joliet identifier (UCS-2 / UTF-16 big-endian) and drops the ";1".
func jolietName(id string) (string, error) {
	if len(id)%2 != 0 {
		return "", fmt.Errorf("file name (Joliet): %d bytes, an odd length for UCS-2", len(id))
	}
	u := make([]uint16, len(id)/2)
	for i := range u {
		u[i] = uint16(id[2*i])<<8 | uint16(id[2*i+1])
	}
	s := string(utf16.Decode(u))
	if i := strings.LastIndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return s, nil
}
