package libvirt

import (
	"testing"

	"libvirt.org/go/libvirtxml"
)

// The XML of every volume the provider makes names its format, and an overlay's
// <backingStore> names its backing file's: libvirt (and qemu-img under it) never probe.
func TestVolumeXML_formatsExplicit(t *testing.T) {
	for _, tc := range []struct {
		name           string
		spec           VolumeSpec
		backing        *VolumeInfo
		format, bkgFmt string
	}{
		{"raw", VolumeSpec{Name: "a.raw", Format: "raw"}, nil, "raw", ""},
		{"iso", VolumeSpec{Name: "a.iso", Format: "iso"}, nil, "iso", ""},
		{"qcow2", VolumeSpec{Name: "a.qcow2", Format: "qcow2"}, nil, "qcow2", ""},
		{"overlay on raw", VolumeSpec{Name: "o.qcow2", Format: "qcow2"}, &VolumeInfo{Path: "/pool/base.raw", Format: "raw"}, "qcow2", "raw"},
		{"overlay on qcow2", VolumeSpec{Name: "o.qcow2", Format: "qcow2"}, &VolumeInfo{Path: "/pool/base.qcow2", Format: "qcow2"}, "qcow2", "qcow2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := volumeXML(tc.spec, 1<<20, tc.backing)
			if err != nil {
				t.Fatal(err)
			}
			var x libvirtxml.StorageVolume
			if err := x.Unmarshal(doc); err != nil {
				t.Fatal(err)
			}
			if x.Target == nil || x.Target.Format == nil || x.Target.Format.Type != tc.format {
				t.Fatalf("target format of %s, want %q", doc, tc.format)
			}
			if tc.backing == nil {
				if x.BackingStore != nil {
					t.Fatalf("a standalone volume got a backing store: %s", doc)
				}
				return
			}
			if x.BackingStore == nil || x.BackingStore.Format == nil || x.BackingStore.Format.Type != tc.bkgFmt ||
				x.BackingStore.Path != tc.backing.Path {
				t.Fatalf("backing store of %s, want %s as %q", doc, tc.backing.Path, tc.bkgFmt)
			}
		})
	}
}

func TestFormatDisagrees(t *testing.T) {
	for _, tc := range []struct {
		stored, reported string
		want             bool
	}{
		{"raw", "qcow2", true}, // a guest wrote a qcow2 header on a raw disk
		{"iso", "qcow2", true},
		{"qcow2", "raw", true},
		{"raw", "raw", false},
		{"raw", "iso", false}, // a directory pool calls a raw CD image iso, and back
		{"iso", "raw", false},
		{"qcow2", "qcow2", false},
		{"raw", "", false}, // libvirt names none: no opinion
		{"", "qcow2", false},
	} {
		if got := FormatDisagrees(tc.stored, tc.reported); got != tc.want {
			t.Errorf("FormatDisagrees(%q, %q) = %v, want %v", tc.stored, tc.reported, got, tc.want)
		}
	}
}

// A raw volume's size is its file's length, never the virtual size of a header in it.
func TestRawCapacity(t *testing.T) {
	if got := RawCapacity(&VolumeInfo{Capacity: 1 << 40, Physical: 1 << 20}); got != 1<<20 {
		t.Errorf("RawCapacity = %d, want the file's length %d", got, 1<<20)
	}
	if got := RawCapacity(&VolumeInfo{Capacity: 1 << 20}); got != 1<<20 {
		t.Errorf("RawCapacity without a physical size = %d, want the capacity", got)
	}
}

func TestFormatDoubt_namesTheVolume(t *testing.T) {
	d := &FormatDoubt{Volume: "default/guest.raw", Reported: "qcow2", Reason: "its header names backing file /etc/shadow, which is no volume of a running storage pool"}
	want := "libvirt reads volume default/guest.raw as qcow2, but its header names backing file /etc/shadow, which is no volume of a running storage pool: " +
		"the provider treats it as raw (a guest may have written a qcow2 header on a raw disk)"
	if d.Error() != want {
		t.Errorf("got  %s\nwant %s", d.Error(), want)
	}
}
