package libvirt

import (
	"context"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// A write whose connection breaks under it has an unknown outcome: the daemon may have
// done it and died (or lost the link) before answering. The rule the provider keeps is
// that a failed apply leaves nothing on the host that the state does not track, so such a
// write is settled — the object is looked up once the daemon answers again — rather than
// reported as "may or may not exist". The daemon is usually back within seconds (a
// restart, a package upgrade, a dropped SSH session), but the pool's breaker may keep
// refusing to dial for its cool-down after the dials that failed meanwhile, so settling
// waits past that.

// settleBudget bounds how long settling waits for the daemon to answer again.
const settleBudget = 2 * time.Minute

// settleWaitMax is the longest pause between two attempts while settling.
const settleWaitMax = 5 * time.Second

// readSettled is Read that keeps trying, with pauses, while the connection fails, for up
// to settleBudget (or until ctx ends): for the look-ups that decide what a write whose
// answer was lost did, and for reading back an object just made.
func (c *Client) readSettled(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.settle(ctx, func(ctx context.Context) error { return c.Read(ctx, op, fn) })
}

// writeSettled runs fn, which must be safe to repeat (it reaches the same end state
// whether or not an earlier run got through), again on a fresh connection whenever the
// connection fails, for up to settleBudget (or until ctx ends).
func (c *Client) writeSettled(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.settle(ctx, func(ctx context.Context) error { return c.Write(ctx, op, fn) })
}

func (c *Client) settle(ctx context.Context, try func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, settleBudget)
	defer cancel()
	wait := 500 * time.Millisecond
	for {
		err := try(sctx)
		if err == nil || !IsTransport(err) || isPermanent(err) || sctx.Err() != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-sctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, settleWaitMax)
	}
}
