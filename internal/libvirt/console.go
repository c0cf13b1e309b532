package libvirt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// The guest's console, read through libvirt's console stream (virDomainOpenConsole) of
// the domain's first console (a pty serial by default). libvirt keeps no history of a pty:
// what is read is what the guest writes while the stream is open.
//
// go-libvirt's DomainOpenConsole blocks until the stream ends (the domain stops) and
// takes no context; the only way to stop it is to close its socket. So the stream runs on
// a connection of its own (rpc.Client.Dedicated), never on a pooled one: closing it when
// ctx ends aborts the call, the daemon drops the stream (freeing the console for the next
// reader), and no shared connection is held or wedged.

// ReadConsole copies the console of domain id to w until ctx ends (then it returns nil)
// or the stream ends (the domain stopped: nil too). It does not take the console from
// another reader (virsh console): that is an error saying so.
func (c *Client) ReadConsole(ctx context.Context, id string, w io.Writer) error {
	err := c.rpc.Dedicated(ctx, "open the console of domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		return l.DomainOpenConsole(d, nil, w, 0)
	})
	if ctx.Err() != nil {
		err = nil // stopped by the caller: the socket was closed under the stream
	}
	return consoleError(err)
}

// consoleError says in one line why a console could not be read.
func consoleError(err error) error {
	var lerr golibvirt.Error
	if errors.As(err, &lerr) {
		msg := lerr.Message
		if strings.Contains(msg, "Active console session") {
			msg = "another client (virsh console?) holds the console"
		}
		return fmt.Errorf("cannot read the guest console: %s", msg)
	}
	if err != nil {
		return fmt.Errorf("cannot read the guest console: %w", err)
	}
	return nil
}

// ConsoleWatch reads a domain's console in the background into a ring of its last lines,
// from Watch until Stop: started when a wait starts, so that what the guest prints
// while it is waited for is there to quote when the wait fails.
type ConsoleWatch struct {
	ring   *ConsoleRing
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// WatchConsole starts reading the console of domain id, keeping the last lines lines.
func (c *Client) WatchConsole(ctx context.Context, id string, lines int) *ConsoleWatch {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &ConsoleWatch{ring: NewConsoleRing(lines), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		err := c.ReadConsole(ctx, id, w.ring)
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}()
	return w
}

// Tail is the console's last n lines so far, or, when the console could not be read and
// nothing arrived, the reason as one line.
func (w *ConsoleWatch) Tail(n int) ([]string, error) {
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	lines := w.ring.Tail(n)
	if len(lines) == 0 && err != nil {
		return nil, err
	}
	return lines, nil
}

// Stop ends the reading and waits (briefly) for the stream's connection to close.
func (w *ConsoleWatch) Stop() {
	w.cancel()
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
	}
}

// ConsoleSnapshot reads the console of a running domain for window and returns the last
// lines lines the guest wrote meanwhile (libvirt keeps no history of a pty console). A
// domain that is not running is an error.
func (c *Client) ConsoleSnapshot(ctx context.Context, id string, lines int, window time.Duration) ([]string, error) {
	st, err := c.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	if !st.Active {
		return nil, fmt.Errorf("domain %s is %s: only a running domain has console output to read; start it first", id, st.State)
	}
	ring := NewConsoleRing(lines)
	rctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	if err := c.ReadConsole(rctx, id, ring); err != nil && ring.Written() == 0 {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ring.Tail(lines), nil
}
