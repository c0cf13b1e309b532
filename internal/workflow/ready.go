package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
	"github.com/kvmforge/terraform-provider-libvirt/internal/redact"
)

// ReadyAPI is what waiting for a guest to be ready asks of libvirt: the guest agent.
type ReadyAPI interface {
	PingDomainAgent(ctx context.Context, id string) error
	ExecInDomain(ctx context.Context, id string, limit time.Duration, path string, args ...string) (string, int, error)
}

// Console is the guest's recent console output (libvirt.ConsoleWatch): the last n lines,
// or why the console could not be read.
type Console interface {
	Tail(n int) ([]string, error)
}

// ConsoleTailLines is how many console lines a failed wait quotes.
const ConsoleTailLines = 20

// Ready is one wait_for_ready: the agent answers guest-ping, then Command (when set) run
// through the agent exits 0, all within Timeout.
type Ready struct {
	ID, Name string
	Timeout  time.Duration
	Command  []string
	// Every is the pause between attempts (default 2 s).
	Every time.Duration
}

// agentPingLimit bounds one guest-ping.
const agentPingLimit = 5 * time.Second

// WaitReady waits until the guest agent of the domain answers and then until Command
// exits 0. Agent errors (no agent yet, guest-exec refused) are retried until Timeout; a
// command that runs and exits non-zero is the guest's answer and fails at once, not
// retried: a readiness command such as `cloud-init status --wait` blocks by itself until
// it knows, and a non-zero exit means "failed", not "not yet". The command may run until
// the timeout. A failure quotes the tail of console, when given.
func WaitReady(ctx context.Context, api ReadyAPI, r Ready, console Console) error {
	every := r.Every
	if every <= 0 {
		every = 2 * time.Second
	}
	deadline := time.Now().Add(r.Timeout)
	var last error
	err := poll.Until(ctx, poll.Options{Every: every, Timeout: r.Timeout}, func(ctx context.Context) (bool, error) {
		pctx, cancel := context.WithTimeout(ctx, min(agentPingLimit, max(time.Until(deadline), time.Millisecond)))
		defer cancel()
		err := api.PingDomainAgent(pctx, r.ID)
		if err == nil || last == nil || pctx.Err() == nil {
			last = err // (a ping cut short by the deadline says less than the one before)
		}
		return err == nil, nil
	})
	if err != nil {
		why := "did not answer guest-ping"
		if last != nil {
			why += " (last: " + oneLine(last.Error()) + ")"
		}
		return WithConsoleTail(waitError(ctx, err, "domain %s: the guest agent %s within %s", r.Name, why, r.Timeout), console)
	}
	if len(r.Command) == 0 {
		return nil
	}
	cmd := strings.Join(r.Command, " ")
	var out string
	var code int
	last = nil
	err = poll.Until(ctx, poll.Options{Every: every, Timeout: time.Until(deadline)}, func(ctx context.Context) (bool, error) {
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil // poll.Until reports the timeout
		}
		out, code, last = api.ExecInDomain(ctx, r.ID, left, r.Command[0], r.Command[1:]...)
		return last == nil, nil
	})
	switch {
	case err != nil:
		why := "did not complete"
		if last != nil {
			why += " (last: " + oneLine(last.Error()) + ")"
		}
		return WithConsoleTail(waitError(ctx, err, "domain %s: wait_for_ready command %q %s within %s", r.Name, cmd, why, r.Timeout), console)
	case code != 0:
		msg := fmt.Sprintf("domain %s: wait_for_ready command %q exited %d", r.Name, cmd, code)
		if out != "" {
			msg += "; its output:\n" + strings.Join(redact.Lines(strings.Split(lastBytes(out, 2000), "\n")), "\n")
		}
		return WithConsoleTail(errors.New(msg), console)
	}
	return nil
}

// waitError is the message of a wait that timed out, or the context's end.
func waitError(ctx context.Context, err error, format string, args ...any) error {
	if ctx.Err() != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	return fmt.Errorf(format+". The domain was created or updated and stays in state; change wait_for_ready, or see why the guest is not ready", args...)
}

// WithConsoleTail adds the last lines the guest wrote on its console to err (nil stays
// nil; a nil console adds nothing), or, when the console could not be read, why. What
// looks like a secret in them (a password, token or key after its name, cloud-init's
// chpasswd and random passwords, key blocks and fingerprints, URL credentials) is masked
// (redact.Lines): the error goes to the terminal, CI logs and tickets.
func WithConsoleTail(err error, console Console) error {
	if err == nil || console == nil {
		return err
	}
	lines, cerr := console.Tail(ConsoleTailLines)
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:] // a blank line opening the quote says nothing
	}
	switch {
	case cerr != nil:
		return fmt.Errorf("%w\n(no console output: %s)", err, oneLine(cerr.Error()))
	case len(lines) == 0:
		return fmt.Errorf("%w\n(the guest wrote nothing on its console while it was waited for)", err)
	}
	return fmt.Errorf("%w\nLast %d lines of the guest's console:\n%s", err, len(lines), strings.Join(redact.Lines(lines), "\n"))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
