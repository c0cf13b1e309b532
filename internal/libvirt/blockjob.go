package libvirt

import (
	"context"
	"errors"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt/rpc"
	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// blockJobAbortBudget bounds how long endBlockJob keeps trying to end a block job. It is
// the settling budget: long enough to ride out a daemon restart and the breaker's
// cool-down, short enough that a wedged daemon cannot hold an apply (or its Ctrl-C) for
// long. A variable so that tests can shorten it.
var blockJobAbortBudget = rpc.SettleBudget

// BlockJobRunningError says that a block copy job could not be ended: QEMU may still be
// mirroring the disk into Dest, so Dest was kept (deleting it would leave the job writing
// into a removed file, and a later volume of that name would not be what it seems).
type BlockJobRunningError struct {
	Domain string // the domain's name
	Disk   string // its target, e.g. vda
	Dest   string // what the job writes into: <pool>/<volume> or a path
	// Cleanup is what to do by hand once the job is gone, e.g. "virsh vol-delete --pool p v".
	Cleanup string
	Err     error // the last failure
}

func (e *BlockJobRunningError) Error() string {
	s := fmt.Sprintf("the block copy job of disk %s of domain %s into %s could not be ended (%v); it may still be "+
		"writing into it, so it was kept: end the job by hand with `virsh blockjob %s %s --abort`",
		e.Disk, e.Domain, e.Dest, e.Err, e.Domain, e.Disk)
	if e.Cleanup != "" {
		s += ", then remove it with `" + e.Cleanup + "`"
	}
	return s
}

func (e *BlockJobRunningError) Unwrap() error { return e.Err }

// endBlockJob ends the block job on disk of domain domainID (name or UUID) without pivot
// (the domain stays on its own disk) and makes sure it is gone: the abort is sent again,
// with pauses, until libvirt reports no job on the disk. An abort can fail without saying
// anything about the job — its answer lost with the connection, the daemon restarting or
// busy — and a job left running keeps writing into its destination, which the caller
// would then delete. It works on its own deadline (blockJobAbortBudget), not the
// caller's: the caller's may be what ran out (Ctrl-C, a timeout).
//
// first is the first abort's own error: nil when libvirt accepted it at once (the job was
// then ended right there). err is nil once the job is gone, else the last failure.
func (c *Client) endBlockJob(ctx context.Context, domainID, disk, op string) (first, err error) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), blockJobAbortBudget)
	defer cancel()
	attempt := 0
	perr := poll.Until(actx, poll.Options{Every: 250 * time.Millisecond, Max: rpc.SettleWaitMax}, func(actx context.Context) (bool, error) {
		attempt++
		aerr := c.Write(actx, "abort the "+op, func(l *golibvirt.Libvirt) error {
			d, err := LookupDomainOn(l, domainID)
			if err != nil {
				return err
			}
			return l.DomainBlockJobAbort(d, disk, 0)
		})
		if attempt == 1 {
			first = aerr
		}
		gone, gerr := c.blockJobGone(actx, domainID, disk, op)
		if gone {
			return true, nil
		}
		err = errors.Join(aerr, gerr)
		if err == nil {
			err = fmt.Errorf("%s: libvirt still reports the job after it accepted the abort", op)
		}
		return false, nil
	})
	if perr != nil {
		return first, fmt.Errorf("%w (gave up after %d aborts in %s)", err, attempt, blockJobAbortBudget)
	}
	return first, nil
}

// blockJobGone reports whether libvirt says there is no block job on disk of domain
// domainID any more: none reported, the domain not running (QEMU, and its jobs, ended),
// or the domain gone.
func (c *Client) blockJobGone(ctx context.Context, domainID, disk, op string) (bool, error) {
	var found int32
	err := c.Read(ctx, "look for the "+op, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, domainID)
		if err != nil {
			return err
		}
		found, _, _, _, _, err = l.DomainGetBlockJobInfo(d, disk, 0)
		return err
	})
	switch {
	case err == nil:
		return found == 0, nil
	case errors.Is(err, ErrNotFound), HasCode(err, golibvirt.ErrOperationInvalid):
		return true, nil
	}
	return false, err
}
