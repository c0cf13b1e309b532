package libvirt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// fakeFreeze records the order of freeze, copy and thaw.
type fakeFreeze struct {
	steps               []string
	freezeErr, thawErr  error
	thawFailures        int   // thaws that fail with thawErr before one works; 0: all fail
	thawCtxCancelledErr error // the thaw's context error, seen when it ran
}

func (f *fakeFreeze) freeze(context.Context) error {
	f.steps = append(f.steps, "freeze")
	return f.freezeErr
}
func (f *fakeFreeze) thaw(ctx context.Context) error {
	f.steps = append(f.steps, "thaw")
	f.thawCtxCancelledErr = ctx.Err()
	if f.thawFailures > 0 {
		f.thawFailures--
		if f.thawFailures == 0 {
			defer func() { f.thawErr = nil }()
		}
	}
	return f.thawErr
}

func (f *fakeFreeze) run(ctx context.Context, fnErr error) error {
	return freezeDuring(ctx, "web", f.freeze, f.thaw, func() error { f.steps = append(f.steps, "copy"); return fnErr })
}

func TestFreezeDuringThawsAlways(t *testing.T) {
	thawRetryPause = time.Millisecond
	t.Cleanup(func() { thawRetryPause = time.Second })
	copyFailed := errors.New("copy failed")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		fake     fakeFreeze
		fnErr    error
		steps    string
		wantErr  []string
		agentErr bool
		frozen   bool
	}{
		{name: "ok", ctx: context.Background(), steps: "freeze copy thaw"},
		{name: "copy fails", ctx: context.Background(), fnErr: copyFailed, steps: "freeze copy thaw", wantErr: []string{"copy failed"}},
		{name: "cancelled caller still thaws", ctx: cancelled, steps: "freeze copy thaw"},
		{name: "no agent: no copy", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: golibvirt.Error{Code: uint32(golibvirt.ErrAgentUnresponsive), Message: "Guest agent is not responding: QEMU guest agent is not connected"}},
			steps: "freeze", agentErr: true,
			wantErr: []string{"domain web", "qemu-guest-agent", "org.qemu.guest_agent.0", "no copy was made", "not connected"}},
		{name: "no channel: no copy", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: &Error{Code: golibvirt.ErrArgumentUnsupported, Message: "QEMU guest agent is not configured"}},
			steps: "freeze", agentErr: true, wantErr: []string{"org.qemu.guest_agent.0"}},
		{name: "agent refuses: no copy", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: &Error{Code: golibvirt.ErrInternalError, Message: "fsfreeze hook failed"}},
			steps: "freeze", wantErr: []string{"freeze the filesystems of domain web", "hook failed", "no copy was made"}},
		{name: "lost answer: thawed, no copy", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: &TransportError{Op: "freeze", Err: errors.New("connection reset")}},
			steps: "freeze thaw", wantErr: []string{"connection reset"}},
		{name: "thaw fails twice", ctx: context.Background(), fake: fakeFreeze{thawErr: errors.New("agent gone")},
			steps: "freeze copy thaw thaw", frozen: true, wantErr: []string{"may still be frozen", "virsh domfsthaw web"}},
		{name: "thaw fails once: sent again", ctx: context.Background(),
			fake:  fakeFreeze{thawErr: errors.New("fsfreeze hook has failed with status 1"), thawFailures: 1},
			steps: "freeze copy thaw thaw"},
		{name: "copy and thaw fail: both said", ctx: context.Background(), fnErr: copyFailed,
			fake:  fakeFreeze{thawErr: errors.New("agent gone")},
			steps: "freeze copy thaw thaw", frozen: true, wantErr: []string{"copy failed", "virsh domfsthaw web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fake
			err := f.run(tc.ctx, tc.fnErr)
			if got := strings.Join(f.steps, " "); got != tc.steps {
				t.Fatalf("steps %q, want %q", got, tc.steps)
			}
			if f.thawCtxCancelledErr != nil {
				t.Fatalf("the thaw ran on a done context (%v): it must have its own deadline", f.thawCtxCancelledErr)
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := errors.Is(err, ErrGuestAgent); got != tc.agentErr {
				t.Errorf("errors.Is(err, ErrGuestAgent) = %v, want %v", got, tc.agentErr)
			}
			var frozen *GuestFrozenError
			if got := errors.As(err, &frozen); got != tc.frozen {
				t.Errorf("GuestFrozenError = %v, want %v", got, tc.frozen)
			}
			if tc.fnErr != nil && !errors.Is(err, tc.fnErr) {
				t.Errorf("fn's error is not wrapped: %v", err)
			}
		})
	}
}

// The block copy's end runs inside AtCopyPoint; an AtCopyPoint that refuses (no agent)
// still has the job ended, and its error returned: the copy is not used.
func TestEndAtCopyPoint(t *testing.T) {
	ends := 0
	end := func() (error, error) { ends++; return nil, nil }
	noAgent := errors.New("no agent")

	job := BlockCopyJob{}
	if _, err := job.endAtCopyPoint(end); err != nil || ends != 1 {
		t.Fatalf("no hook: err %v, ends %d", err, ends)
	}

	ends = 0
	var order []string
	job.AtCopyPoint = func(endJob func() error) error {
		order = append(order, "freeze")
		err := endJob()
		order = append(order, "thaw")
		return err
	}
	if _, err := job.endAtCopyPoint(end); err != nil || ends != 1 || strings.Join(order, " ") != "freeze thaw" {
		t.Fatalf("hook: err %v, ends %d, order %v", err, ends, order)
	}

	ends = 0
	job.AtCopyPoint = func(func() error) error { return noAgent }
	if _, err := job.endAtCopyPoint(end); !errors.Is(err, noAgent) || ends != 1 {
		t.Fatalf("refusing hook: err %v (want the hook's), ends %d (want the job ended once)", err, ends)
	}

	// A job that could not be ended stays a *BlockJobRunningError through the hook.
	running := &BlockJobRunningError{Domain: "web", Disk: "vda", Dest: "tmp", Err: errors.New("abort lost")}
	job.AtCopyPoint = func(endJob func() error) error { return endJob() }
	_, err := job.endAtCopyPoint(func() (error, error) { return nil, running })
	var got *BlockJobRunningError
	if !errors.As(err, &got) {
		t.Fatalf("want a BlockJobRunningError, got %v", err)
	}
}
