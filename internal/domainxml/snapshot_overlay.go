package domainxml

import (
	"strings"

	"libvirt.org/go/libvirtxml"
)

// A quiesced libvirt_snapshot of a running domain is external: libvirt puts a new qcow2
// overlay on top of each writable disk and the guest writes into it from then on, the
// image below staying as it was at the snapshot. Until the snapshot is deleted (a block
// commit back), the domain's XML names the overlay as the disk's source. The provider
// names every overlay it makes <image path>.tfsnap-<snapshot name>, so reading the domain
// back maps such a source to the image it sits on — the disk the configuration names —
// from the XML alone (no snapshot listing per refresh).

// SnapshotOverlayMarker is in the file name of every overlay the provider makes.
const SnapshotOverlayMarker = ".tfsnap-"

// SnapshotOverlayPath is the overlay a snapshot named snapshot puts on the disk image at
// path: in the same directory (so in the same storage pool), with the marker.
func SnapshotOverlayPath(path, snapshot string) string {
	return path + SnapshotOverlayMarker + snapshot
}

// IsSnapshotOverlay reports whether path is an overlay made by a provider snapshot.
func IsSnapshotOverlay(path string) bool {
	i := strings.LastIndex(path, "/")
	return strings.Contains(path[i+1:], SnapshotOverlayMarker)
}

// SnapshotOverlayBase is the image path an overlay's name was made from (path itself
// when it is no overlay): the file name up to the first marker.
func SnapshotOverlayBase(path string) string {
	i := strings.LastIndex(path, "/")
	name, _, _ := strings.Cut(path[i+1:], SnapshotOverlayMarker)
	return path[:i+1] + name
}

// snapshotBase is the image under the provider's snapshot overlays of disk x: its path
// and format, walking the backing chain while the file name carries the marker. ok is
// false for a disk that is not on such an overlay. When libvirt's XML has no backing
// chain (an older definition), the path is the overlay's name without the marker and the
// format is unknown ("").
func snapshotBase(x *libvirtxml.DomainDisk) (path, format string, ok bool) {
	path = diskSourcePath(x)
	if x.Source == nil || x.Source.File == nil || !IsSnapshotOverlay(path) {
		return "", "", false
	}
	bs := x.BackingStore
	for IsSnapshotOverlay(path) {
		if bs == nil || bs.Source == nil || bs.Source.File == nil || bs.Source.File.File == "" {
			return SnapshotOverlayBase(path), "", true
		}
		path, format = bs.Source.File.File, ""
		if bs.Format != nil {
			format = bs.Format.Type
		}
		bs = bs.BackingStore
	}
	return path, format, true
}

// keepSnapshotOverlay reports whether the existing disk x must keep its source when it
// is rewritten as a disk on path: it sits on a provider snapshot's overlay over path.
// Pointing it back at path would drop the guest's writes since the snapshot and leave
// the snapshot's overlay orphaned; deleting the snapshot is what brings it back.
func keepSnapshotOverlay(x *libvirtxml.DomainDisk, path string) bool {
	base, _, ok := snapshotBase(x)
	return ok && base == path
}
