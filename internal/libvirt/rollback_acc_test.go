package libvirt_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// rollbackBudget is the rollback bound these tests set; a rollback must end within it
// (plus slack for the steps before it), and one that takes rollbackHang is taken as hung.
const (
	rollbackBudget = 3 * time.Second
	rollbackSlack  = 15 * time.Second
	rollbackHang   = 45 * time.Second
)

// runCreateWithFrozenRollback runs create, whose step after the define fails and whose
// rollback then meets a daemon that accepts calls but never answers (the proxy freezes
// at the rollback's first call, proc). The rollback must give up within its budget.
func runCreateWithFrozenRollback(t *testing.T, proxy *acctest.CallProxy, proc uint32, create func(context.Context) error) error {
	t.Helper()
	libvirt.SetRollbackBudget(t, rollbackBudget)
	frozen := proxy.FreezeAt(proc)
	// The caller's own deadline is far away: only the rollback's bound can end it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- create(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(rollbackHang):
		proxy.Thaw() // cuts the frozen links: the hung call fails and create returns
		err = <-done
		t.Fatalf("the create did not return %s after its rollback met a wedged daemon (rollback budget %s); "+
			"it returned once the links were cut: %v", rollbackHang, rollbackBudget, err)
	}
	took := time.Since(start)
	select {
	case <-frozen:
	default:
		t.Fatalf("the rollback never reached the daemon (create: %v): the test proved nothing", err)
	}
	t.Logf("create returned after %s: %v", took.Round(time.Millisecond), err)
	if took > rollbackBudget+rollbackSlack {
		t.Errorf("create took %s with a rollback budget of %s", took, rollbackBudget)
	}
	proxy.Thaw()
	return err
}

// TestAccCreateNetwork_rollbackBounded: a network whose start fails (its subnet is taken
// by another running network) is rolled back; the daemon wedges as the rollback begins.
// The create returns within the rollback's bound, saying the removal failed and how to
// do it by hand, instead of waiting forever.
func TestAccCreateNetwork_rollbackBounded(t *testing.T) {
	acctest.RequireAcc(t)
	taken := acctest.CreateNetwork(t, true)
	proxy := acctest.StartCallProxy(t, "127.0.0.1:16509")
	c := newClient(t, libvirt.Config{URI: proxy.URI()})
	name := acctest.RandomName("net")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = acctest.Client(t).DeleteNetwork(ctx, name)
	})
	def := &libvirtxml.Network{Name: name, IPs: []libvirtxml.NetworkIP{{Address: taken.Addr(1), Netmask: "255.255.255.0"}}}
	err := runCreateWithFrozenRollback(t, proxy, acctest.ProcNetworkDestroy, func(ctx context.Context) error {
		return c.CreateNetwork(ctx, &hostxml.NetworkXML{Network: def}, true, false)
	})
	if err == nil || !strings.Contains(err.Error(), "removing the half-made network failed") || !strings.Contains(err.Error(), "virsh net-undefine "+name) {
		t.Fatalf("want the start's failure and the failed removal with what to do by hand, got %v", err)
	}
}

// TestAccCreatePool_rollbackBounded: the same for a storage pool whose start fails (its
// target is a file, not a directory).
func TestAccCreatePool_rollbackBounded(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartCallProxy(t, "127.0.0.1:16509")
	c := newClient(t, libvirt.Config{URI: proxy.URI()})
	name := acctest.RandomName("pool")
	target := filepath.Join(filepath.Dir(acctest.Env("LIBVIRT_TEST_POOL_PATH", "/var/lib/kvmforge-testhost/pool")), name)
	if err := os.WriteFile(target, []byte("not a directory\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = acctest.Client(t).Write(ctx, "remove pool "+name, func(l *golibvirt.Libvirt) error {
			p, err := l.StoragePoolLookupByName(name)
			if err != nil {
				return err
			}
			_ = l.StoragePoolDestroy(p)
			return l.StoragePoolUndefine(p)
		})
		os.Remove(target)
	})
	def := &libvirtxml.StoragePool{Type: "dir", Name: name, Target: &libvirtxml.StoragePoolTarget{Path: target}}
	err := runCreateWithFrozenRollback(t, proxy, acctest.ProcStoragePoolDestroy, func(ctx context.Context) error {
		return c.CreatePool(ctx, def, false, true)
	})
	if err == nil || !strings.Contains(err.Error(), "removing the half-made pool failed") || !strings.Contains(err.Error(), "virsh pool-undefine "+name) {
		t.Fatalf("want the start's failure and the failed removal with what to do by hand, got %v", err)
	}
}
