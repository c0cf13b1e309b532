package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// partSet is a set of a machine's parts.
type partSet int

const (
	partDomain partSet = 1 << iota
	partRoot
	partSeed
	partReservation
	partsAll = partDomain | partRoot | partSeed | partReservation
)

// names lists the parts of s, as messages name them.
func (p MachineParts) names(s partSet) string {
	var out []string
	if s&partRoot != 0 {
		out = append(out, "volume "+p.Pool+"/"+p.Root)
	}
	if s&partSeed != 0 {
		out = append(out, "volume "+p.Pool+"/"+p.Seed)
	}
	if s&partReservation != 0 {
		out = append(out, "DHCP reservation of "+p.MAC+" in network "+p.Network)
	}
	if s&partDomain != 0 {
		out = append(out, "domain "+p.Domain)
	}
	return strings.Join(out, ", ")
}

// removeParts removes the named parts in dependency order (domain, volumes, reservation);
// a part already gone counts as removed. It tries every part and reports every failure.
func removeParts(ctx context.Context, api MachineAPI, p MachineParts, which partSet) error {
	var errs []error
	for _, f := range removeEach(ctx, api, p, which) {
		errs = append(errs, f.err)
	}
	return errors.Join(errs...)
}

// partFailure is a part that could not be removed, and why.
type partFailure struct {
	part partSet
	err  error
}

// removeEach is removeParts that reports each part it could not remove, in order.
func removeEach(ctx context.Context, api MachineAPI, p MachineParts, which partSet) []partFailure {
	var out []partFailure
	gone := func(part partSet, what string, err error) {
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			out = append(out, partFailure{part, fmt.Errorf("%s: %w", what, err)})
		}
	}
	if which&partDomain != 0 {
		_, err := api.ShutdownDomain(ctx, p.DomainID(), MachineShutdownTimeout)
		if err == nil {
			err = api.UndefineDomain(ctx, p.DomainID())
		}
		gone(partDomain, "remove domain "+p.Domain, err)
	}
	if which&partRoot != 0 {
		gone(partRoot, "delete volume "+p.Pool+"/"+p.Root, api.DeleteVolume(ctx, libvirt.VolumeRef{Pool: p.Pool, Name: p.Root}))
	}
	if which&partSeed != 0 {
		gone(partSeed, "delete volume "+p.Pool+"/"+p.Seed, api.DeleteVolume(ctx, libvirt.VolumeRef{Pool: p.Pool, Name: p.Seed}))
	}
	if which&partReservation != 0 {
		gone(partReservation, "remove the DHCP reservation of "+p.MAC+" in network "+p.Network, ReleaseAddress(ctx, api, p.Network, p.MAC))
	}
	return out
}

// machineRollbackBudget bounds a rollback, waits for the daemon included.
const machineRollbackBudget = 3 * time.Minute

// rollbackWaitMax is the longest pause between two rounds of a rollback that waits for
// the daemon to answer again.
const rollbackWaitMax = 5 * time.Second

// removeSettled is removeParts for a rollback: the parts whose removal failed on the
// connection (the daemon restarting, a dropped link: often what failed the create too)
// are tried again, with pauses, until ctx ends or stop closes. A rollback that gave up at
// once would leave exactly what it is there to remove. libvirt's own refusals are not
// retried.
func removeSettled(ctx context.Context, stop <-chan struct{}, api MachineAPI, p MachineParts, which partSet, log Logf) error {
	// The pauses end with ctx or stop; the removals themselves run on ctx alone.
	wait, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-wait.Done():
		}
	}()
	var final, last []error
	_ = poll.Until(wait, poll.Options{Every: 500 * time.Millisecond, Max: rollbackWaitMax}, func(context.Context) (bool, error) {
		var retry partSet
		last = nil
		for _, f := range removeEach(ctx, api, p, which) {
			if libvirt.IsTransport(f.err) && ctx.Err() == nil {
				retry |= f.part
				last = append(last, f.err)
			} else {
				final = append(final, f.err)
			}
		}
		if retry != 0 {
			log.log("rollback: the daemon does not answer; trying again", map[string]any{"parts": p.names(retry)})
		}
		which = retry
		return retry == 0, nil
	})
	return errors.Join(append(final, last...)...)
}

// unknownOutcome reports whether a write that failed with err may have been carried out
// all the same: the connection broke under it (the daemon may have done it and lost the
// answer), or the create's context ended while it was in flight. What such a step makes
// goes into the rollback, which takes a part that is not there as removed.
func unknownOutcome(ctx context.Context, err error) bool {
	return libvirt.IsTransport(err) || ctx.Err() != nil
}

// rollbackMachine removes what a failed create made (made) or may have made (unsure:
// the step whose answer was lost), on a deadline of its own (the create's may be what ran
// out), and returns the error to report: the failed step, then what was removed or what
// could not be. After Ctrl-C (ctx cancelled, not timed out) it makes one round and does
// not wait for an unreachable daemon.
func rollbackMachine(ctx context.Context, api MachineAPI, p MachineParts, made, unsure partSet, step string, cause error, log Logf) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), machineRollbackBudget)
	defer cancel()
	stop := make(chan struct{})
	defer context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			close(stop)
		}
	})()
	unsure &^= made
	if made|unsure == 0 {
		return fmt.Errorf("%s failed: %w. Nothing was left on the host", step, cause)
	}
	var what []string
	if made != 0 {
		what = append(what, "what this create had made: "+p.names(made))
	}
	if unsure != 0 {
		what = append(what, "what it may have made (the answer to that step was lost): "+p.names(unsure))
	}
	names := strings.Join(what, "; ")
	if err := removeSettled(rctx, stop, api, p, made|unsure, log); err != nil {
		return fmt.Errorf("%s failed: %w. Rolling back failed too (it was removing %s); remove what is left by hand: %w", step, cause, names, err)
	}
	return fmt.Errorf("%s failed: %w. Rolled back %s", step, cause, names)
}
