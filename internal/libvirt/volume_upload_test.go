package libvirt

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func TestImageTailBoundsTheImage(t *testing.T) {
	var b imageBound
	b.tighten(4096, "the qcow2 bound")
	b.tighten(2048, "capacity_bytes = 2048: make capacity_bytes at least the image's size")
	b.tighten(3000, "the pool's free space")
	tail := &imageTail{r: b.bound(bytes.NewReader(make([]byte, 3000)), "x.raw.gz")}
	n, err := io.Copy(io.Discard, tail)
	if err == nil || !strings.Contains(err.Error(), "the image x.raw.gz is larger than capacity_bytes = 2048") || n != 2048 {
		t.Fatalf("copy: %d bytes, %v", n, err)
	}
	if tail.failure() == nil || tail.ended().IsZero() || tail.count() != 2048 {
		t.Fatal("the failure and the end are not recorded")
	}
	ok := &imageTail{r: b.bound(bytes.NewReader(make([]byte, 2048)), "x")}
	if _, err := io.Copy(io.Discard, ok); err != nil || ok.count() != 2048 || ok.failure() != nil || ok.ended().IsZero() {
		t.Fatalf("an image of exactly capacity_bytes: %v, %d bytes", err, ok.count())
	}
	// A pool with no free space at all: the first byte is too many.
	var full imageBound
	full.tighten(0, "the 0 bytes free in pool p")
	if _, err := io.Copy(io.Discard, full.bound(bytes.NewReader([]byte{1}), "x")); err == nil {
		t.Fatal("a full pool took a byte")
	}
	var none imageBound
	if n, err := io.Copy(io.Discard, none.bound(bytes.NewReader(make([]byte, 5000)), "x")); n != 5000 || err != nil {
		t.Fatalf("no bound: %d, %v", n, err)
	}
}

func TestVolumeXMLPermissions(t *testing.T) {
	perms := &VolumePermissions{Owner: "107", Group: "108", Mode: "0640", Label: "system_u:object_r:virt_image_t:s0"}
	doc, err := volumeXML(VolumeSpec{Name: "v", Format: "qcow2", Perms: perms}, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	var back libvirtxml.StorageVolume
	if err := back.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	if got := permissionsInfo(back.Target); got == nil || *got != *perms {
		t.Fatalf("volume XML without the permissions: %s", doc)
	}
	for _, p := range []*VolumePermissions{nil, {}} {
		if doc, _ := volumeXML(VolumeSpec{Name: "v", Format: "raw", Perms: p}, 1, nil); strings.Contains(doc, "permissions") {
			t.Fatalf("unset permissions in the XML: %s", doc)
		}
	}
	// What a directory pool reports for a volume made without them (libvirt 9.0).
	var x libvirtxml.StorageVolume
	if err := x.Unmarshal(`<volume type='file'><name>v</name><target><path>/p/v</path><format type='raw'/>
<permissions><mode>0600</mode><owner>0</owner><group>0</group></permissions></target></volume>`); err != nil {
		t.Fatal(err)
	}
	if got := permissionsInfo(x.Target); *got != (VolumePermissions{Owner: "0", Group: "0", Mode: "0600"}) {
		t.Fatalf("read back %+v", got)
	}
	if permissionsInfo(&libvirtxml.StorageVolumeTarget{}) != nil {
		t.Fatal("no permissions element read as some")
	}
}
