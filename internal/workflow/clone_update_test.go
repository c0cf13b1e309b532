package workflow

import (
	"context"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// cloneOnHost makes a clone with Clone and returns its id.
func cloneOnHost(t *testing.T, f *fake) string {
	t.Helper()
	withSource(f, false, false)
	res, err := Clone(context.Background(), f, cloneReq())
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// TestDeleteClone: the clone's domain and its own disks go; a disk its record names that
// is not named as the clone's (a source's) is never deleted.
func TestDeleteClone(t *testing.T) {
	f := newFake()
	id := cloneOnHost(t, f)
	var d libvirtxml.Domain
	if err := d.Unmarshal(f.definedXML[id]); err != nil {
		t.Fatal(err)
	}
	meta, _ := domainxml.ParseCloneMeta(&d)
	meta.Disks = append(meta.Disks, domainxml.CloneMetaDisk{Target: "vdz", Key: "/pool/web.qcow2", Name: "web.qcow2", Pool: "default"})
	if err := domainxml.SetMetadata(&d, domainxml.CloneMetadataNS, "clone", meta); err != nil {
		t.Fatal(err)
	}
	text, _ := d.Marshal()
	f.status = &libvirt.DomainStatus{Domain: libvirt.Domain{Name: "web2"}, XML: text}
	f.volumes["/pool/web.qcow2"] = &libvirt.VolumeInfo{Key: "/pool/web.qcow2", Name: "web.qcow2"}
	if err := DeleteClone(context.Background(), f, id, "web2", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(f.defined) != 0 {
		t.Errorf("domain left: %v", f.defined)
	}
	if got := strings.Join(keys(f.volumes), " "); got != "/pool/web.qcow2" {
		t.Errorf("volumes left: %s; want only the source's", got)
	}
}

// TestDeleteCloneGoneDomain: with the domain already gone, the disks the state remembers
// are deleted; one already gone is fine.
func TestDeleteCloneGoneDomain(t *testing.T) {
	f := newFake()
	f.volumes["/pool/web2-vda.qcow2"] = &libvirt.VolumeInfo{Key: "/pool/web2-vda.qcow2"}
	known := []domainxml.CloneMetaDisk{{Key: "/pool/web2-vda.qcow2", Name: "web2-vda.qcow2"}, {Key: "/pool/web2-vdb.qcow2", Name: "web2-vdb.qcow2"}}
	if err := DeleteClone(context.Background(), f, "uuid-gone", "web2", known, nil); err != nil {
		t.Fatal(err)
	}
	if len(f.volumes) != 0 {
		t.Errorf("volumes left: %v", keys(f.volumes))
	}
}

// TestUpdateClone: memory down within the ceilings is live on a running clone (no
// restart, no redefine); the ceilings stay.
func TestUpdateClone(t *testing.T) {
	f := newFake()
	f.status = running(true)
	if err := UpdateClone(context.Background(), f, "u", "web", 0, 128, true); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.called(), " "); got != "GetDomainStatus GetDomainStatus SetDomainSizing" {
		t.Errorf("calls %s", got)
	}
	f = newFake()
	f.status = running(false)
	if err := UpdateClone(context.Background(), f, "u", "web", 2, 0, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.status.XML, `<vcpu placement="static">2</vcpu>`) || !strings.Contains(f.status.XML, `<memory unit="KiB">524288</memory>`) {
		t.Errorf("stopped clone redefined as\n%s", f.status.XML)
	}
}

// TestUpdateCloneExactKiB: a clone whose memory is no whole number of MiB (its source's)
// keeps it when memory_mib (its KiB rounded down) is unchanged, and gets whole MiB when
// it changes.
func TestUpdateCloneExactKiB(t *testing.T) {
	f := newFake()
	f.status = running(false)
	f.status.XML = strings.Replace(baseXML, `<currentMemory unit="KiB">262144</currentMemory>`, `<currentMemory unit="KiB">262145</currentMemory>`, 1)
	if err := UpdateClone(context.Background(), f, "u", "web", 2, 256, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.status.XML, `<currentMemory unit="KiB">262145</currentMemory>`) {
		t.Errorf("memory_mib unchanged, the KiB changed:\n%s", f.status.XML)
	}
	if err := UpdateClone(context.Background(), f, "u", "web", 2, 300, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.status.XML, `<currentMemory unit="KiB">307200</currentMemory>`) {
		t.Errorf("memory_mib = 300:\n%s", f.status.XML)
	}
}
