package acctest

import (
	"os"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// The second test host ("b") for the tests of several hosts and of migration: a libvirtd of
// its own in network namespace kvmforge-b, brought up by `tools/testhost.sh up-b` (or
// KVMFORGE_HOSTS=2 make testhost-up), whose variables `tools/testhost.sh env` prints only
// while it is up. See tools/testhost-b.sh for what it is.

// URIB is host b's URI (LIBVIRT_TEST_URI_B), "" when b is not up.
func URIB() string { return os.Getenv("LIBVIRT_TEST_URI_B") }

// RequireHostB is RequireAcc for a test of two hosts: it skips, saying how to bring host b
// up, when LIBVIRT_TEST_URI_B is unset, and fails when b is set but does not answer.
func RequireHostB(t testing.TB) {
	t.Helper()
	RequireAcc(t)
	if URIB() == "" {
		t.Skip("two-host test: the second test host is not up (LIBVIRT_TEST_URI_B is unset); " +
			"bring it up with `KVMFORGE_HOSTS=2 make testhost-up` (or tools/testhost.sh up-b), then eval \"$(tools/testhost.sh env)\"")
	}
	if _, err := ClientB(t).HostInfo(Ctx(t)); err != nil {
		t.Fatalf("second test host %s does not answer (tools/testhost.sh up-b): %v", URIB(), err)
	}
}

// ClientB is a client of host b, for checks that ask its libvirt directly.
func ClientB(t testing.TB) *libvirt.Client {
	t.Helper()
	c, err := libvirt.NewClient(libvirt.Config{URI: URIB(), MaxConnections: 2})
	if err != nil {
		t.Fatalf("acctest: client for %s: %v", URIB(), err)
	}
	return c
}

// URIAForB is the main host as host b's daemon dials it, the destination URI of a peer to
// peer migration b -> main (LIBVIRT_TEST_URI_A): in b's mount namespace qemu:///system is b
// itself, so the main daemon's socket has a second path there.
func URIAForB() string { return Env("LIBVIRT_TEST_URI_A", URI()) }

// MigrateURIA and MigrateURIB are where QEMU sends a migration to the main host and to b
// (libvirt's migrate_uri): the veth addresses between the hosts' network namespaces.
func MigrateURIA() string { return "tcp://" + Env("LIBVIRT_TEST_MIGRATE_ADDR", "10.77.0.1") }
func MigrateURIB() string { return "tcp://" + Env("LIBVIRT_TEST_MIGRATE_ADDR_B", "10.77.0.2") }

// PoolB and NetworkB are host b's storage pool and NAT network. PoolPathB is the pool's
// path as libvirt on b sees it: the main host's pool path, so that a disk keeps its path
// when --copy-storage-all moves it; PoolDirB is where its files really are.
func PoolB() string     { return Env("LIBVIRT_TEST_POOL_B", "default") }
func NetworkB() string  { return Env("LIBVIRT_TEST_NETWORK_B", "default") }
func PoolPathB() string { return Env("LIBVIRT_TEST_POOL_PATH_B", "/var/lib/kvmforge-testhost/pool") }
func PoolDirB() string  { return Env("LIBVIRT_TEST_POOL_DIR_B", "/var/lib/kvmforge-testhost-b/pool") }

// SharedPool is the pool both hosts see at the same path (LIBVIRT_TEST_SHARED_POOL, a bindfs
// mount libvirt counts as shared storage), "" when there is none.
func SharedPool() string { return os.Getenv("LIBVIRT_TEST_SHARED_POOL") }
