package libvirt

import (
	"context"
	"errors"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// Quiescing: the guest agent freezes the guest's filesystems (guest-fsfreeze-freeze,
// which flushes them and blocks new writes) for the instant a copy point is taken, so the
// copy holds filesystems as cleanly unmounted ones, not as after a power cut.

// thawTimeout bounds the thaw that always follows a freeze: on its own deadline, so a
// cancelled or expired caller still thaws the guest.
var thawTimeout = 30 * time.Second

// ErrGuestAgent marks a quiesce refused because the domain's guest agent does not work:
// the copy was not made.
var ErrGuestAgent = errors.New("guest agent not available")

// GuestFrozenError is a thaw that failed: the guest's filesystems may still be frozen
// (its writes then hang) until someone thaws them.
type GuestFrozenError struct {
	Domain string
	Err    error
}

func (e *GuestFrozenError) Error() string {
	return fmt.Sprintf("thaw the filesystems of domain %s: %v (the guest may still be frozen, its writes hang: "+
		"thaw it by hand with `virsh domfsthaw %s`)", e.Domain, e.Err, e.Domain)
}

func (e *GuestFrozenError) Unwrap() error { return e.Err }

// FreezeDuring freezes the filesystems of the running domain dom through its guest agent
// (virDomainFSFreeze), runs fn, and thaws them again (virDomainFSThaw) — always once the
// freeze may have happened: also when fn fails and when ctx is cancelled (the thaw has
// its own short deadline). fn is not run when the freeze fails: a guest whose agent is
// missing or silent gives an error saying so (wrapping ErrGuestAgent), never an
// unquiesced copy. A thaw that fails is a *GuestFrozenError. fn's error comes first.
func (c *Client) FreezeDuring(ctx context.Context, dom Domain, fn func() error) error {
	freeze := func(ctx context.Context) error {
		return c.Write(ctx, "freeze the filesystems of domain "+dom.Name, func(l *golibvirt.Libvirt) error {
			_, err := l.DomainFsfreeze(dom, nil, 0)
			return err
		})
	}
	thaw := func(ctx context.Context) error { return c.fsThaw(ctx, dom) }
	return freezeDuring(ctx, dom.Name, freeze, thaw, fn)
}

// fsThaw thaws dom's filesystems; a guest already thawed is fine (libvirt then reports 0
// filesystems thawed).
func (c *Client) fsThaw(ctx context.Context, dom Domain) error {
	return c.Write(ctx, "thaw the filesystems of domain "+dom.Name, func(l *golibvirt.Libvirt) error {
		_, err := l.DomainFsthaw(dom, nil, 0)
		return err
	})
}

// thawNow is fsThaw on its own short deadline (the caller's may have ended), tried again
// once (thawAgain); its failure is a *GuestFrozenError.
func (c *Client) thawNow(ctx context.Context, dom Domain) error {
	return thawAgain(ctx, dom.Name, func(ctx context.Context) error { return c.fsThaw(ctx, dom) })
}

// thawAttempts: a thaw that fails is sent once more. qemu-ga thaws the filesystems before
// it runs its thaw hook, and a hook that fails fails the thaw: a second thaw finds them
// thawed and runs the hook again (a hook that failed once, e.g. a database slow to take
// writes again, then passes; the tiny guest's fail-thaw-once shows it).
const thawAttempts = 2

// thawAgain runs thaw on its own deadline of thawTimeout, up to thawAttempts times a
// second apart; its failure is a *GuestFrozenError.
func thawAgain(ctx context.Context, domain string, thaw func(context.Context) error) error {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), thawTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := thaw(tctx)
		if err == nil {
			return nil
		}
		if attempt == thawAttempts {
			return &GuestFrozenError{Domain: domain, Err: err}
		}
		select {
		case <-tctx.Done():
			return &GuestFrozenError{Domain: domain, Err: err}
		case <-time.After(thawRetryPause):
		}
	}
}

// thawRetryPause is the pause before a thaw is sent again (a variable for the unit tests).
var thawRetryPause = time.Second

// freezeDuring is FreezeDuring's order of things, apart from libvirt (unit-tested).
func freezeDuring(ctx context.Context, domain string, freeze, thaw func(context.Context) error, fn func() error) error {
	thawNow := func() error { return thawAgain(ctx, domain, thaw) }
	if err := freeze(ctx); err != nil {
		ferr := freezeError(domain, err)
		if IsTransport(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// The answer was lost: the guest may be frozen all the same. Thaw, make no copy.
			if terr := thawNow(); terr != nil {
				return fmt.Errorf("%w; %w", ferr, terr)
			}
		}
		return ferr
	}
	ferr := fn()
	if terr := thawNow(); terr != nil {
		if ferr != nil {
			return fmt.Errorf("%w; %w", ferr, terr)
		}
		return terr
	}
	return ferr
}

// freezeError says in a user's words why a freeze failed. libvirt's codes: the agent
// channel is not in the domain (argument unsupported), the agent does not answer
// (unresponsive, timeout), or the agent refused the command.
func freezeError(domain string, err error) error {
	if agentMissing(err) {
		return fmt.Errorf("%w: domain %s: the guest's filesystems could not be frozen, so no copy was made: %s (%w)",
			ErrGuestAgent, domain, needAgent, err)
	}
	return fmt.Errorf("freeze the filesystems of domain %s: %w (no copy was made; %s)", domain, err, needAgent)
}

const needAgent = "quiesce needs the QEMU guest agent running in the guest (the qemu-guest-agent package) " +
	"and a virtio channel named org.qemu.guest_agent.0 in the domain"

// requireAgent fails (ErrGuestAgent) unless the running domain dom has the agent channel
// and libvirt sees its agent connected — from the live XML, so no agent command runs
// (nothing is frozen, no hook runs). A quiesced export checks it before it copies a whole
// disk only to find no agent at the end.
func (c *Client) requireAgent(ctx context.Context, dom Domain) error {
	var live string
	err := c.Read(ctx, "read domain "+dom.Name, func(l *golibvirt.Libvirt) error {
		var err error
		live, err = l.DomainGetXMLDesc(dom, 0)
		return err
	})
	if err != nil {
		return err
	}
	p, err := domainxml.Parse(live)
	switch {
	case err != nil:
		return err
	case !p.Spec.QemuAgent:
		return fmt.Errorf("%w: domain %s has no guest agent channel, so its filesystems cannot be frozen and no copy was made: %s",
			ErrGuestAgent, dom.Name, needAgent)
	case !p.AgentConnected:
		return fmt.Errorf("%w: domain %s: its guest agent is not connected (not running in the guest?), so the filesystems "+
			"cannot be frozen and no copy was made: %s", ErrGuestAgent, dom.Name, needAgent)
	}
	return nil
}

// agentMissing reports whether err says the domain's guest agent is absent or silent.
func agentMissing(err error) bool {
	switch errCode(err) {
	case golibvirt.ErrAgentUnresponsive, golibvirt.ErrAgentUnsynced, golibvirt.ErrAgentCommandTimeout,
		golibvirt.ErrArgumentUnsupported:
		return true
	}
	return false
}

// errCode is libvirt's error number in err, whether err was classified (*Error, outside
// Read/Write) or is raw (golibvirt.Error, inside their callbacks); -1 when there is none.
func errCode(err error) golibvirt.ErrorNumber {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return lvCode(err)
}

// GuestFSFreezeStatus is what the guest agent of domain id (UUID or name) says of its
// filesystems: "thawed" or "frozen" (guest-fsfreeze-status; for tests and diagnostics).
func (c *Client) GuestFSFreezeStatus(ctx context.Context, id string) (string, error) {
	dom, err := c.LookupDomain(ctx, id)
	if err != nil {
		return "", err
	}
	var status string
	err = c.agent(ctx, dom, map[string]any{"execute": "guest-fsfreeze-status"}, 5*time.Second, &status)
	return status, err
}
