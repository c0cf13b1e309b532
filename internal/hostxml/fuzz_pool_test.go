package hostxml

import (
	"reflect"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// FuzzPoolFromXML: whatever a pool's definition holds (libvirt, or anyone who defined
// it), reading it never panics, and a pool read back that validates writes XML that
// reads back the same (the refresh of a libvirt_pool plans clean).
func FuzzPoolFromXML(f *testing.F) {
	f.Add(`<pool type='dir'><name>images</name><target><path>/srv/images</path></target></pool>`)
	f.Add(`<pool type='logical'><name>vg</name><source><device path='/dev/sdb'/><device path='/dev/sdc'/><name>vmdata</name><format type='lvm2'/></source><target><path>/dev/vmdata</path></target></pool>`)
	f.Add(`<pool type='netfs'><name>nas</name><source><host name='nas.lan'/><dir path='/exports/vms'/><format type='nfs'/></source><target><path>/mnt/nas</path></target></pool>`)
	f.Add(`<pool type='dir'><name>d</name><source><host name='x'/></source></pool>`)
	f.Add(`<pool type='rbd'><name>r</name><source><host name='a'/><host name='b'/><name>p</name></source></pool>`)
	f.Add(`<pool type='iscsi'><name>i</name><source><host name='2001:db8::1' port='3260'/><device path='iqn.2024-01.e:t'/><initiator><iqn name='iqn.2024-01.e:i'/></initiator><auth type='chap' username='u'><secret uuid='2a5b2d3e-5c2b-4c4a-9a1d-0e4b4a4f1a11'/></auth></source><target><path>/dev/disk/by-path</path></target></pool>`)
	f.Add(`<pool type='scsi'><name>s</name><source><adapter type='scsi_host' name='host0'/></source><target><path>/dev/disk/by-path</path></target></pool>`)
	f.Add(`<pool type='zfs'><name>z</name><source><name>tank/vm</name><device path='/dev/sdb'/></source><target><path>/dev/zvol/tank/vm</path></target></pool>`)
	f.Fuzz(func(t *testing.T, doc string) {
		var x libvirtxml.StoragePool
		if x.Unmarshal(doc) != nil {
			return
		}
		p := PoolFromXML(&x)
		if p == nil {
			t.Fatal("PoolFromXML returned nil")
		}
		if len(p.Validate()) > 0 {
			return
		}
		out, err := p.ToXML().Marshal()
		if err != nil {
			t.Fatalf("valid pool %+v does not marshal: %v", p, err)
		}
		var y libvirtxml.StoragePool
		if err := y.Unmarshal(out); err != nil {
			t.Fatalf("pool XML %s does not parse: %v", out, err)
		}
		if back := PoolFromXML(&y); !reflect.DeepEqual(back, p) {
			t.Fatalf("pool %+v (source %+v) wrote %s, which reads back as %+v (source %+v)", p, p.Source, out, back, back.Source)
		}
	})
}
