package libvirt_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// TestAccLookupVolume_stoppedPool checks against the real daemon what LookupVolume
// relies on and promises: libvirt finds keys and paths in running pools only, so with
// its pool stopped a volume is a *PoolInactiveError however it is named (key, key with
// pool, <pool>/<name>, disk path) — at once, not after retries — and a delete deletes
// nothing; with the pool undefined it is ErrNotFound.
func TestAccLookupVolume_stoppedPool(t *testing.T) {
	acctest.RequireAcc(t)
	c := acctest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pool := acctest.DefineDirPool(t, true)
	name := acctest.RandomName("vol") + ".qcow2"
	info, err := c.CreateVolume(ctx, libvirt.VolumeSpec{Pool: pool, Name: name, Format: "qcow2", Capacity: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	byName, err := libvirt.ParseVolumeRef(pool + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]libvirt.VolumeRef{
		"key":           {Key: info.Key},
		"key in pool":   {Key: info.Key, Pool: pool},
		"<pool>/<name>": byName,
	}
	setPool := func(what string, fn func(*golibvirt.Libvirt, golibvirt.StoragePool) error) {
		t.Helper()
		err := c.Write(ctx, what+" pool "+pool, func(l *golibvirt.Libvirt) error {
			p, err := l.StoragePoolLookupByName(pool)
			if err != nil {
				return err
			}
			return fn(l, p)
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// Running: every form finds it (<pool>/<name> by the fallback: it is no key).
	for form, ref := range refs {
		if got, err := c.VolumeInfo(ctx, ref); err != nil || got.Key != info.Key {
			t.Errorf("%s %s with the pool running: %+v, %v", form, ref, got, err)
		}
	}

	setPool("stop", func(l *golibvirt.Libvirt, p golibvirt.StoragePool) error { return l.StoragePoolDestroy(p) })
	inactive := func(what string, err error, took time.Duration) {
		t.Helper()
		var pi *libvirt.PoolInactiveError
		if !errors.As(err, &pi) || pi.Pool != pool || errors.Is(err, libvirt.ErrNotFound) || libvirt.IsTransport(err) {
			t.Errorf("%s with the pool stopped: got %T %v; want a *PoolInactiveError for %s", what, err, err, pool)
		}
		if took > 5*time.Second {
			t.Errorf("%s took %s: a stopped pool is an answer, not a connection failure to retry", what, took)
		}
	}
	for form, ref := range refs {
		start := time.Now()
		_, err := c.VolumeInfo(ctx, ref)
		inactive("look up by "+form, err, time.Since(start))
	}
	start := time.Now()
	_, err = c.DiskVolumeByPath(ctx, info.Path, "", "")
	inactive("look up disk file", err, time.Since(start))
	start = time.Now()
	err = c.DeleteVolume(ctx, libvirt.VolumeRef{Key: info.Key, Pool: pool})
	inactive("delete", err, time.Since(start))
	if _, err := os.Stat(info.Path); err != nil {
		t.Errorf("the volume file after a refused delete: %v", err)
	}

	// Started again, it is all there.
	setPool("start", func(l *golibvirt.Libvirt, p golibvirt.StoragePool) error { return l.StoragePoolCreate(p, 0) })
	if got, err := c.VolumeInfo(ctx, libvirt.VolumeRef{Key: info.Key, Pool: pool}); err != nil || got.Name != name {
		t.Errorf("after pool-start: %+v, %v", got, err)
	}

	// A pool that is gone takes its volumes with it (as far as libvirt can tell).
	setPool("remove", func(l *golibvirt.Libvirt, p golibvirt.StoragePool) error {
		if err := l.StoragePoolDestroy(p); err != nil {
			return err
		}
		return l.StoragePoolUndefine(p)
	})
	for form, ref := range refs {
		if _, err := c.VolumeInfo(ctx, ref); !errors.Is(err, libvirt.ErrNotFound) || libvirt.IsPoolInactive(err) {
			t.Errorf("%s %s with the pool undefined: got %v; want ErrNotFound", form, ref, err)
		}
	}
}
