// Package cloudinit builds cloud-init NoCloud seeds: an ISO9660 image labelled "cidata"
// holding user-data, meta-data and, when given, network-config and vendor-data. The
// image is built in memory: nothing touches the local disk.
package cloudinit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/kdomanski/iso9660"
)

// VolumeLabel is the label cloud-init's NoCloud datasource looks for.
const VolumeLabel = "cidata"

// File names inside the seed, as NoCloud expects them.
const (
	UserDataFile      = "user-data"
	MetaDataFile      = "meta-data"
	NetworkConfigFile = "network-config"
	VendorDataFile    = "vendor-data"
)

// Seed is the content of a NoCloud seed. UserData and MetaData are always written (empty
// when empty, as NoCloud wants the files to exist); the others only when non-nil.
type Seed struct {
	UserData      string
	MetaData      string
	NetworkConfig *string
	VendorData    *string
}

// Files returns the seed's files by name.
func (s Seed) Files() map[string][]byte {
	f := map[string][]byte{
		UserDataFile: []byte(s.UserData),
		MetaDataFile: []byte(s.MetaData),
	}
	if s.NetworkConfig != nil {
		f[NetworkConfigFile] = []byte(*s.NetworkConfig)
	}
	if s.VendorData != nil {
		f[VendorDataFile] = []byte(*s.VendorData)
	}
	return f
}

// BuildISO returns the seed as an ISO9660 image and the hex sha256 of its bytes. The
// image is a function of the content only (fixed timestamps), so the same seed always
// has the same hash.
func BuildISO(s Seed) ([]byte, string, error) {
	img, err := WriteISO(VolumeLabel, s.Files())
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(img)
	return img, hex.EncodeToString(sum[:]), nil
}

const sector = 2048

// epoch dates every record and the volume: a fixed time keeps images reproducible.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteISO lays out a single-directory ISO9660 image in memory: system area, primary
// volume descriptor, terminator, the root directory, the L and M path tables, then each
// file's extent. Names are ISO9660 level-1 identifiers with the ";1" version suffix
// ("user-data;1"), which Linux shows as "user-data".
//
// github.com/kdomanski/iso9660 v0.4.0's ImageWriter cannot do this in memory: NewWriter
// makes a staging directory with os.MkdirTemp, AddFile writes every file into it, and
// WriteTo reads them back from disk. Its exported on-disk structures (the primary volume
// descriptor body, directory records, their encoders) need no disk, so this writer uses
// those and does the (trivial, flat) layout itself.
func WriteISO(label string, files map[string][]byte) ([]byte, error) {
	if len(label) > 32 {
		return nil, fmt.Errorf("volume label %q is longer than 32 characters", label)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if n == "" || len(n) > 30 {
			return nil, fmt.Errorf("file name %q: must be 1 to 30 characters", n)
		}
		names = append(names, n)
	}
	sort.Strings(names) // ECMA-119 9.3: records ordered by identifier

	// Root directory records: ".", "..", then the files.
	records := make([]*iso9660.DirectoryEntry, 0, len(names))
	dirLen := 2 * 34 // "." and ".." are 34 bytes each
	for _, n := range names {
		rec := 33 + len(n) + 2 // identifier "name;1"
		rec += rec % 2
		if dirLen/sector != (dirLen+rec-1)/sector { // records never straddle sectors
			dirLen = (dirLen/sector + 1) * sector
		}
		dirLen += rec
	}
	dirSectors := (dirLen + sector - 1) / sector

	const (
		pvdSector  = 16
		termSector = 17
		rootSector = 18
	)
	lPathSector := rootSector + dirSectors
	mPathSector := lPathSector + 1
	next := mPathSector + 1
	extents := make(map[string]int, len(names))
	for _, n := range names {
		size := len(files[n])
		if size > math.MaxUint32 {
			return nil, fmt.Errorf("file %s is larger than 4 GiB", n)
		}
		extents[n] = next
		next += (size + sector - 1) / sector
	}
	total := next

	root := &iso9660.DirectoryEntry{
		ExtentLocation:       int32(rootSector),
		ExtentLength:         uint32(dirSectors * sector),
		RecordingDateTime:    iso9660.RecordingTimestamp(epoch),
		FileFlags:            0x02, // directory
		VolumeSequenceNumber: 1,
		Identifier:           "\x00",
		SystemUse:            []byte{},
	}
	for _, n := range names {
		records = append(records, &iso9660.DirectoryEntry{
			ExtentLocation:       int32(extents[n]),
			ExtentLength:         uint32(len(files[n])),
			RecordingDateTime:    iso9660.RecordingTimestamp(epoch),
			VolumeSequenceNumber: 1,
			Identifier:           n + ";1",
			SystemUse:            []byte{},
		})
	}

	img := make([]byte, total*sector)

	// Primary volume descriptor.
	pvd := iso9660.PrimaryVolumeDescriptorBody{
		SystemIdentifier:              "LINUX",
		VolumeIdentifier:              label,
		VolumeSpaceSize:               int32(total),
		VolumeSetSize:                 1,
		VolumeSequenceNumber:          1,
		LogicalBlockSize:              sector,
		PathTableSize:                 10,
		TypeLPathTableLoc:             int32(lPathSector),
		TypeMPathTableLoc:             int32(mPathSector),
		RootDirectoryEntry:            root,
		ApplicationIdentifier:         "terraform-provider-libvirt",
		FileStructureVersion:          1,
		VolumeCreationDateAndTime:     iso9660.VolumeDescriptorTimestampFromTime(epoch),
		VolumeModificationDateAndTime: iso9660.VolumeDescriptorTimestampFromTime(epoch),
		VolumeEffectiveDateAndTime:    iso9660.VolumeDescriptorTimestampFromTime(epoch),
	}
	b, err := pvd.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encode primary volume descriptor: %w", err)
	}
	copy(b[0:7], []byte{1, 'C', 'D', '0', '0', '1', 1})
	copy(img[pvdSector*sector:], b)
	copy(img[termSector*sector:], []byte{255, 'C', 'D', '0', '0', '1', 1})

	// Root directory.
	off := rootSector * sector
	dot, dotdot := *root, *root
	dotdot.Identifier = "\x01"
	for _, de := range append([]*iso9660.DirectoryEntry{&dot, &dotdot}, records...) {
		rec, err := de.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("encode directory record %q: %w", de.Identifier, err)
		}
		if (off%sector)+len(rec) > sector {
			off = (off/sector + 1) * sector
		}
		copy(img[off:], rec)
		off += len(rec)
	}

	// Path tables: one entry, the root (identifier length 1, id 0x00, parent 1).
	lpt := img[lPathSector*sector:]
	lpt[0] = 1
	binary.LittleEndian.PutUint32(lpt[2:6], uint32(rootSector))
	binary.LittleEndian.PutUint16(lpt[6:8], 1)
	mpt := img[mPathSector*sector:]
	mpt[0] = 1
	binary.BigEndian.PutUint32(mpt[2:6], uint32(rootSector))
	binary.BigEndian.PutUint16(mpt[6:8], 1)

	for _, n := range names {
		copy(img[extents[n]*sector:], files[n])
	}
	return img, nil
}
