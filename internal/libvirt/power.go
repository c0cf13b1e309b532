package libvirt

import (
	"context"
	"errors"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// powerPoll is how often the power operations look at a domain's state while waiting.
var powerPoll = 500 * time.Millisecond

// DomainState reads a domain's state name (running, shutoff, ...).
func (c *Client) DomainState(ctx context.Context, id string) (string, error) {
	var s string
	err := c.Read(ctx, "read state of domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		state, _, err := l.DomainGetState(d, 0)
		s = DomainStateName(state)
		return err
	})
	return s, err
}

// waitState polls until the domain is in state want or timeout passes; it reports the
// last state seen and whether it was want.
func (c *Client) waitState(ctx context.Context, id, want string, timeout time.Duration) (string, bool, error) {
	last := ""
	err := poll.Until(ctx, poll.Options{Every: powerPoll, Timeout: timeout}, func(ctx context.Context) (bool, error) {
		s, err := c.DomainState(ctx, id)
		last = s
		return s == want, err
	})
	if errors.Is(err, poll.ErrTimeout) {
		return last, false, nil
	}
	return last, err == nil, err
}

func (c *Client) onDomain(ctx context.Context, op, id string, fn func(*golibvirt.Libvirt, Domain) error) error {
	return c.Write(ctx, op+" domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		return fn(l, d)
	})
}

// RebootDomain asks the guest to reboot (libvirt's default method: the guest agent when
// the domain has its channel, else ACPI) and waits up to timeout for the domain to be
// running again.
func (c *Client) RebootDomain(ctx context.Context, id string, timeout time.Duration) error {
	if err := c.onDomain(ctx, "reboot", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainReboot(d, golibvirt.DomainRebootDefault)
	}); err != nil {
		return err
	}
	s, ok, err := c.waitState(ctx, id, "running", timeout)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("domain %s was asked to reboot but is not running again after %s (state %s)", id, timeout, s)
	}
	return nil
}

// ResetDomain resets a running domain at once, like the reset button: no guest shutdown.
func (c *Client) ResetDomain(ctx context.Context, id string) error {
	return c.onDomain(ctx, "reset", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainReset(d, 0)
	})
}

// ShutdownTimeoutError is returned by ShutdownDomainGraceful when the guest did not stop.
type ShutdownTimeoutError struct {
	Domain  string
	Timeout time.Duration
	State   string
}

func (e *ShutdownTimeoutError) Error() string {
	return fmt.Sprintf("domain %s did not shut off within %s after a graceful shutdown request (state %s): "+
		"the guest ignored the ACPI power button / guest agent. It was not forced off; use action = \"destroy\" "+
		"to force it, or a longer timeout", e.Domain, e.Timeout, e.State)
}

// ShutdownDomain stops a domain: a graceful shutdown request, waiting up to timeout,
// then a forced power-off (at once when timeout is 0, or when libvirt refuses the
// request: no ACPI, an unresponsive agent). A domain that is not running is left alone.
// It reports whether the force was needed.
func (c *Client) ShutdownDomain(ctx context.Context, id string, timeout time.Duration) (forced bool, err error) {
	return c.shutdown(ctx, id, timeout, true)
}

// ShutdownDomainGraceful is ShutdownDomain that never forces: a guest that does not
// stop within timeout is a *ShutdownTimeoutError.
func (c *Client) ShutdownDomainGraceful(ctx context.Context, id string, timeout time.Duration) error {
	_, err := c.shutdown(ctx, id, timeout, false)
	return err
}

// shutdown is the one shutdown state machine: running → (graceful request) → wait for
// shutoff → (with force) forced off.
func (c *Client) shutdown(ctx context.Context, id string, timeout time.Duration, force bool) (bool, error) {
	s, err := c.DomainState(ctx, id)
	if err != nil || s == "shutoff" {
		return false, err
	}
	if timeout > 0 || !force {
		err := c.onDomain(ctx, "shut down", id, func(l *golibvirt.Libvirt, d Domain) error {
			err := l.DomainShutdownFlags(d, golibvirt.DomainShutdownDefault)
			if HasCode(classify("", "", err), golibvirt.ErrOperationInvalid) && !isActive(l, d) {
				return nil // it stopped meanwhile
			}
			return err
		})
		switch {
		case err != nil && !force:
			return false, err
		case err == nil, IsTransport(err):
			// A request whose answer was lost (the connection broke under it) may have
			// reached the guest: it is waited for like one that was answered, and the force
			// below ends the wait either way. It is not sent again: a guest already shutting
			// down may refuse a second one, which would force it off at once.
			var ok bool
			if s, ok, err = c.waitState(ctx, id, "shutoff", timeout); err != nil || ok {
				return false, err
			}
			if !force {
				return false, &ShutdownTimeoutError{Domain: id, Timeout: timeout, State: s}
			}
		}
		// A request libvirt refused leaves nothing to wait for: force at once.
	}
	return true, c.DestroyDomain(ctx, id)
}

// DestroyDomain forces a domain off at once (virsh destroy). One that is not running is
// left alone.
//
// Forcing off is idempotent in effect once the domain is looked at again, so a call whose
// connection broke under it (libvirtd restarted, the link dropped, the daemon closed the
// connection: go-libvirt's "procedure interrupted while awaiting response") is settled
// rather than reported: once the daemon answers again the domain is looked up anew and
// forced off unless it is off already. Off already, or gone (a transient domain the lost
// call did destroy), is success; a domain that was never there is still ErrNotFound.
func (c *Client) DestroyDomain(ctx context.Context, id string) error {
	sent := false // a destroy went out on an earlier attempt whose connection then broke
	return c.writeSettled(ctx, "force off domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			if sent && isNotFound(err) {
				return nil // the lost call destroyed a transient domain
			}
			return err
		}
		sent = true
		err = l.DomainDestroy(d)
		if HasCode(classify("", "", err), golibvirt.ErrOperationInvalid) && !isActive(l, d) {
			return nil
		}
		return err
	})
}

// SuspendDomain pauses a running domain's vCPUs; ResumeDomain lets it run again.
func (c *Client) SuspendDomain(ctx context.Context, id string) error {
	return c.onDomain(ctx, "suspend", id, func(l *golibvirt.Libvirt, d Domain) error { return l.DomainSuspend(d) })
}

func (c *Client) ResumeDomain(ctx context.Context, id string) error {
	return c.onDomain(ctx, "resume", id, func(l *golibvirt.Libvirt, d Domain) error { return l.DomainResume(d) })
}
