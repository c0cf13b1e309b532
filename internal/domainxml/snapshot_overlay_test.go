package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// overlaid is the disks of a running domain as libvirt 9.0 reports them after a quiesced
// (external) snapshot "s1": vda on its overlay over a raw volume (itself on a cached
// image, not the provider's), vdb on two overlays (snapshots s1 then s2), the seed cdrom
// untouched (snapshot='no').
const overlaid = `<domain type='qemu'><name>web</name><memory unit='KiB'>131072</memory><vcpu>1</vcpu>
<os><type arch='x86_64'>hvm</type></os><devices>
<disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
  <source file='/pool/web.raw.tfsnap-s1' index='3'/>
  <backingStore type='file' index='1'><format type='raw'/><source file='/pool/web.raw'/><backingStore/></backingStore>
  <target dev='vda' bus='virtio'/></disk>
<disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
  <source file='/pool/data.qcow2.tfsnap-s1.tfsnap-s2'/>
  <backingStore type='file'><format type='qcow2'/><source file='/pool/data.qcow2.tfsnap-s1'/>
    <backingStore type='file'><format type='qcow2'/><source file='/pool/data.qcow2'/>
      <backingStore type='file'><format type='qcow2'/><source file='/cache/tfsnap-base.qcow2'/></backingStore>
    </backingStore></backingStore>
  <target dev='vdb' bus='virtio'/></disk>
<disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
  <source file='/pool/old.qcow2.tfsnap-s1'/><target dev='vdc' bus='virtio'/></disk>
<disk type='file' device='cdrom'><driver name='qemu' type='raw'/><source file='/pool/seed.iso'/>
  <target dev='sda' bus='sata'/><readonly/></disk>
</devices></domain>`

func TestSnapshotOverlay_parseMapsToBase(t *testing.T) {
	p, err := Parse(overlaid)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{ // target: path, format
		"vda": {"/pool/web.raw", "raw"},
		"vdb": {"/pool/data.qcow2", "qcow2"}, // stops at the first image without the marker
		"vdc": {"/pool/old.qcow2", ""},       // no backing chain in the XML: by name, format unknown
		"sda": {"/pool/seed.iso", "raw"},
	}
	for _, d := range p.Spec.Disks {
		w, ok := want[d.Target]
		if !ok {
			t.Errorf("unexpected disk %s", d.Target)
			continue
		}
		if d.Path != w[0] || d.Format != w[1] {
			t.Errorf("disk %s: path %q format %q, want %q %q", d.Target, d.Path, d.Format, w[0], w[1])
		}
	}
}

// The configuration (disks on the base images) and the domain on its overlays are the
// same disks: no drift while the snapshot exists.
func TestSnapshotOverlay_noDrift(t *testing.T) {
	p, err := Parse(overlaid)
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Spec
	cfg.Disks = nil
	for _, d := range p.Spec.Disks {
		d.Format = map[string]string{"vda": "raw", "vdb": "qcow2", "vdc": "qcow2", "sda": "raw"}[d.Target]
		cfg.Disks = append(cfg.Disks, d)
	}
	if !sameDisks(cfg, p.Spec) {
		t.Errorf("a domain on snapshot overlays drifts from its configuration:\n%+v\n%+v", cfg.Disks, p.Spec.Disks)
	}
}

// Rewriting the domain (any update) keeps each disk on its overlay: pointing it back at
// the base would lose the guest's writes since the snapshot.
func TestSnapshotOverlay_rewriteKeepsOverlay(t *testing.T) {
	var base libvirtxml.Domain
	if err := base.Unmarshal(overlaid); err != nil {
		t.Fatal(err)
	}
	p, err := Parse(overlaid)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Spec
	s.MemoryKiB, s.MaxMemoryKiB, s.VCPU, s.MaxVCPU = 256*KiBPerMiB, 256*KiBPerMiB, 1, 1
	s.Disks[2].Path, s.Disks[2].Format = "/pool/other.qcow2", "qcow2" // vdc now on another image: the overlay goes
	d, text := build(t, &base, s)
	got := map[string]string{}
	for _, x := range d.Devices.Disks {
		got[x.Target.Dev] = diskSourcePath(&x) + " " + x.Driver.Type
	}
	for target, w := range map[string]string{
		"vda": "/pool/web.raw.tfsnap-s1 qcow2",
		"vdb": "/pool/data.qcow2.tfsnap-s1.tfsnap-s2 qcow2",
		"vdc": "/pool/other.qcow2 qcow2",
		"sda": "/pool/seed.iso raw",
	} {
		if got[target] != w {
			t.Errorf("disk %s rewritten as %q, want %q\n%s", target, got[target], w, text)
		}
	}
	if strings.Contains(text, "<backingStore") {
		t.Errorf("the rewrite keeps a backing chain (libvirt reads it from the image):\n%s", text)
	}
}

func TestSnapshotOverlay_names(t *testing.T) {
	if p := SnapshotOverlayPath("/pool/web.qcow2", "before"); p != "/pool/web.qcow2.tfsnap-before" || !IsSnapshotOverlay(p) {
		t.Errorf("overlay path %q", p)
	}
	for _, p := range []string{"/pool/web.qcow2", "/x.tfsnap-dir/web.qcow2", "/pool/tfsnap-web.qcow2"} {
		if IsSnapshotOverlay(p) {
			t.Errorf("%s taken for an overlay", p)
		}
	}
}
