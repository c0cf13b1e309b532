package libvirt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
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
	Domain   string
	Err      error         // the last attempt's
	Attempts int           // thaws sent
	Took     time.Duration // from the first to the last
}

func (e *GuestFrozenError) Error() string {
	reason := errMessage(e.Err) // libvirt's words, without the op the prefix says already
	if reason == "" {
		reason = e.Err.Error()
	}
	return fmt.Sprintf("thaw the filesystems of domain %s: sent %d times over %s, the last: %s (the guest may still be frozen, its writes hang: "+
		"thaw it by hand with `virsh domfsthaw %s`)", e.Domain, e.Attempts, e.Took.Round(time.Second), reason, e.Domain)
}

func (e *GuestFrozenError) Unwrap() error { return e.Err }

// FreezeDuring freezes the filesystems of the running domain dom through its guest agent
// (virDomainFSFreeze), runs fn, and thaws them again (virDomainFSThaw) — always once the
// freeze was sent: also when fn fails, when ctx is cancelled (the thaw has a deadline of
// its own), and when the freeze failed in any way other than libvirt refusing it before
// anything reached the guest (freezeNotSent): a freeze whose answer was lost or timed out,
// or whose agent died under it, may have frozen the guest. fn is not run when the freeze
// fails: a guest whose agent is missing or silent gives an error saying so (wrapping
// ErrGuestAgent), never an unquiesced copy. The thaw goes on a connection of its own
// (fsThaw), never queued behind the copy on the shared pool; each attempt and its result
// go to logf (nil: not logged). A thaw that fails is a *GuestFrozenError. fn's error
// comes first.
func (c *Client) FreezeDuring(ctx context.Context, dom Domain, logf func(string, map[string]any), fn func() error) error {
	freeze := func(ctx context.Context) error {
		return c.Write(ctx, "freeze the filesystems of domain "+dom.Name, func(l *golibvirt.Libvirt) error {
			_, err := l.DomainFsfreeze(dom, nil, 0)
			return err
		})
	}
	thaw := func(ctx context.Context) error { return c.fsThaw(ctx, dom) }
	return freezeDuring(ctx, dom.Name, logOrNop(logf), freeze, thaw, fn)
}

// fsThaw thaws dom's filesystems on a connection dialled for it alone
// (rpc.Client.Dedicated), not a pooled one: the pool's max_connections may all be held by
// the copy the freeze was for (a download stream, block job polls, other resources'
// calls), and a guest left frozen behind them hangs its writes. A fresh connection also
// survives the pooled ones being dropped mid-copy. A guest already thawed is fine
// (libvirt then reports 0 filesystems thawed).
func (c *Client) fsThaw(ctx context.Context, dom Domain) error {
	return c.rpc.Dedicated(ctx, "thaw the filesystems of domain "+dom.Name, func(l *golibvirt.Libvirt) error {
		_, err := l.DomainFsthaw(dom, nil, 0)
		return err
	})
}

// thawNow is fsThaw on its own deadline (the caller's may have ended), sent again as
// thawAgain says; its failure is a *GuestFrozenError.
func (c *Client) thawNow(ctx context.Context, dom Domain, logf func(string, map[string]any)) error {
	return thawAgain(ctx, dom.Name, logOrNop(logf), func(ctx context.Context) error { return c.fsThaw(ctx, dom) })
}

// thawAnswers: a thaw the agent answered with an error is sent once more. qemu-ga thaws
// the filesystems before it runs its thaw hook, and a hook that fails fails the thaw: a
// second thaw finds them thawed and runs the hook again (a hook that failed once, e.g. a
// database slow to take writes again, then passes; the tiny guest's fail-thaw-once shows
// it). A thaw that did not reach the agent (agentUnreached) does not count: it is sent
// again until thawTimeout.
const thawAnswers = 2

// agentUnreached reports whether err says a thaw may not have reached a working agent:
// the connection to the daemon failed or timed out, or libvirt says the agent is not
// connected, not responding, timed out or out of sync (it died, or is restarting: the
// tiny guest's init and systemd restart qemu-ga, and a qemu-ga started after dying frozen
// starts in its frozen state and takes the thaw).
func agentUnreached(err error) bool {
	if IsTransport(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch errCode(err) {
	case golibvirt.ErrAgentUnresponsive, golibvirt.ErrAgentUnsynced, golibvirt.ErrAgentCommandTimeout:
		return true
	}
	return false
}

// thawAgain runs thaw on its own deadline of thawTimeout, a thawRetryPause apart: until it
// works, the agent has answered it with an error thawAnswers times, or the deadline
// passes (an agent that died with the guest frozen and is not started again). Each
// attempt is logged. Its failure is a *GuestFrozenError.
func thawAgain(ctx context.Context, domain string, logf func(string, map[string]any), thaw func(context.Context) error) error {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), thawTimeout)
	defer cancel()
	start := time.Now()
	attempts, answers := 0, 0
	var last error
	err := poll.Until(tctx, poll.Options{Every: thawRetryPause}, func(ctx context.Context) (bool, error) {
		attempts++
		last = thaw(ctx)
		fields := map[string]any{"domain": domain, "attempt": attempts, "elapsed_ms": time.Since(start).Milliseconds()}
		if last == nil {
			logf("guest filesystems thawed", fields)
			return true, nil
		}
		fields["error"] = last.Error()
		if !agentUnreached(last) {
			answers++
			if answers == thawAnswers {
				logf("thaw failed: the guest agent answered with an error again; giving up", fields)
				return false, last
			}
			logf("thaw failed: the guest agent answered with an error; sending it again", fields)
			return false, nil
		}
		if tctx.Err() != nil {
			logf("thaw failed: the guest agent was not reached and the thaw's deadline has passed; giving up", fields)
			return false, last
		}
		logf("thaw failed: the guest agent was not reached; sending it again until the thaw's deadline", fields)
		return false, nil
	})
	if err == nil {
		return nil
	}
	if last == nil {
		last = err
	}
	return &GuestFrozenError{Domain: domain, Err: last, Attempts: attempts, Took: time.Since(start)}
}

// thawRetryPause is the pause before a thaw is sent again (a variable for the unit tests).
var thawRetryPause = time.Second

// freezeNotSent reports whether a failed freeze was refused by libvirt before anything
// reached the guest: the domain has no agent channel (argument unsupported), is not
// running or not there, or libvirt has no agent connected (its "QEMU guest agent is not
// connected", said before any command is sent). Any other failure — the agent not
// responding, a command timeout, an agent out of sync, a lost connection, the agent's own
// error — may come after the freeze reached the guest, which may then be frozen.
func freezeNotSent(err error) bool {
	switch errCode(err) {
	case golibvirt.ErrArgumentUnsupported, golibvirt.ErrOperationInvalid, golibvirt.ErrNoDomain:
		return true
	case golibvirt.ErrAgentUnresponsive:
		return strings.Contains(errMessage(err), "guest agent is not connected")
	}
	return false
}

// errMessage is libvirt's message in err ("" when there is none).
func errMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	var g golibvirt.Error
	if errors.As(err, &g) {
		return g.Message
	}
	return ""
}

// freezeDuring is FreezeDuring's order of things, apart from libvirt (unit-tested).
func freezeDuring(ctx context.Context, domain string, logf func(string, map[string]any), freeze, thaw func(context.Context) error, fn func() error) error {
	thawNow := func() error { return thawAgain(ctx, domain, logf, thaw) }
	if err := freeze(ctx); err != nil {
		ferr := freezeError(domain, err)
		if freezeNotSent(err) {
			return ferr
		}
		// The freeze reached the guest, or may have: it may be frozen all the same. Thaw,
		// make no copy.
		logf("freeze failed after it may have reached the guest: thawing it", map[string]any{"domain": domain, "error": err.Error()})
		if terr := thawNow(); terr != nil {
			return fmt.Errorf("%w; %w", ferr, terr)
		}
		return fmt.Errorf("%w; the guest was thawed after", ferr)
	}
	logf("guest filesystems frozen", map[string]any{"domain": domain})
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
