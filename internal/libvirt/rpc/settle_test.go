package rpc

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/libvirttest"
)

// mockClient is a Client whose connections go to go-libvirt's mock daemon (libvirttest):
// enough to dial, open and run fns that return what a test wants.
func mockClient(t *testing.T) *Client {
	t.Helper()
	u, err := ParseURI("qemu:///system")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{URI: u.String(), MaxConnections: 1, DialAttempts: 1, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond}.withDefaults()
	p := newPool(u, cfg, func(context.Context) (net.Conn, error) {
		return libvirttest.New().Dial()
	})
	t.Cleanup(func() { close(p.stopKeepalive); p.closeIdle() })
	return &Client{uri: u, pool: p}
}

// readSettled settles only connection failures: a local error (XML that does not
// parse) returns at once, after one call, not after two minutes of fresh dials.
func TestReadSettledLocalErrorReturnsAtOnce(t *testing.T) {
	c := mockClient(t)
	for name, local := range map[string]error{
		"parse error": fmt.Errorf("parse volume XML of v: %w", &xml.SyntaxError{Msg: "unexpected EOF", Line: 1}),
		"a verdict":   &testVerdict{"pool p is not running"},
	} {
		t.Run(name, func(t *testing.T) {
			// Bounded, so that the old behaviour (settling for SettleBudget) fails quickly.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			calls := 0
			start := time.Now()
			err := c.ReadSettled(ctx, "look up volume v", func(*golibvirt.Libvirt) error { calls++; return local })
			if calls != 1 || time.Since(start) > 2*time.Second {
				t.Errorf("fn ran %d times in %s; want once, at once", calls, time.Since(start).Round(time.Millisecond))
			}
			if IsTransport(err) || errors.Is(err, ErrNotFound) || !errors.Is(err, local) {
				t.Errorf("want the local error itself, got %T %v", err, err)
			}
			if s := c.Stats(); s.Dials != 1 {
				t.Errorf("the connection was dropped for a local error: %d dials", s.Dials)
			}
		})
	}
}

// A connection failure is still retried, on a fresh connection each time.
func TestReadRetriesConnectionFailure(t *testing.T) {
	c := mockClient(t)
	calls := 0
	err := c.Read(context.Background(), "look up volume v", func(*golibvirt.Libvirt) error { calls++; return golibvirt.ErrInterrupted })
	if calls != readAttempts || !IsTransport(err) {
		t.Errorf("fn ran %d times, err %v; want %d runs and a transport error", calls, err, readAttempts)
	}
	if s := c.Stats(); s.Dials != readAttempts {
		t.Errorf("%d dials, want a fresh connection per attempt (%d)", s.Dials, readAttempts)
	}
}
