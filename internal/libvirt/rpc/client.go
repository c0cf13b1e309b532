// Package rpc is how the provider reaches a libvirt daemon: libvirt URIs, the dialers of
// each transport (unix socket, TCP, TLS, SSH with host-key checking), the shared pool of
// live connections per URI with its keepalive and circuit breaker, and the sorting of
// what a call returned into libvirt's answers, connection failures and everything else
// (errors.go). Client.Read and Client.Write run a function on a pooled connection; the
// settled forms ride out a daemon that is briefly away. It knows nothing of domains,
// volumes or networks: package libvirt builds those operations on top.
package rpc

import (
	"context"
	"sync"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Client runs calls on connections from the pool it holds for one daemon.
type Client struct {
	uri  *URI
	pool *pool
	// Warnings are things the user should hear once, e.g. host key checking disabled.
	Warnings []string
}

// readAttempts bounds how often a read is retried on a fresh connection.
const readAttempts = 3

var (
	registryMu sync.Mutex
	registry   = map[string]*Client{}
)

// NewClient returns the client for cfg. Provider instances configured alike share one
// client and its pool for the life of the process. No connection is made here: the first
// call dials, so a provider that is configured but unused never touches the host.
func NewClient(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	key := cfg.key()
	registryMu.Lock()
	defer registryMu.Unlock()
	if c, ok := registry[key]; ok {
		return c, nil
	}
	u, err := ParseURI(cfg.URI)
	if err != nil {
		return nil, err
	}
	dial, warnings, err := newDialer(u, cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{uri: u, pool: newPool(u, cfg, dial), Warnings: warnings}
	registry[key] = c
	return c, nil
}

// URI is the parsed URI this client talks to.
func (c *Client) URI() *URI { return c.uri }

// Stats are the pool's counters.
func (c *Client) Stats() Stats { return c.pool.snapshot() }

// MaxConnections is the size of the pool (max_connections).
func (c *Client) MaxConnections() int { return c.pool.cfg.MaxConnections }

// CloseIdle drops idle connections; the next call dials again.
func (c *Client) CloseIdle() { c.pool.closeIdle() }

// Read runs fn, which must only read (lookups, XML, lists): when the connection breaks
// under it, fn runs again on a freshly dialled connection, up to readAttempts times.
// op names the action for messages ("look up domain web-1").
func (c *Client) Read(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	var err error
	for attempt := 1; attempt <= readAttempts; attempt++ {
		err = c.once(ctx, op, fn)
		// A rejected host key or credential will be rejected again: no point retrying.
		if !IsTransport(err) || isPermanent(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// Write runs fn once. When the connection breaks under it the error says so, and the
// caller must read the object back before assuming the change did or did not happen.
func (c *Client) Write(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.once(ctx, op, fn)
}

func (c *Client) once(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	cn, err := c.pool.acquire(ctx)
	if err != nil {
		return &TransportError{Op: op, URI: c.uri.String(), Err: err}
	}
	err = classifyOn(cn.l, op, c.uri.String(), cn.call(ctx, fn))
	c.pool.release(cn, IsTransport(err))
	return err
}

// Dedicated runs fn on a connection of its own, dialled once for it outside the pool and
// closed when fn returns. It is for calls that hold a connection for long and end only
// when the socket closes — a console stream, which go-libvirt cannot cancel: when ctx
// ends, the socket is closed, which aborts the call and makes the daemon drop the stream;
// the shared pool never sees the connection, so nothing there is held or wedged.
func (c *Client) Dedicated(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	if err := c.pool.breaker.allow(); err != nil {
		return &TransportError{Op: op, URI: c.uri.String(), Err: err}
	}
	cn, err := c.pool.open(ctx)
	if err != nil {
		return &TransportError{Op: op, URI: c.uri.String(), Err: err}
	}
	defer cn.close()
	return classifyOn(cn.l, op, c.uri.String(), cn.call(ctx, fn))
}
