package rpc

import (
	"context"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// A write whose connection breaks under it has an unknown outcome: the daemon may have
// done it and died (or lost the link) before answering. The rule the provider keeps is
// that a failed apply leaves nothing on the host that the state does not track, so such a
// write is settled — the object is looked up once the daemon answers again — rather than
// reported as "may or may not exist". The daemon is usually back within seconds (a
// restart, a package upgrade, a dropped SSH session), but the pool's breaker may keep
// refusing to dial for its cool-down after the dials that failed meanwhile, so settling
// waits past that.

// SettleBudget bounds how long settling waits for the daemon to answer again. It is also
// the budget of the object layer's own clean-ups that must ride out a daemon restart
// (a rollback, ending a block job).
const SettleBudget = 2 * time.Minute

// SettleWaitMax is the longest pause between two attempts while settling.
const SettleWaitMax = 5 * time.Second

// ReadSettled is Read that keeps trying, with pauses, while the connection fails, for up
// to SettleBudget (or until ctx ends): for the look-ups that decide what a write whose
// answer was lost did, and for reading back an object just made.
func (c *Client) ReadSettled(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.settle(ctx, func(ctx context.Context) error { return c.Read(ctx, op, fn) })
}

// WriteSettled runs fn, which must be safe to repeat (it reaches the same end state
// whether or not an earlier run got through), again on a fresh connection whenever the
// connection fails, for up to SettleBudget (or until ctx ends).
func (c *Client) WriteSettled(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.settle(ctx, func(ctx context.Context) error { return c.Write(ctx, op, fn) })
}

// settle runs try until it succeeds or fails for another reason than the connection.
// When the budget (or ctx) ends first, the last connection failure is the error: it says
// what was tried, where a bare "context deadline exceeded" would not.
func (c *Client) settle(ctx context.Context, try func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, SettleBudget)
	defer cancel()
	var last error
	err := poll.Until(sctx, poll.Options{Every: 500 * time.Millisecond, Max: SettleWaitMax}, func(sctx context.Context) (bool, error) {
		last = try(sctx)
		if last != nil && (!IsTransport(last) || isPermanent(last) || sctx.Err() != nil) {
			return false, last
		}
		return last == nil, nil
	})
	if err != nil && last != nil {
		return last // poll's own "waiting: deadline exceeded" says less
	}
	return err
}
