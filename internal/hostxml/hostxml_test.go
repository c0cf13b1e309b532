package hostxml

import (
	"reflect"
	"strings"
	"testing"
)

func TestPoolXML(t *testing.T) {
	cases := []struct {
		p    Pool
		want string
	}{
		{Pool{Name: "images", Type: PoolDir, TargetPath: "/srv/images"},
			`<pool type="dir"><name>images</name><target><path>/srv/images</path></target></pool>`},
		{Pool{Name: "vg", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb", "/dev/sdc"}}},
			`<pool type="logical"><name>vg</name><target><path>/dev/vg</path></target><source><name>vg</name><device path="/dev/sdb"></device><device path="/dev/sdc"></device><format type="lvm2"></format></source></pool>`},
		{Pool{Name: "lv", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb"}, Name: "vmdata"}},
			`<pool type="logical"><name>lv</name><target><path>/dev/vmdata</path></target><source><name>vmdata</name><device path="/dev/sdb"></device><format type="lvm2"></format></source></pool>`},
		{Pool{Name: "nas", Type: PoolNetfs, TargetPath: "/mnt/nas", Source: &PoolSource{Host: "nas.lan", Dir: "/exports/vms"}},
			`<pool type="netfs"><name>nas</name><target><path>/mnt/nas</path></target><source><dir path="/exports/vms"></dir><host name="nas.lan"></host><format type="auto"></format></source></pool>`},
		{Pool{Name: "nas4", Type: PoolNetfs, TargetPath: "/mnt/nas", Source: &PoolSource{Host: "10.0.0.9", Dir: "/vms", Format: "nfs"}},
			`<pool type="netfs"><name>nas4</name><target><path>/mnt/nas</path></target><source><dir path="/vms"></dir><host name="10.0.0.9"></host><format type="nfs"></format></source></pool>`},
	}
	for _, c := range cases {
		if errs := c.p.Validate(); len(errs) > 0 {
			t.Errorf("%s: Validate: %v", c.p.Name, errs)
		}
		d := c.p.WithDefaults()
		x := d.ToXML()
		if got := mustXML(t, x); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.p.Name, got, c.want)
		}
		if back := PoolFromXML(x); !reflect.DeepEqual(*back, d) {
			t.Errorf("%s: PoolFromXML = %+v %+v, want %+v %+v", c.p.Name, back, back.Source, d, d.Source)
		}
	}
	// WithDefaults does not change its receiver's source.
	p := Pool{Name: "vg", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb"}}}
	_ = p.WithDefaults()
	if p.Source.Name != "" || p.TargetPath != "" {
		t.Errorf("WithDefaults changed the spec it was called on: %+v %+v", p, p.Source)
	}
}

func TestPoolValidate(t *testing.T) {
	cases := []struct {
		p    Pool
		attr string
		want string
	}{
		{Pool{Name: "d", Type: PoolDir}, "target_path", "needs target_path"},
		{Pool{Name: "d", Type: PoolDir, TargetPath: "/srv/d/"}, "target_path", "clean absolute path"},
		{Pool{Name: "d", Type: PoolDir, TargetPath: "/srv/d", Source: &PoolSource{Host: "x"}}, "source", "has no source"},
		{Pool{Name: "l", Type: PoolLogical}, "source", "needs source.devices"},
		{Pool{Name: "l", Type: PoolLogical, Source: &PoolSource{Devices: []string{"sdb"}}}, "source", "clean absolute path"},
		{Pool{Name: "l", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb"}, Host: "h"}}, "source", "for netfs pools"},
		{Pool{Name: "l", Type: PoolLogical, TargetPath: "/dev/other", Source: &PoolSource{Devices: []string{"/dev/sdb"}}}, "target_path", `"/dev/l" here`},
		{Pool{Name: "n", Type: PoolNetfs, Source: &PoolSource{Host: "h", Dir: "/x"}}, "target_path", "needs target_path"},
		{Pool{Name: "n", Type: PoolNetfs, TargetPath: "/mnt/n", Source: &PoolSource{Dir: "/x"}}, "source", "needs source.host"},
		{Pool{Name: "n", Type: PoolNetfs, TargetPath: "/mnt/n", Source: &PoolSource{Host: "h", Dir: "/x", Devices: []string{"/dev/sdb"}}}, "source", "for logical pools"},
		{Pool{Name: "z", Type: "sheepdog"}, "type", "not one of dir, logical, netfs, rbd"},
	}
	for i, c := range cases {
		found := false
		errs := c.p.Validate()
		for _, e := range errs {
			if e.Attr == c.attr && strings.Contains(e.Detail, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("case %d: errors %v, want one on %s containing %q", i, errs, c.attr, c.want)
		}
	}
}
