package acctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Volumes and pools as the test host sees them, asked directly.

// VolumeInfo asks libvirt about volume pool/name.
func VolumeInfo(t testing.TB, pool, name string) (*libvirt.VolumeInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Client(t).VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: name})
}

// CheckVolume is a step check that asks libvirt about volume pool/name and runs fn on it.
func CheckVolume(t testing.TB, pool, name string, fn func(*libvirt.VolumeInfo) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		info, err := VolumeInfo(t, pool, name)
		if err != nil {
			return fmt.Errorf("volume %s/%s on the host: %w", pool, name, err)
		}
		return fn(info)
	}
}

// RequireVolumeGone fails the test unless libvirt answers "not found" for pool/name.
func RequireVolumeGone(t testing.TB, pool, name string) {
	t.Helper()
	if _, err := VolumeInfo(t, pool, name); !errors.Is(err, libvirt.ErrNotFound) {
		t.Fatalf("volume %s/%s: want it gone from the host, lookup says %v", pool, name, err)
	}
}

// VolumesGone is a CheckDestroy: the named volumes of the test pool are gone.
func VolumesGone(names ...string) resource.TestCheckFunc {
	m := map[string]Lookup{}
	for _, n := range names {
		m["volume "+Pool()+"/"+n] = VolumeLookup(Pool(), n)
	}
	return CheckGone(m)
}

// VolumeContent downloads the volume with key whole.
func VolumeContent(t testing.TB, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var buf bytes.Buffer
	err := Client(t).DownloadVolume(ctx, libvirt.VolumeRef{Key: key}, &buf)
	return buf.Bytes(), err
}

// DeleteVolume deletes pool/name behind Terraform's back; the test fails when it cannot.
func DeleteVolume(t testing.TB, pool, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Client(t).DeleteVolume(ctx, libvirt.VolumeRef{Pool: pool, Name: name}); err != nil {
		t.Fatalf("delete volume %s/%s behind Terraform's back: %v", pool, name, err)
	}
}

// CreateRawVolume makes a fully allocated raw volume of size bytes in pool, behind
// Terraform's back (the pool's destroy or force_destroy removes it).
func CreateRawVolume(t testing.TB, pool, name string, size uint64) {
	t.Helper()
	def := &libvirtxml.StorageVolume{
		Name:       name,
		Capacity:   &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: size},
		Allocation: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: size},
		Target:     &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "raw"}},
	}
	xml, err := def.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = Client(t).Write(ctx, "create volume "+pool+"/"+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(pool)
		if err != nil {
			return err
		}
		_, err = l.StorageVolCreateXML(p, xml, 0)
		return err
	})
	if err != nil {
		t.Fatalf("create test volume %s/%s: %v", pool, name, err)
	}
}

// VolumeNames lists, sorted, the volumes of pool whose names match keep, after a refresh
// of the pool (so that files made or removed on the host count).
func VolumeNames(t testing.TB, pool string, keep func(string) bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names []string
	err := Client(t).Read(ctx, "list volumes of "+pool, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(pool)
		if err != nil {
			return err
		}
		_ = l.StoragePoolRefresh(p, 0)
		vols, _, err := l.StoragePoolListAllVolumes(p, 1, 0)
		names = names[:0]
		for _, v := range vols {
			if keep(v.Name) {
				names = append(names, v.Name)
			}
		}
		return err
	})
	sort.Strings(names)
	return names, err
}

// PoolDir is a directory for a test pool, next to the test host's own pool.
func PoolDir(name string) string {
	return filepath.Join(filepath.Dir(Env("LIBVIRT_TEST_POOL_PATH", "/var/lib/kvmforge-testhost/pool")), name)
}

// StopPool stops pool name behind Terraform's back.
func StopPool(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := Client(t).Write(ctx, "stop pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(name)
		if err != nil {
			return err
		}
		return l.StoragePoolDestroy(p)
	})
	if err != nil {
		t.Fatalf("stop pool %s: %v", name, err)
	}
}
