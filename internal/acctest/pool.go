package acctest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// DefineDirPool defines a dir storage pool for one test, in a directory of its own next to
// the test host's pool, started when active; removed at cleanup (and by the sweeper).
func DefineDirPool(t testing.TB, active bool) string {
	t.Helper()
	name := RandomName("pool")
	dir := filepath.Join(filepath.Dir(Env("LIBVIRT_TEST_POOL_PATH", "/var/lib/kvmforge-testhost/pool")), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	xml, err := (&libvirtxml.StoragePool{Type: "dir", Name: name, Target: &libvirtxml.StoragePoolTarget{Path: dir}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	c := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = c.Write(ctx, "define pool "+name, func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolDefineXML(xml, 0)
		if err != nil {
			return err
		}
		if active {
			return l.StoragePoolCreate(p, 0)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("define test pool: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "remove pool "+name, func(l *golibvirt.Libvirt) error {
			p, err := l.StoragePoolLookupByName(name)
			if err != nil {
				return err
			}
			_ = l.StoragePoolDestroy(p)
			return l.StoragePoolUndefine(p)
		})
		os.RemoveAll(dir)
	})
	return name
}
