package libvirt

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

func TestMigrateFlags(t *testing.T) {
	const base = golibvirt.MigratePeer2peer | golibvirt.MigratePersistDest | golibvirt.MigrateUndefineSource
	for _, tc := range []struct {
		name           string
		active, paused bool
		o              MigrateOptions
		want           golibvirt.DomainMigrateFlags
		err            string
	}{
		{name: "running, shared storage", active: true, want: base | golibvirt.MigrateLive},
		{name: "running, copy none", active: true, o: MigrateOptions{CopyStorage: "none"}, want: base | golibvirt.MigrateLive},
		{name: "running, copy all", active: true, o: MigrateOptions{CopyStorage: "all"},
			want: base | golibvirt.MigrateLive | golibvirt.MigrateNonSharedDisk},
		{name: "paused stays paused", active: true, paused: true, want: base | golibvirt.MigrateLive | golibvirt.MigratePaused},
		{name: "postcopy allowed from the start", active: true, o: MigrateOptions{Timeout: time.Minute, OnTimeout: OnTimeoutPostcopy},
			want: base | golibvirt.MigrateLive | golibvirt.MigratePostcopy},
		{name: "postcopy without timeout is never switched to", active: true, o: MigrateOptions{OnTimeout: OnTimeoutPostcopy},
			want: base | golibvirt.MigrateLive},
		{name: "abort and pause need no flag", active: true, o: MigrateOptions{Timeout: time.Minute, OnTimeout: OnTimeoutPause},
			want: base | golibvirt.MigrateLive},
		{name: "stopped: offline", want: base | golibvirt.MigrateOffline},
		{name: "stopped ignores the timeout", o: MigrateOptions{Timeout: time.Second, OnTimeout: OnTimeoutPostcopy},
			want: base | golibvirt.MigrateOffline},
		{name: "stopped with copy all", o: MigrateOptions{CopyStorage: "all"}, err: "cannot copy the disks of a stopped domain"},
		{name: "unknown copy_storage", active: true, o: MigrateOptions{CopyStorage: "some"}, err: `copy_storage must be "none" or "all"`},
		{name: "unknown on_timeout", active: true, o: MigrateOptions{OnTimeout: "kill"}, err: "on_timeout must be"},
		{name: "negative timeout", active: true, o: MigrateOptions{Timeout: -time.Second}, err: "must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := migrateFlags(tc.active, tc.paused, tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %#x, %v; want %#x", got, err, tc.want)
			}
		})
	}
}

func TestMigrateParams(t *testing.T) {
	if p := migrateParams(MigrateOptions{}); len(p) != 0 {
		t.Errorf("no options: %v", p)
	}
	p := migrateParams(MigrateOptions{BandwidthMiB: 5, MigrateURI: "tcp://10.77.0.2"})
	got := map[string]any{}
	for _, tp := range p {
		got[tp.Field] = tp.Value.I
	}
	if got["bandwidth"] != uint64(5) || got["migrate_uri"] != "tcp://10.77.0.2" || len(got) != 2 {
		t.Errorf("params: %v", got)
	}
}

func TestJobProgress(t *testing.T) {
	u := func(f string, v uint64) golibvirt.TypedParam {
		return golibvirt.TypedParam{Field: f, Value: *golibvirt.NewTypedParamValueUllong(v)}
	}
	p, active := jobProgress(int32(golibvirt.DomainJobUnbounded), []golibvirt.TypedParam{
		u("time_elapsed", 2500), u("data_total", 100<<20), u("data_processed", 40<<20), u("data_remaining", 60<<20),
		u("memory_remaining", 10<<20), u("disk_remaining", 50<<20), u("memory_bps", 1<<20),
		{Field: "operation", Value: *golibvirt.NewTypedParamValueInt(1)},
	})
	if !active || p.Elapsed != 2500*time.Millisecond || p.DataTotal != 100<<20 || p.DataRemaining != 60<<20 ||
		p.MemoryRemaining != 10<<20 || p.DiskRemaining != 50<<20 || p.MemoryBps != 1<<20 {
		t.Errorf("got %+v, active %v", p, active)
	}
	p.Rate = 1 << 20
	if s := p.String(); s != "60.0 MiB of 100.0 MiB left (memory 10.0 MiB, disks 50.0 MiB) at 1.0 MiB/s, 3s in" {
		t.Errorf("String: %s", s)
	}
	if _, active := jobProgress(int32(golibvirt.DomainJobNone), nil); active {
		t.Error("no job is not active")
	}
}

// fakeJob is a migration job that ends when finish is called (or when aborted, if
// abortEnds), recording what was done to it.
type fakeJob struct {
	mu        sync.Mutex
	did       []string
	done      chan error
	abortEnds bool
	actionErr error
	processed uint64
}

func newFakeJob(abortEnds bool) *fakeJob {
	return &fakeJob{done: make(chan error, 1), abortEnds: abortEnds}
}

func (j *fakeJob) record(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.did = append(j.did, s)
}

func (j *fakeJob) actions() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, a := range j.did {
		if a != "progress" {
			out = append(out, a)
		}
	}
	return out
}

func (j *fakeJob) progress(context.Context) (MigrateProgress, bool, error) {
	j.record("progress")
	j.mu.Lock()
	defer j.mu.Unlock()
	j.processed += 1 << 20
	return MigrateProgress{DataTotal: 64 << 20, DataProcessed: j.processed, DataRemaining: 64<<20 - j.processed,
		Elapsed: time.Duration(j.processed>>20) * 10 * time.Millisecond}, true, nil
}

func (j *fakeJob) abort(context.Context) error {
	j.record("abort")
	if j.abortEnds {
		j.done <- errors.New("operation aborted: migration out: canceled by client")
	}
	return j.actionErr
}

func (j *fakeJob) suspend(context.Context) error       { j.record("suspend"); return j.actionErr }
func (j *fakeJob) startPostCopy(context.Context) error { j.record("postcopy"); return j.actionErr }

func fastOpts(o MigrateOptions) MigrateOptions {
	o.Poll, o.ProgressEvery = 5*time.Millisecond, 20*time.Millisecond
	return o
}

func TestWatchMigration_finishesBeforeTimeout(t *testing.T) {
	j := newFakeJob(true)
	var reports []MigrateProgress
	o := fastOpts(MigrateOptions{Timeout: time.Hour, Progress: func(p MigrateProgress) { reports = append(reports, p) }})
	time.AfterFunc(100*time.Millisecond, func() { j.done <- nil })
	out, err := watchMigration(context.Background(), j, j.done, o)
	if err != nil || out.timedOut || len(j.actions()) != 0 {
		t.Fatalf("got %+v, %v, actions %v", out, err, j.actions())
	}
	if len(reports) < 2 || len(reports) > 10 {
		t.Errorf("%d progress reports in 100 ms at one per 20 ms", len(reports))
	}
	if last := reports[len(reports)-1]; last.Rate != 100<<20 { // 1 MiB per 10 ms of the fake's elapsed time
		t.Errorf("measured rate %d, want %d", last.Rate, 100<<20)
	}
}

func TestWatchMigration_abortOnTimeout(t *testing.T) {
	for _, onTimeout := range []string{"", OnTimeoutAbort} {
		j := newFakeJob(true)
		start := time.Now()
		out, err := watchMigration(context.Background(), j, j.done, fastOpts(MigrateOptions{Timeout: 50 * time.Millisecond, OnTimeout: onTimeout}))
		if err == nil || !out.timedOut || out.action != OnTimeoutAbort || out.paused {
			t.Fatalf("on_timeout %q: got %+v, %v", onTimeout, out, err)
		}
		if took := time.Since(start); took < 50*time.Millisecond || took > 2*time.Second {
			t.Errorf("aborted after %s with a timeout of 50 ms", took)
		}
		if a := j.actions(); len(a) != 1 || a[0] != "abort" {
			t.Errorf("actions %v, want one abort", a)
		}
	}
}

func TestWatchMigration_pauseThenConverges(t *testing.T) {
	j := newFakeJob(false)
	var phases []string
	o := fastOpts(MigrateOptions{Timeout: 30 * time.Millisecond, OnTimeout: OnTimeoutPause,
		Progress: func(p MigrateProgress) { phases = append(phases, p.Phase) }})
	time.AfterFunc(150*time.Millisecond, func() { j.done <- nil })
	out, err := watchMigration(context.Background(), j, j.done, o)
	if err != nil || !out.timedOut || out.action != OnTimeoutPause || !out.paused {
		t.Fatalf("got %+v, %v", out, err)
	}
	if a := j.actions(); len(a) != 1 || a[0] != "suspend" {
		t.Errorf("actions %v, want one suspend (once, however long it then takes)", a)
	}
	if len(phases) == 0 || phases[len(phases)-1] != "paused" {
		t.Errorf("progress phases %v, want the last one paused", phases)
	}
}

func TestWatchMigration_postcopy(t *testing.T) {
	j := newFakeJob(false)
	time.AfterFunc(120*time.Millisecond, func() { j.done <- nil })
	out, err := watchMigration(context.Background(), j, j.done, fastOpts(MigrateOptions{Timeout: 30 * time.Millisecond, OnTimeout: OnTimeoutPostcopy}))
	if err != nil || !out.timedOut || out.action != OnTimeoutPostcopy || out.paused {
		t.Fatalf("got %+v, %v", out, err)
	}
	if a := j.actions(); len(a) != 1 || a[0] != "postcopy" {
		t.Errorf("actions %v, want one switch to post-copy", a)
	}
}

func TestWatchMigration_failedActionIsReported(t *testing.T) {
	j := newFakeJob(false)
	j.actionErr = errors.New("Requested operation is not valid: post-copy migration is not enabled")
	time.AfterFunc(100*time.Millisecond, func() { j.done <- errors.New("migration failed") })
	out, err := watchMigration(context.Background(), j, j.done, fastOpts(MigrateOptions{Timeout: 20 * time.Millisecond, OnTimeout: OnTimeoutPostcopy}))
	if err == nil || !strings.Contains(err.Error(), "migration failed") || !strings.Contains(err.Error(), "postcopy on timeout failed") {
		t.Fatalf("got %v", err)
	}
	if out.timedOut {
		t.Error("a timeout whose action failed is not what ended the migration")
	}
}

func TestWatchMigration_callerGivesUp(t *testing.T) {
	j := newFakeJob(true)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
	defer cancel()
	out, err := watchMigration(ctx, j, j.done, fastOpts(MigrateOptions{}))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "aborted") || out.timedOut {
		t.Fatalf("got %+v, %v", out, err)
	}
	if a := j.actions(); len(a) != 1 || a[0] != "abort" {
		t.Errorf("actions %v, want one abort", a)
	}
}

func TestWatchMigration_abortThatDoesNotEnd(t *testing.T) {
	defer func(d time.Duration) { migrateAbortWait = d }(migrateAbortWait)
	migrateAbortWait = 50 * time.Millisecond
	j := newFakeJob(false) // the abort is accepted but the job goes on
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := watchMigration(ctx, j, j.done, fastOpts(MigrateOptions{}))
	if err == nil || !strings.Contains(err.Error(), "it may still run") {
		t.Fatalf("got %v", err)
	}
}

func TestMigrateErrorMessage(t *testing.T) {
	base := MigrateError{Domain: "web", From: "qemu:///system", To: "qemu+tcp://b/system", Err: errors.New("operation aborted")}
	for _, tc := range []struct {
		edit func(*MigrateError)
		want []string
	}{
		{func(e *MigrateError) {
			e.Where, e.SourceState, e.TimedOut, e.OnTimeout, e.Timeout = "source", "running", true, "abort", 2*time.Second
			e.Removed = []string{"/p/web.qcow2"}
		}, []string{"migrate domain web from qemu:///system to qemu+tcp://b/system", `did not finish within 2s (on_timeout = "abort")`,
			"operation aborted", "still on the source (running) and keeps running there", "removed what the storage copy had made on the destination: /p/web.qcow2"}},
		{func(e *MigrateError) { e.Where = "destination" }, []string{"the domain is on the destination"}},
		{func(e *MigrateError) { e.Where, e.SourceState = "both", "shutoff" }, []string{"defined on both hosts (source: shutoff)"}},
		{func(e *MigrateError) { e.Where = "neither" }, []string{"on neither host"}},
		{func(e *MigrateError) { e.Where = "unknown"; e.Left = []string{"/p/x (denied)"} }, []string{"could not be read", "remove by hand: /p/x (denied)"}},
	} {
		e := base
		tc.edit(&e)
		for _, w := range tc.want {
			if !strings.Contains(e.Error(), w) {
				t.Errorf("%q lacks %q", e.Error(), w)
			}
		}
		if !errors.Is(&e, base.Err) {
			t.Error("MigrateError does not unwrap to libvirt's error")
		}
	}
}

func TestWritableDiskPaths(t *testing.T) {
	got, err := writableDiskPaths(`<domain type='qemu'><name>x</name><devices>
  <disk type='file' device='disk'><source file='/p/root.qcow2'/><target dev='vda'/></disk>
  <disk type='file' device='cdrom'><source file='/p/seed.iso'/><target dev='sda'/><readonly/></disk>
  <disk type='file' device='disk'><source file='/p/ro.raw'/><target dev='vdb'/><readonly/></disk>
  <disk type='block' device='disk'><source dev='/dev/vg/lv'/><target dev='vdc'/></disk>
  <disk type='network' device='disk'><source protocol='nbd' name='x'/><target dev='vdd'/></disk>
</devices></domain>`)
	if err != nil || strings.Join(got, " ") != "/p/root.qcow2 /dev/vg/lv" {
		t.Fatalf("got %v, %v", got, err)
	}
}
