package libvirt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// The QEMU guest agent, reached through libvirt (virDomainQemuAgentCommand): one command
// at a time, and guest-exec for running a program in the guest.

// agentReply is the envelope of every agent answer.
type agentReply struct {
	Return json.RawMessage `json:"return"`
}

// agent runs one guest-agent command and decodes its "return" into out.
func (c *Client) agent(ctx context.Context, dom golibvirt.Domain, cmd any, timeout time.Duration, out any) error {
	b, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	var reply golibvirt.OptString
	err = c.Write(ctx, "guest agent command on domain "+dom.Name, func(l *golibvirt.Libvirt) error {
		var err error
		reply, err = l.QEMUDomainAgentCommand(dom, string(b), int32(timeout/time.Second), 0)
		return err
	})
	if err != nil {
		return err
	}
	if len(reply) == 0 {
		return fmt.Errorf("guest agent on domain %s returned nothing", dom.Name)
	}
	var r agentReply
	if err := json.Unmarshal([]byte(reply[0]), &r); err != nil {
		return fmt.Errorf("guest agent reply %q: %w", reply[0], err)
	}
	return json.Unmarshal(r.Return, out)
}

// GuestExec runs a program in the guest through the QEMU guest agent (guest-exec, then
// guest-exec-status until it exits, 90 s at most) and returns its output (stdout then
// stderr) and exit code.
func (c *Client) GuestExec(ctx context.Context, dom golibvirt.Domain, path string, args ...string) (string, int, error) {
	return c.guestExec(ctx, dom, 90*time.Second, path, args...)
}

// guestExec is GuestExec waiting up to limit for the program to exit.
func (c *Client) guestExec(ctx context.Context, dom golibvirt.Domain, limit time.Duration, path string, args ...string) (string, int, error) {
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var started struct {
		PID int `json:"pid"`
	}
	err := c.agent(actx, dom, map[string]any{
		"execute": "guest-exec",
		"arguments": map[string]any{
			"path":           path,
			"arg":            args,
			"capture-output": true,
		},
	}, 10*time.Second, &started)
	if err != nil {
		return "", 0, err
	}
	var out string
	var code int
	waited := true // false once a status call itself failed
	err = poll.Until(actx, poll.Options{Every: 500 * time.Millisecond}, func(actx context.Context) (bool, error) {
		var st struct {
			Exited   bool   `json:"exited"`
			ExitCode int    `json:"exitcode"`
			OutData  string `json:"out-data"`
			ErrData  string `json:"err-data"`
		}
		if err := c.agent(actx, dom, map[string]any{"execute": "guest-exec-status", "arguments": map[string]any{"pid": started.PID}}, 10*time.Second, &st); err != nil {
			waited = false
			return false, err
		}
		if !st.Exited {
			return false, nil
		}
		stdout, _ := base64.StdEncoding.DecodeString(st.OutData)
		stderr, _ := base64.StdEncoding.DecodeString(st.ErrData)
		out, code = strings.TrimSpace(string(stdout)+string(stderr)), st.ExitCode
		return true, nil
	})
	switch {
	case err != nil && waited:
		return "", 0, fmt.Errorf("%s still running in the guest after %s: %w", path, limit, actx.Err())
	case err != nil:
		return "", 0, err
	}
	return out, code, nil
}

// GuestPing reports whether the guest agent of dom answers.
func (c *Client) GuestPing(ctx context.Context, dom golibvirt.Domain) error {
	var out struct{}
	return c.agent(ctx, dom, map[string]any{"execute": "guest-ping"}, 5*time.Second, &out)
}

// PingDomainAgent is GuestPing for the domain with id (UUID or name).
func (c *Client) PingDomainAgent(ctx context.Context, id string) error {
	dom, err := c.LookupDomain(ctx, id)
	if err != nil {
		return err
	}
	return c.GuestPing(ctx, dom)
}

// ExecInDomain is GuestExec for the domain with id, waiting up to limit for the program.
func (c *Client) ExecInDomain(ctx context.Context, id string, limit time.Duration, path string, args ...string) (string, int, error) {
	dom, err := c.LookupDomain(ctx, id)
	if err != nil {
		return "", 0, err
	}
	return c.guestExec(ctx, dom, limit, path, args...)
}
