package libvirt

import (
	"context"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
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
// last state seen.
func (c *Client) waitState(ctx context.Context, id, want string, timeout time.Duration) (string, bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		s, err := c.DomainState(ctx, id)
		if err != nil {
			return s, false, err
		}
		if s == want {
			return s, true, nil
		}
		if !time.Now().Before(deadline) {
			return s, false, nil
		}
		select {
		case <-ctx.Done():
			return s, false, ctx.Err()
		case <-time.After(powerPoll):
		}
	}
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

// ShutdownDomainGraceful sends a graceful shutdown request (guest agent or ACPI power
// button, as libvirt chooses) and waits up to timeout for the domain to be shut off. It
// never forces: a guest that does not stop is an *ShutdownTimeoutError. A domain that is
// already shut off is left alone.
func (c *Client) ShutdownDomainGraceful(ctx context.Context, id string, timeout time.Duration) error {
	s, err := c.DomainState(ctx, id)
	if err != nil || s == "shutoff" {
		return err
	}
	if err := c.onDomain(ctx, "shut down", id, func(l *golibvirt.Libvirt, d Domain) error {
		err := l.DomainShutdownFlags(d, golibvirt.DomainShutdownDefault)
		if HasCode(classify("", "", err), golibvirt.ErrOperationInvalid) && !isActive(l, d) {
			return nil // it stopped meanwhile
		}
		return err
	}); err != nil {
		return err
	}
	s, ok, err := c.waitState(ctx, id, "shutoff", timeout)
	if err != nil {
		return err
	}
	if !ok {
		return &ShutdownTimeoutError{Domain: id, Timeout: timeout, State: s}
	}
	return nil
}

// DestroyDomain forces a domain off at once (virsh destroy). One that is not running is
// left alone.
func (c *Client) DestroyDomain(ctx context.Context, id string) error {
	return c.onDomain(ctx, "force off", id, func(l *golibvirt.Libvirt, d Domain) error {
		err := l.DomainDestroy(d)
		if HasCode(classify("", "", err), golibvirt.ErrOperationInvalid) && !isActive(l, d) {
			return nil
		}
		return err
	})
}
