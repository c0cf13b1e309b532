package libvirt

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

func TestParseVolumeRef(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want VolumeRef
	}{
		// Paths: dir, fs, netfs and logical pools.
		{"/var/lib/libvirt/images/a.qcow2", VolumeRef{Key: "/var/lib/libvirt/images/a.qcow2"}},
		{"/dev/vg0/lv0", VolumeRef{Key: "/dev/vg0/lv0"}},
		// <pool>/<name>: a key first, that pool and name when no volume has the key.
		{"default/a.qcow2", VolumeRef{Key: "default/a.qcow2", Pool: "default", Name: "a.qcow2"}},
		// rbd keys look like <pool>/<name>: tried as a key first, so they resolve.
		{"rbd-pool/image-1", VolumeRef{Key: "rbd-pool/image-1", Pool: "rbd-pool", Name: "image-1"}},
		// Keys without a slash: an LVM UUID, an iSCSI LUN id.
		{"Hd4Bq2-7cTv-Q2e4-Ls1x-9kO3-aWw1-ZpY7m3", VolumeRef{Key: "Hd4Bq2-7cTv-Q2e4-Ls1x-9kO3-aWw1-ZpY7m3"}},
		{"ip-192.0.2.1:3260-iscsi-iqn.2024-01.example:t-lun-1", VolumeRef{Key: "ip-192.0.2.1:3260-iscsi-iqn.2024-01.example:t-lun-1"}},
		// Other shapes are keys only.
		{"a/b/c", VolumeRef{Key: "a/b/c"}},
		{"pool/", VolumeRef{Key: "pool/"}},
		{"/name", VolumeRef{Key: "/name"}},
	} {
		got, err := ParseVolumeRef(tt.id)
		if err != nil || got != tt.want {
			t.Errorf("ParseVolumeRef(%q) = %+v, %v; want %+v", tt.id, got, err, tt.want)
			continue
		}
		if got.String() != tt.id {
			t.Errorf("ParseVolumeRef(%q).String() = %q", tt.id, got.String())
		}
	}
	for _, id := range []string{"", "a\nb", "pool/na\x00me", "\x7f"} {
		if ref, err := ParseVolumeRef(id); err == nil {
			t.Errorf("ParseVolumeRef(%q) = %+v, want an error", id, ref)
		}
	}
}

func FuzzParseVolumeRef(f *testing.F) {
	for _, s := range []string{"/var/lib/libvirt/images/a.qcow2", "default/a.qcow2", "rbd/img", "Hd4Bq2-7cTv-Q2e4",
		"a/b/c", "/", "//", "a/", "/a", "", "a\nb", "pool/name/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ref, err := ParseVolumeRef(id)
		if err != nil {
			return
		}
		if ref.Key != id || ref.String() != id {
			t.Fatalf("ParseVolumeRef(%q) = %+v, String %q: the key is the id itself", id, ref, ref.String())
		}
		if again, err := ParseVolumeRef(ref.String()); err != nil || again != ref {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", id, again, err, ref)
		}
		if (ref.Pool == "") != (ref.Name == "") || strings.Contains(ref.Name, "/") || strings.Contains(ref.Pool, "/") {
			t.Fatalf("ParseVolumeRef(%q) = %+v: a pool goes with a name, neither with a slash", id, ref)
		}
	})
}

// fakeVolumes answers LookupVolume's calls as libvirt does: keys are found in running
// pools only; by name, a stopped pool is "not active".
type fakeVolumes struct {
	pools    map[string]*fakePool
	calls    []string
	poolFail error // every pool call fails so (a broken connection), when set
}

type fakePool struct {
	active bool
	target string
	vols   map[string]string // name -> key
}

func noSuch(code golibvirt.ErrorNumber, what string) error {
	return golibvirt.Error{Code: uint32(code), Message: what}
}

func (f *fakeVolumes) StorageVolLookupByKey(key string) (golibvirt.StorageVol, error) {
	f.calls = append(f.calls, "key "+key)
	names := make([]string, 0, len(f.pools))
	for name := range f.pools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, pn := range names {
		p := f.pools[pn]
		for name, k := range p.vols {
			if k == key && p.active {
				return golibvirt.StorageVol{Pool: pn, Name: name, Key: k}, nil
			}
		}
	}
	return golibvirt.StorageVol{}, noSuch(golibvirt.ErrNoStorageVol, "Storage volume not found: no storage vol with matching key "+key)
}

func (f *fakeVolumes) StorageVolLookupByName(pool golibvirt.StoragePool, name string) (golibvirt.StorageVol, error) {
	f.calls = append(f.calls, "name "+pool.Name+"/"+name)
	p := f.pools[pool.Name]
	if !p.active {
		return golibvirt.StorageVol{}, noSuch(golibvirt.ErrOperationInvalid, "storage pool '"+pool.Name+"' is not active")
	}
	if k, ok := p.vols[name]; ok {
		return golibvirt.StorageVol{Pool: pool.Name, Name: name, Key: k}, nil
	}
	return golibvirt.StorageVol{}, noSuch(golibvirt.ErrNoStorageVol, "no storage vol with matching name "+name)
}

func (f *fakeVolumes) StoragePoolLookupByName(name string) (golibvirt.StoragePool, error) {
	f.calls = append(f.calls, "pool "+name)
	if f.poolFail != nil {
		return golibvirt.StoragePool{}, f.poolFail
	}
	if _, ok := f.pools[name]; !ok {
		return golibvirt.StoragePool{}, noSuch(golibvirt.ErrNoStoragePool, "no storage pool with matching name "+name)
	}
	return golibvirt.StoragePool{Name: name}, nil
}

func (f *fakeVolumes) StoragePoolIsActive(pool golibvirt.StoragePool) (int32, error) {
	f.calls = append(f.calls, "active "+pool.Name)
	if f.pools[pool.Name].active {
		return 1, nil
	}
	return 0, nil
}

func (f *fakeVolumes) ConnectListAllStoragePools(_ int32, flags golibvirt.ConnectListAllStoragePoolsFlags) ([]golibvirt.StoragePool, uint32, error) {
	f.calls = append(f.calls, "list pools")
	if f.poolFail != nil {
		return nil, 0, f.poolFail
	}
	var out []golibvirt.StoragePool
	for name, p := range f.pools {
		if flags&golibvirt.ConnectListStoragePoolsInactive == 0 || !p.active {
			out = append(out, golibvirt.StoragePool{Name: name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, uint32(len(out)), nil
}

func (f *fakeVolumes) StoragePoolGetXMLDesc(pool golibvirt.StoragePool, _ golibvirt.StorageXMLFlags) (string, error) {
	x := libvirtxml.StoragePool{Type: "dir", Name: pool.Name, Target: &libvirtxml.StoragePoolTarget{Path: f.pools[pool.Name].target}}
	return x.Marshal()
}

// The test host's layout: a running pool, a stopped one, an rbd pool whose keys look like
// <pool>/<name>, a logical pool with UUID keys — and a running dir pool that happens to be
// named like the rbd key's ceph pool.
func fakeHost() *fakeVolumes {
	return &fakeVolumes{pools: map[string]*fakePool{
		"default": {active: true, target: "/var/lib/libvirt/images", vols: map[string]string{"a.qcow2": "/var/lib/libvirt/images/a.qcow2"}},
		"stopped": {active: false, target: "/srv/stopped", vols: map[string]string{"v.qcow2": "/srv/stopped/v.qcow2"}},
		"ceph":    {active: true, target: "/srv/ceph", vols: map[string]string{"img": "/srv/ceph/img"}},
		"rbd":     {active: true, vols: map[string]string{"img": "ceph/img"}},
		"lvm":     {active: true, target: "/dev/vg0", vols: map[string]string{"lv0": "Hd4Bq2-7cTv-Q2e4-Ls1x-9kO3-aWw1-ZpY7m3"}},
	}}
}

func TestLookupVolume(t *testing.T) {
	type want int
	const (
		found want = iota
		notFound
		inactive
		transport
	)
	for _, tt := range []struct {
		name     string
		ref      func() VolumeRef
		want     want
		wantVol  string // pool/name of the volume found
		first    string // the first call made
		poolFail error
	}{
		{name: "rbd key that looks like <pool>/<name> is a key first", ref: parse("ceph/img"), want: found, wantVol: "rbd/img", first: "key ceph/img"},
		{name: "LVM UUID key", ref: parse("Hd4Bq2-7cTv-Q2e4-Ls1x-9kO3-aWw1-ZpY7m3"), want: found, wantVol: "lvm/lv0"},
		{name: "path key", ref: parse("/var/lib/libvirt/images/a.qcow2"), want: found, wantVol: "default/a.qcow2"},
		{name: "<pool>/<name> when no volume has it as key", ref: parse("default/a.qcow2"), want: found, wantVol: "default/a.qcow2", first: "key default/a.qcow2"},
		{name: "<pool>/<name> in a stopped pool", ref: parse("stopped/v.qcow2"), want: inactive},
		{name: "<pool>/<name> without a key", ref: ref(VolumeRef{Pool: "stopped", Name: "v.qcow2"}), want: inactive},
		{name: "state ref (key, pool) in a stopped pool", ref: ref(VolumeRef{Key: "/srv/stopped/v.qcow2", Pool: "stopped"}), want: inactive},
		{name: "path key in a stopped pool, pool not given", ref: parse("/srv/stopped/v.qcow2"), want: inactive},
		{name: "state ref gone from its running pool", ref: ref(VolumeRef{Key: "/var/lib/libvirt/images/gone.qcow2", Pool: "default"}), want: notFound},
		{name: "state ref whose pool is gone", ref: ref(VolumeRef{Key: "/srv/gone/v.qcow2", Pool: "gone"}), want: notFound},
		{name: "state ref is never found by name: a new volume of that name is not this one",
			ref: ref(VolumeRef{Key: "/var/lib/libvirt/images/old-key", Pool: "default"}), want: notFound},
		{name: "path no pool holds", ref: parse("/elsewhere/v.qcow2"), want: notFound},
		{name: "path beside a stopped pool's directory", ref: parse("/srv/stopped-not/v.qcow2"), want: notFound},
		{name: "<pool>/<name> of a pool that is not there", ref: parse("nopool/v"), want: notFound},
		{name: "non-path key of no volume", ref: parse("Zz9-no-such-uuid"), want: notFound},
		{name: "pool check fails on the connection", ref: ref(VolumeRef{Key: "/srv/stopped/v.qcow2", Pool: "stopped"}),
			poolFail: golibvirt.ErrInterrupted, want: transport},
		{name: "stopped-pool search fails on the connection", ref: parse("/srv/stopped/v.qcow2"),
			poolFail: golibvirt.ErrInterrupted, want: transport},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeHost()
			f.poolFail = tt.poolFail
			v, err := LookupVolume(f, tt.ref())
			err = classify("look up volume", "u", err)
			switch tt.want {
			case found:
				if err != nil || v.Pool+"/"+v.Name != tt.wantVol {
					t.Errorf("got %s/%s, %v; want %s (calls %q)", v.Pool, v.Name, err, tt.wantVol, f.calls)
				}
			case notFound:
				if !errors.Is(err, ErrNotFound) || IsPoolInactive(err) {
					t.Errorf("got %v; want not found (calls %q)", err, f.calls)
				}
			case inactive:
				var pi *PoolInactiveError
				if !errors.As(err, &pi) || errors.Is(err, ErrNotFound) || IsTransport(err) || pi.Pool != "stopped" {
					t.Fatalf("got %T %v; want a *PoolInactiveError for pool stopped (calls %q)", err, err, f.calls)
				}
				for _, s := range []string{`storage pool "stopped"`, "virsh pool-start stopped", "autostart = true"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("message %q does not say %q", err, s)
					}
				}
			case transport:
				if !IsTransport(err) || errors.Is(err, ErrNotFound) {
					t.Errorf("got %v; want a transport error (calls %q)", err, f.calls)
				}
			}
			if tt.first != "" && (len(f.calls) == 0 || f.calls[0] != tt.first) {
				t.Errorf("calls %q; want %q first", f.calls, tt.first)
			}
		})
	}
}

func parse(id string) func() VolumeRef {
	return func() VolumeRef {
		r, err := ParseVolumeRef(id)
		if err != nil {
			panic(fmt.Sprintf("ParseVolumeRef(%q): %v", id, err))
		}
		return r
	}
}

func ref(r VolumeRef) func() VolumeRef { return func() VolumeRef { return r } }
