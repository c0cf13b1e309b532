package libvirt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// fakeFreeze records the order of freeze, copy and thaw, and what was logged.
type fakeFreeze struct {
	steps               []string
	logs                []string
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
	if ctx.Err() != nil && f.thawCtxCancelledErr == nil {
		f.thawCtxCancelledErr = ctx.Err()
	}
	if f.thawFailures > 0 {
		f.thawFailures--
		if f.thawFailures == 0 {
			defer func() { f.thawErr = nil }()
		}
	}
	return f.thawErr
}

func (f *fakeFreeze) run(ctx context.Context, fnErr error) error {
	logf := func(msg string, fields map[string]any) { f.logs = append(f.logs, fmt.Sprint(msg, fields)) }
	return freezeDuring(ctx, "web", logf, f.freeze, f.thaw, func() error { f.steps = append(f.steps, "copy"); return fnErr })
}

// lv is libvirt's error code as the pool classifies it (*Error), with its message.
func lv(code golibvirt.ErrorNumber, msg string) error { return &Error{Code: code, Message: msg} }

// FreezeDuring's order with fakes: the thaw follows every freeze that may have reached the
// guest, whatever libvirt answered it, and only a freeze libvirt refused before sending
// anything goes without; a thaw the agent did not get is sent again until its deadline,
// one it answered with an error once more.
func TestFreezeDuringThawsAlways(t *testing.T) {
	thawRetryPause = time.Millisecond
	thawTimeout = 300 * time.Millisecond
	t.Cleanup(func() { thawRetryPause, thawTimeout = time.Second, 30*time.Second })
	copyFailed := errors.New("copy failed")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	notConnected := lv(golibvirt.ErrAgentUnresponsive, "Guest agent is not responding: QEMU guest agent is not connected")
	disappeared := lv(golibvirt.ErrAgentUnresponsive, "Guest agent is not responding: Guest agent disappeared while executing command")
	timedOut := lv(golibvirt.ErrAgentCommandTimeout, "Guest agent command timed out")
	unsynced := lv(golibvirt.ErrAgentUnsynced, "Guest agent is not synchronized")
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		fake     fakeFreeze
		fnErr    error
		steps    string // exact, unless manyThaws
		many     bool   // steps: freeze [copy] then thaws until the deadline (at least 5)
		wantErr  []string
		agentErr bool
		frozen   bool
	}{
		{name: "ok", ctx: context.Background(), steps: "freeze copy thaw"},
		{name: "copy fails", ctx: context.Background(), fnErr: copyFailed, steps: "freeze copy thaw", wantErr: []string{"copy failed"}},
		{name: "cancelled caller still thaws", ctx: cancelled, steps: "freeze copy thaw"},

		// Refused before sending: no thaw.
		{name: "74 no channel: no copy, no thaw", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: lv(golibvirt.ErrArgumentUnsupported, "QEMU guest agent is not configured")},
			steps: "freeze", agentErr: true, wantErr: []string{"org.qemu.guest_agent.0", "no copy was made"}},
		{name: "86 not connected: no copy, no thaw", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: golibvirt.Error{Code: uint32(golibvirt.ErrAgentUnresponsive), Message: "Guest agent is not responding: QEMU guest agent is not connected"}},
			steps: "freeze", agentErr: true,
			wantErr: []string{"domain web", "qemu-guest-agent", "org.qemu.guest_agent.0", "no copy was made", "not connected"}},
		{name: "55 not running: no thaw", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: lv(golibvirt.ErrOperationInvalid, "domain is not running")},
			steps: "freeze", wantErr: []string{"not running", "no copy was made"}},

		// Sent, or maybe: thawed, no copy, the error says both.
		{name: "86 agent died under the freeze: thawed", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: disappeared},
			steps: "freeze thaw", agentErr: true, wantErr: []string{"disappeared", "no copy was made", "the guest was thawed after"}},
		{name: "112 timed out: thawed", ctx: context.Background(), fake: fakeFreeze{freezeErr: timedOut},
			steps: "freeze thaw", agentErr: true, wantErr: []string{"timed out", "the guest was thawed after"}},
		{name: "97 unsynced: thawed", ctx: context.Background(), fake: fakeFreeze{freezeErr: unsynced},
			steps: "freeze thaw", agentErr: true, wantErr: []string{"not synchronized", "the guest was thawed after"}},
		{name: "agent refuses: thawed", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: lv(golibvirt.ErrInternalError, "fsfreeze hook failed")},
			steps: "freeze thaw", wantErr: []string{"freeze the filesystems of domain web", "hook failed", "no copy was made", "thawed after"}},
		{name: "lost answer: thawed", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: &TransportError{Op: "freeze", Err: errors.New("connection reset")}},
			steps: "freeze thaw", wantErr: []string{"connection reset", "thawed after"}},
		{name: "caller's deadline under the freeze: thawed", ctx: context.Background(),
			fake:  fakeFreeze{freezeErr: fmt.Errorf("%w (read: use of closed connection)", context.DeadlineExceeded)},
			steps: "freeze thaw", wantErr: []string{"deadline", "thawed after"}},
		{name: "112 timed out, agent gone for good: may be frozen", ctx: context.Background(),
			fake: fakeFreeze{freezeErr: timedOut, thawErr: notConnected}, many: true, agentErr: true, frozen: true,
			wantErr: []string{"timed out", "no copy was made", "may still be frozen", "virsh domfsthaw web", "not connected"}},

		// The thaw after a copy.
		{name: "thaw answered with an error twice", ctx: context.Background(), fake: fakeFreeze{thawErr: errors.New("agent gone")},
			steps: "freeze copy thaw thaw", frozen: true, wantErr: []string{"may still be frozen", "virsh domfsthaw web", "sent 2 times"}},
		{name: "thaw answered with an error once: sent again", ctx: context.Background(),
			fake:  fakeFreeze{thawErr: lv(golibvirt.ErrInternalError, "fsfreeze hook has failed with status 1"), thawFailures: 1},
			steps: "freeze copy thaw thaw"},
		{name: "agent died while frozen, back: thawed", ctx: context.Background(),
			fake:  fakeFreeze{thawErr: notConnected, thawFailures: 4},
			steps: "freeze copy thaw thaw thaw thaw thaw"},
		{name: "thaw's connection lost, then back: thawed", ctx: context.Background(),
			fake:  fakeFreeze{thawErr: &TransportError{Op: "thaw", Err: errors.New("connection refused")}, thawFailures: 3},
			steps: "freeze copy thaw thaw thaw thaw"},
		{name: "agent died while frozen, gone for good: may be frozen", ctx: context.Background(),
			fake: fakeFreeze{thawErr: disappeared}, many: true, frozen: true,
			wantErr: []string{"may still be frozen", "virsh domfsthaw web", "disappeared"}},
		{name: "copy and thaw fail: both said", ctx: context.Background(), fnErr: copyFailed,
			fake:  fakeFreeze{thawErr: errors.New("agent gone")},
			steps: "freeze copy thaw thaw", frozen: true, wantErr: []string{"copy failed", "virsh domfsthaw web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fake
			start := time.Now()
			err := f.run(tc.ctx, tc.fnErr)
			got := strings.Join(f.steps, " ")
			if tc.many {
				rest := strings.TrimPrefix(strings.TrimPrefix(got, "freeze "), "copy ")
				if n := strings.Count(rest, "thaw"); n < 5 || strings.Trim(strings.ReplaceAll(rest, "thaw", ""), " ") != "" {
					t.Fatalf("steps %q, want thaws sent again until the deadline", got)
				}
				if d := time.Since(start); d < thawTimeout {
					t.Fatalf("gave up after %s, before the thaw's deadline %s", d, thawTimeout)
				}
			} else if got != tc.steps {
				t.Fatalf("steps %q, want %q", got, tc.steps)
			}
			if f.thawCtxCancelledErr != nil && !tc.many {
				t.Fatalf("the thaw ran on a done context (%v): it must have its own deadline", f.thawCtxCancelledErr)
			}
			// Each thaw attempt is logged with its result.
			thawLogs := 0
			for _, l := range f.logs {
				if strings.HasPrefix(l, "thaw failed") || strings.HasPrefix(l, "guest filesystems thawed") {
					thawLogs++
				}
			}
			if thaws := strings.Count(got, "thaw"); thawLogs != thaws {
				t.Errorf("%d thaw attempts, %d logged; the last logs: %q", thaws, thawLogs, f.logs[max(0, len(f.logs)-3):])
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
