package libvirt

import (
	"reflect"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

func TestSnapshotXML(t *testing.T) {
	for _, tc := range []struct {
		spec      SnapshotSpec
		want, not []string
	}{
		{SnapshotSpec{Name: "a", Description: "x <y>", Memory: true}, []string{"<name>a</name>", "<description>x &lt;y&gt;</description>", `<memory snapshot="internal">`}, []string{"<disks"}},
		{SnapshotSpec{Name: "b"}, []string{"<name>b</name>"}, []string{"<memory", "<description", "<disks", "external"}},
	} {
		got, err := tc.spec.SnapshotXML()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: XML %s lacks %s", tc.spec, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%+v: XML %s has %s", tc.spec, got, n)
			}
		}
	}
}

func TestSnapshotFromXML(t *testing.T) {
	d := Domain{Name: "web", UUID: golibvirt.UUID{0x6b, 0x1c, 0x3a, 0x5e, 0x0d, 0x4f, 0x4c, 0x2a, 0x9e, 0x1b, 1, 2, 3, 4, 5, 6}}
	s, err := snapshotFromXML(d, `<domainsnapshot><name>s1</name><description>d</description><state>running</state>
<creationTime>1764504000</creationTime><memory snapshot='internal'/><disks><disk name='vda' snapshot='internal'/></disks>
<domain type='qemu'><name>web</name></domain></domainsnapshot>`)
	if err != nil {
		t.Fatal(err)
	}
	want := Snapshot{DomainUUID: "6b1c3a5e-0d4f-4c2a-9e1b-010203040506", DomainName: "web", Name: "s1", Description: "d",
		CreationTime: time.Unix(1764504000, 0).UTC(), State: "running", Memory: true}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("got %+v, want %+v", *s, want)
	}
	if s.CreationTime.Format(time.RFC3339) != "2025-11-30T12:00:00Z" {
		t.Errorf("creation time %s", s.CreationTime.Format(time.RFC3339))
	}
	s, err = snapshotFromXML(d, `<domainsnapshot><name>s2</name><state>shutoff</state><creationTime>1</creationTime><memory snapshot='no'/></domainsnapshot>`)
	if err != nil || s.Memory || s.State != "shutoff" {
		t.Errorf("disk-only: %+v, %v", s, err)
	}
	if _, err := snapshotFromXML(d, `<domainsnapshot><name>s3</name><creationTime>soon</creationTime></domainsnapshot>`); err == nil {
		t.Error("a bad creationTime parsed")
	}
}
