// Package poll is the one way the provider waits for something on the host to happen: a
// check run now and then again after a pause, the pause growing from Every up to Max,
// until the check says done or fails, the wait's own Timeout passes, or the context ends.
// Every wait of the provider (a domain's state, a block job, a DHCP lease, a guest
// command, a daemon coming back) goes through Until, so that each is cancellable by
// Ctrl-C and bounded.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Options shape a wait. Zero values: Every 500 ms, Max = Every (a steady pace), Factor 2
// when Max > Every, no Timeout of its own (the context bounds it).
type Options struct {
	Every   time.Duration // pause after the first check
	Max     time.Duration // longest pause
	Factor  float64       // growth of the pause per check
	Timeout time.Duration // the wait's own limit; 0: only ctx
}

// ErrTimeout is returned (wrapped, with the last check's error when it had one) when
// Options.Timeout passed before the check said done.
var ErrTimeout = errors.New("timed out")

// Until runs check until it reports done (nil error) or returns a non-nil error. A check
// that wants to go on after a failure returns (false, nil) and keeps what it saw itself.
// When ctx ends first the context's error is returned, wrapped; when Timeout passes,
// ErrTimeout. The check runs at least once, and once more at the deadline when the last
// pause would overshoot it, so a Timeout is never shorter than it says.
func Until(ctx context.Context, o Options, check func(context.Context) (done bool, err error)) error {
	every := o.Every
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	maxPause := max(o.Max, every)
	factor := o.Factor
	if factor <= 1 {
		factor = 2
	}
	var deadline time.Time
	if o.Timeout > 0 {
		deadline = time.Now().Add(o.Timeout)
	}
	pause := every
	for {
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
		wait := pause
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return fmt.Errorf("%w after %s", ErrTimeout, o.Timeout)
			}
			wait = min(wait, left)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("waiting: %w", ctx.Err())
		case <-t.C:
		}
		pause = min(time.Duration(float64(pause)*factor), maxPause)
	}
}
