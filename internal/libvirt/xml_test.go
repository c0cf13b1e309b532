package libvirt

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// The XML this package writes is built with libvirtxml, so names and paths with quotes,
// ampersands and angle brackets reach libvirt as they are (there used to be a hand escaper).
func TestXMLEscapes(t *testing.T) {
	const odd = `/srv/it's <a> & "b"/x`
	doc, err := copyDestXML(odd+".qcow2", "qcow2")
	if err != nil {
		t.Fatal(err)
	}
	var disk libvirtxml.DomainDisk
	if err := disk.Unmarshal(doc); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if disk.Source.File.File != odd+".qcow2" || disk.Driver.Type != "qcow2" || !strings.Contains(doc, `type="file"`) {
		t.Errorf("block copy destination %s", doc)
	}

	doc, err = dirPoolXML("kvmforge-nvram-1", odd)
	if err != nil {
		t.Fatal(err)
	}
	var pool libvirtxml.StoragePool
	if err := pool.Unmarshal(doc); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if pool.Type != "dir" || pool.Name != "kvmforge-nvram-1" || pool.Target.Path != odd {
		t.Errorf("transient pool %s", doc)
	}

	doc, err = rawVolumeXML(`web's & <nvram>.fd`, 540672)
	if err != nil {
		t.Fatal(err)
	}
	var vol libvirtxml.StorageVolume
	if err := vol.Unmarshal(doc); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if vol.Name != `web's & <nvram>.fd` || vol.Capacity.Unit != "bytes" || vol.Capacity.Value != 540672 ||
		vol.Target.Format.Type != "raw" || vol.Allocation != nil {
		t.Errorf("nvram copy %s", doc)
	}
}
