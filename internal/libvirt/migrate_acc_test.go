package libvirt_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Migration between the main test host ("a") and the second one ("b", tools/testhost-b.sh).
// The guests are minimal TCG domains of 64 MiB that boot nothing (SeaBIOS finds no boot
// disk and waits): enough for QEMU to migrate live, with a raw disk when storage is copied.

// migrateHosts are the clients of both hosts and the options that take a domain from one
// to the other on the test hosts.
type migrateHosts struct{ a, b *libvirt.Client }

func newMigrateHosts(t *testing.T) migrateHosts {
	t.Helper()
	acctest.RequireHostB(t)
	return migrateHosts{a: acctest.Client(t), b: acctest.ClientB(t)}
}

// toB and toA: b's daemon reaches the main one only by LIBVIRT_TEST_URI_A, and until the
// main daemon runs with migration_host set, its QEMU's address must be given.
func toB(o libvirt.MigrateOptions) libvirt.MigrateOptions { o.DestURI = acctest.URIB(); return o }
func toA(o libvirt.MigrateOptions) libvirt.MigrateOptions {
	o.DestURI, o.MigrateURI = acctest.URIAForB(), acctest.MigrateURIA()
	return o
}

// migrateGuestXML is a 64 MiB TCG domain, with a raw disk at disk when it is not "".
func migrateGuestXML(t *testing.T, name, disk string) string {
	t.Helper()
	d := libvirtxml.Domain{
		Type: acctest.DefaultDomainType(), Name: name,
		Memory: &libvirtxml.DomainMemory{Value: 64, Unit: "MiB"},
		VCPU:   &libvirtxml.DomainVCPU{Value: 1},
		OS:     &libvirtxml.DomainOS{Type: &libvirtxml.DomainOSType{Arch: "x86_64", Type: "hvm"}},
		Devices: &libvirtxml.DomainDeviceList{
			Serials: []libvirtxml.DomainSerial{{Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}}}},
		},
	}
	if disk != "" {
		d.Devices.Disks = []libvirtxml.DomainDisk{{
			Device: "disk",
			Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "raw"},
			Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: disk}},
			Target: &libvirtxml.DomainDiskTarget{Dev: "vda", Bus: "virtio"},
		}}
	}
	doc, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// defineMigrateGuest defines (and starts, when start) the guest on the main host and
// returns its UUID; it is removed from both hosts when the test ends.
func (h migrateHosts) defineMigrateGuest(t *testing.T, name, disk string, start bool) string {
	t.Helper()
	for _, c := range []*libvirt.Client{h.a, h.b} {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = c.DestroyDomain(ctx, name)
			_ = c.UndefineDomain(ctx, name)
		})
	}
	d, err := h.a.DefineDomain(acctest.Ctx(t), name, migrateGuestXML(t, name, disk))
	if err != nil {
		t.Fatal(err)
	}
	if start {
		if err := h.a.StartDomain(acctest.Ctx(t), name); err != nil {
			t.Fatal(err)
		}
	}
	return libvirt.UUIDString(d)
}

// migrateDisk writes a raw disk of mib MiB of random data (which no copy can skip as
// zeroes) into the main host's pool directory; the file is removed from both hosts'
// directories when the test ends.
func migrateDisk(t *testing.T, name string, mib int) string {
	t.Helper()
	path := filepath.Join(acctest.Env("LIBVIRT_TEST_POOL_PATH", "/var/lib/kvmforge-testhost/pool"), name)
	buf := make([]byte, mib<<20)
	_, _ = rand.Read(buf)
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.Remove(path)
		_ = os.Remove(filepath.Join(acctest.PoolDirB(), name))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// Drop the volumes from the pools' lists too (a refresh happens on the next define).
		_ = acctest.Client(t).DeleteVolume(ctx, libvirt.VolumeRef{Pool: acctest.Pool(), Name: name})
		_ = acctest.ClientB(t).DeleteVolume(ctx, libvirt.VolumeRef{Pool: acctest.PoolB(), Name: name})
	})
	return path
}

// requireOn checks that the domain uuid is on c in state want, and on other not at all.
func requireOn(t *testing.T, c, other *libvirt.Client, side, uuid, want string) {
	t.Helper()
	ctx := acctest.Ctx(t)
	d, err := c.LookupDomain(ctx, uuid)
	if err != nil {
		t.Fatalf("domain %s is not on %s: %v", uuid, side, err)
	}
	if got := libvirt.UUIDString(d); got != uuid {
		t.Fatalf("domain on %s has uuid %s, want %s", side, got, uuid)
	}
	if s, err := c.DomainState(ctx, uuid); err != nil || s != want {
		t.Fatalf("domain %s on %s: state %q (%v), want %q", uuid, side, s, err, want)
	}
	if _, err := other.LookupDomain(ctx, uuid); !errors.Is(err, libvirt.ErrNotFound) {
		t.Fatalf("domain %s is still on the other host than %s (lookup: %v)", uuid, side, err)
	}
}

// TestAccMigrate_liveCopyStorage: a running guest with a disk in the main host's pool
// moves live to b with its disk copied (same uuid, running there, gone from the main
// host), and back.
func TestAccMigrate_liveCopyStorage(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	name := acctest.RandomName("mig")
	disk := migrateDisk(t, name+".raw", 8)
	uuid := h.defineMigrateGuest(t, name, disk, true)
	var reports []libvirt.MigrateProgress
	opts := libvirt.MigrateOptions{CopyStorage: "all", ProgressEvery: time.Second, Poll: 250 * time.Millisecond,
		Progress: func(p libvirt.MigrateProgress) { reports = append(reports, p); t.Logf("progress: %s", p) }}

	start := time.Now()
	if err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(opts)); err != nil {
		t.Fatal(err)
	}
	t.Logf("main -> b with copy_storage all: %s (%d progress reports)", time.Since(start).Round(time.Millisecond), len(reports))
	requireOn(t, h.b, h.a, "b", uuid, "running")
	if _, err := os.Stat(filepath.Join(acctest.PoolDirB(), name+".raw")); err != nil {
		t.Errorf("the copied disk is not in b's pool directory: %v", err)
	}

	start = time.Now()
	if err := h.b.MigrateDomain(acctest.Ctx(t), name, h.a, toA(opts)); err != nil {
		t.Fatal(err)
	}
	t.Logf("b -> main with copy_storage all: %s", time.Since(start).Round(time.Millisecond))
	requireOn(t, h.a, h.b, "the main host", uuid, "running")
}

// TestAccMigrate_offline: a stopped domain moves its definition; asked to copy its disks
// as well, it is refused before anything moves.
func TestAccMigrate_offline(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	name := acctest.RandomName("mig")
	disk := migrateDisk(t, name+".raw", 1)
	uuid := h.defineMigrateGuest(t, name, disk, false)

	err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(libvirt.MigrateOptions{CopyStorage: "all"}))
	if err == nil || !strings.Contains(err.Error(), "cannot copy the disks of a stopped domain") {
		t.Fatalf("copy_storage all of a stopped domain: got %v, want a refusal that says why", err)
	}
	requireOn(t, h.a, h.b, "the main host", uuid, "shutoff")

	start := time.Now()
	if err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(libvirt.MigrateOptions{})); err != nil {
		t.Fatal(err)
	}
	t.Logf("offline main -> b: %s", time.Since(start).Round(time.Millisecond))
	requireOn(t, h.b, h.a, "b", uuid, "shutoff")
	if err := h.b.MigrateDomain(acctest.Ctx(t), name, h.a, toA(libvirt.MigrateOptions{})); err != nil {
		t.Fatal(err)
	}
	requireOn(t, h.a, h.b, "the main host", uuid, "shutoff")
}

// TestAccMigrate_abortOnTimeout: a disk copy capped at 1 MiB/s cannot finish within 2 s;
// on_timeout = "abort" cancels it: the domain keeps running on the main host, nothing of
// it is left on b (the volume the copy had created there is removed).
func TestAccMigrate_abortOnTimeout(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	name := acctest.RandomName("mig")
	disk := migrateDisk(t, name+".raw", 32)
	uuid := h.defineMigrateGuest(t, name, disk, true)
	var reports []libvirt.MigrateProgress
	opts := libvirt.MigrateOptions{CopyStorage: "all", BandwidthMiB: 1, Timeout: 2 * time.Second,
		OnTimeout: libvirt.OnTimeoutAbort, ProgressEvery: 500 * time.Millisecond, Poll: 250 * time.Millisecond,
		Progress: func(p libvirt.MigrateProgress) { reports = append(reports, p); t.Logf("progress: %s", p) }}

	start := time.Now()
	err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(opts))
	took := time.Since(start)
	t.Logf("aborted after %s: %v", took.Round(time.Millisecond), err)
	var merr *libvirt.MigrateError
	if !errors.As(err, &merr) {
		t.Fatalf("want a *MigrateError, got %T %v", err, err)
	}
	if !merr.TimedOut || merr.Where != "source" || merr.SourceState != "running" {
		t.Errorf("MigrateError: timed out %v, where %q, source state %q; want true, source, running", merr.TimedOut, merr.Where, merr.SourceState)
	}
	if took > 30*time.Second {
		t.Errorf("the abort took %s", took)
	}
	if len(reports) == 0 || reports[len(reports)-1].DataTotal == 0 {
		t.Errorf("no progress with data was reported: %v", reports)
	}
	requireOn(t, h.a, h.b, "the main host", uuid, "running")
	if _, err := os.Stat(filepath.Join(acctest.PoolDirB(), name+".raw")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the half-copied disk is still in b's pool directory (stat: %v); removed: %v, left: %v", err, merr.Removed, merr.Left)
	}
	if _, err := acctest.ClientB(t).VolumePath(acctest.Ctx(t), libvirt.VolumeRef{Pool: acctest.PoolB(), Name: name + ".raw"}); !errors.Is(err, libvirt.ErrNotFound) {
		t.Errorf("b's pool still lists the half-copied volume: %v", err)
	}
}

// TestAccMigrate_sharedStorage: a running guest whose disk is on storage both hosts see
// (the bindfs mount libvirt counts as shared, tools/testhost-b.sh) moves live without a
// storage copy, and back.
func TestAccMigrate_sharedStorage(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	pool, dir := acctest.SharedPool(), acctest.Env("LIBVIRT_TEST_SHARED_PATH", "")
	if pool == "" || dir == "" {
		t.Fatal("host b is up but without its shared pool (LIBVIRT_TEST_SHARED_POOL unset): see tools/testhost.sh status")
	}
	name := acctest.RandomName("mig")
	// Made through libvirt: the mount is in the daemons' mount namespaces, not the test's.
	acctest.CreateRawVolume(t, pool, name+".raw", 4<<20)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = acctest.Client(t).DeleteVolume(ctx, libvirt.VolumeRef{Pool: pool, Name: name + ".raw"})
	})
	disk := filepath.Join(dir, name+".raw")
	uuid := h.defineMigrateGuest(t, name, disk, true)

	start := time.Now()
	if err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(libvirt.MigrateOptions{CopyStorage: "none"})); err != nil {
		t.Fatal(err)
	}
	t.Logf("main -> b over shared storage: %s", time.Since(start).Round(time.Millisecond))
	requireOn(t, h.b, h.a, "b", uuid, "running")
	if _, err := os.Stat(filepath.Join(acctest.PoolDirB(), name+".raw")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a disk on shared storage was copied into b's pool directory (stat: %v)", err)
	}
	if err := h.b.MigrateDomain(acctest.Ctx(t), name, h.a, toA(libvirt.MigrateOptions{})); err != nil {
		t.Fatal(err)
	}
	requireOn(t, h.a, h.b, "the main host", uuid, "running")
}

// TestAccMigrate_pauseOnTimeout: a 20 MiB disk copy capped at 2 MiB/s runs past its 1 s timeout
// (about 12 s: QEMU lets the first 16 MiB through at once, a smaller disk is done too soon);
// on_timeout = "pause" suspends the guest on the main host and the move completes; the
// guest runs on b (resumed there, since the pause was the migration's, not the user's).
func TestAccMigrate_pauseOnTimeout(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	name := acctest.RandomName("mig")
	disk := migrateDisk(t, name+".raw", 20)
	uuid := h.defineMigrateGuest(t, name, disk, true)
	var phases []string
	opts := libvirt.MigrateOptions{CopyStorage: "all", BandwidthMiB: 2, Timeout: time.Second, OnTimeout: libvirt.OnTimeoutPause,
		ProgressEvery: 250 * time.Millisecond, Poll: 250 * time.Millisecond,
		Progress: func(p libvirt.MigrateProgress) { phases = append(phases, p.Phase) }}
	start := time.Now()
	if err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(opts)); err != nil {
		t.Fatal(err)
	}
	t.Logf("main -> b, paused after 1 s: %s (%d progress reports)", time.Since(start).Round(time.Millisecond), len(phases))
	if !slices.Contains(phases, "paused") {
		t.Errorf("no progress report while paused (phases %q): did the timeout act?", phases)
	}
	requireOn(t, h.b, h.a, "b", uuid, "running")
}

// TestAccMigrate_postcopyOnTimeout: on_timeout = "postcopy" asks for post-copy from the
// start. QEMU 7.2 needs the userfaultfd system call for it, which this kind of machine
// denies to QEMU's user (vm.unprivileged_userfaultfd = 0): libvirt then refuses at the
// start with "Postcopy is not supported", and the domain must be left running on the
// source with nothing on b. Where post-copy works, the move must complete instead.
func TestAccMigrate_postcopyOnTimeout(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	name := acctest.RandomName("mig")
	disk := migrateDisk(t, name+".raw", 8)
	uuid := h.defineMigrateGuest(t, name, disk, true)
	opts := libvirt.MigrateOptions{CopyStorage: "all", BandwidthMiB: 2, Timeout: time.Second, OnTimeout: libvirt.OnTimeoutPostcopy}
	err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(opts))
	if err == nil {
		t.Log("post-copy works on this host: the domain moved")
		requireOn(t, h.b, h.a, "b", uuid, "running")
		return
	}
	t.Logf("refused: %v", err)
	var merr *libvirt.MigrateError
	if !errors.As(err, &merr) || !strings.Contains(err.Error(), "Postcopy is not supported") {
		t.Fatalf("want post-copy to work or libvirt's refusal as a *MigrateError, got %T %v", err, err)
	}
	if merr.Where != "source" || merr.SourceState != "running" {
		t.Errorf("MigrateError: where %q, source state %q; want source, running", merr.Where, merr.SourceState)
	}
	requireOn(t, h.a, h.b, "the main host", uuid, "running")
	if _, err := os.Stat(filepath.Join(acctest.PoolDirB(), name+".raw")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a disk was left in b's pool directory (stat: %v)", err)
	}
}

// TestAccMigrate_pausedStaysPaused: a domain the user paused moves live and is paused on b
// (libvirt would resume it there without MIGRATE_PAUSED); a caller that gives up while a
// slow copy runs gets the domain back running on the main host, nothing on b.
func TestAccMigrate_pausedStaysPaused(t *testing.T) {
	acctest.RequireAcc(t)
	h := newMigrateHosts(t)
	name := acctest.RandomName("mig")
	uuid := h.defineMigrateGuest(t, name, "", true)
	if err := h.a.SuspendDomain(acctest.Ctx(t), name); err != nil {
		t.Fatal(err)
	}
	if err := h.a.MigrateDomain(acctest.Ctx(t), name, h.b, toB(libvirt.MigrateOptions{})); err != nil {
		t.Fatal(err)
	}
	requireOn(t, h.b, h.a, "b", uuid, "paused")
	if err := h.b.ResumeDomain(acctest.Ctx(t), name); err != nil {
		t.Fatal(err)
	}

	// Another domain, with a disk copy too slow for the caller, who gives up after 2 s.
	slow := acctest.RandomName("mig")
	disk := migrateDisk(t, slow+".raw", 32)
	slowUUID := h.defineMigrateGuest(t, slow, disk, true)
	ctx, cancel := context.WithTimeout(acctest.Ctx(t), 2*time.Second)
	defer cancel()
	err := h.a.MigrateDomain(ctx, slow, h.b, toB(libvirt.MigrateOptions{CopyStorage: "all", BandwidthMiB: 1}))
	var merr *libvirt.MigrateError
	if !errors.As(err, &merr) || !errors.Is(err, context.DeadlineExceeded) || merr.Where != "source" {
		t.Fatalf("want a *MigrateError for the deadline with the domain on the source, got %T %v", err, err)
	}
	t.Logf("given up: %v", err)
	requireOn(t, h.a, h.b, "the main host", slowUUID, "running")
	if _, err := os.Stat(filepath.Join(acctest.PoolDirB(), slow+".raw")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the half-copied disk is still in b's pool directory (stat: %v)", err)
	}
}
