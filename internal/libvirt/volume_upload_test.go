package libvirt

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func TestImageTailBoundsTheImage(t *testing.T) {
	tail := &imageTail{r: bytes.NewReader(make([]byte, 3000)), limit: 2048, name: "x.raw.gz"}
	_, err := io.Copy(io.Discard, tail)
	if err == nil || !strings.Contains(err.Error(), "the image x.raw.gz is larger than capacity_bytes = 2048") {
		t.Fatalf("copy: %v", err)
	}
	if tail.failure() == nil || tail.ended().IsZero() {
		t.Fatal("the failure and the end are not recorded")
	}
	ok := &imageTail{r: bytes.NewReader(make([]byte, 2048)), limit: 2048}
	if _, err := io.Copy(io.Discard, ok); err != nil || ok.count() != 2048 || ok.failure() != nil || ok.ended().IsZero() {
		t.Fatalf("an image of exactly capacity_bytes: %v, %d bytes", err, ok.count())
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
