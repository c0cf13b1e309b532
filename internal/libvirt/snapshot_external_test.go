package libvirt

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// A quiesced snapshot covers every writable file disk with an overlay next to it and
// leaves read-only ones (the seed cdrom) out; a writable disk it cannot cover is refused.
func TestExternalSnapshotXML(t *testing.T) {
	live := `<domain type='qemu'><name>web</name><devices>
<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='/pool/web.qcow2'/><target dev='vda' bus='virtio'/></disk>
<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='/pool/ro.raw'/><target dev='vdb' bus='virtio'/><readonly/></disk>
<disk type='file' device='cdrom'><driver name='qemu' type='raw'/><source file='/pool/seed.iso'/><target dev='sda' bus='sata'/><readonly/></disk>
</devices></domain>`
	doc, overlays, err := externalSnapshotXML(SnapshotSpec{Name: "s1", Quiesce: true}, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(overlays) != 1 || overlays[0] != "/pool/web.qcow2.tfsnap-s1" {
		t.Errorf("overlays %v", overlays)
	}
	var x libvirtxml.DomainSnapshot
	if err := x.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	if x.Memory == nil || x.Memory.Snapshot != "no" || len(x.Disks.Disks) != 3 {
		t.Fatalf("snapshot XML %s", doc)
	}
	for _, d := range x.Disks.Disks {
		want := map[string]string{"vda": "external", "vdb": "no", "sda": "no"}[d.Name]
		if d.Snapshot != want {
			t.Errorf("disk %s: snapshot=%q, want %q", d.Name, d.Snapshot, want)
		}
	}
	if got := snapshotOverlays(&x); len(got) != 1 || got[0] != overlays[0] {
		t.Errorf("read back overlays %v", got)
	}

	block := strings.Replace(live, `<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='/pool/web.qcow2'/>`,
		`<disk type='block' device='disk'><driver name='qemu' type='raw'/><source dev='/dev/vg/web'/>`, 1)
	if _, _, err := externalSnapshotXML(SnapshotSpec{Name: "s1"}, block); err == nil || !strings.Contains(err.Error(), "disk vda of domain web is not a file image") {
		t.Errorf("a writable block disk: %v", err)
	}
}
