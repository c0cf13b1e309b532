// Package libvirt is the only code that speaks libvirt: the operations on its objects
// (domains, volumes, storage pools, networks, snapshots, block jobs, the guest agent),
// named by noun, one file per concern. How calls reach the daemon — URIs, dialers, the
// shared connection pool, the breaker, settling, the sorting of errors — is package rpc
// below it; this package re-exports the names its callers use (Config, NewClient, URI,
// ErrNotFound, IsTransport, ...), so they need not import rpc.
package libvirt

import (
	"context"
	"sync"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt/rpc"
)

// Client is the provider's one handle on a libvirt daemon: every resource calls libvirt
// through it, on connections from the pool it shares with every other resource.
type Client struct {
	rpc *rpc.Client
	uri *URI
	// Warnings are things the user should hear once, e.g. host key checking disabled.
	Warnings []string
}

// The transport's names, for callers of this package.
type (
	Config    = rpc.Config
	SSHConfig = rpc.SSHConfig
	TLSConfig = rpc.TLSConfig
	URI       = rpc.URI
	Stats     = rpc.Stats
)

// DefaultMaxConnections is the pool size when Config.MaxConnections is 0.
const DefaultMaxConnections = rpc.DefaultMaxConnections

// ParseURI parses and validates a libvirt URI. Errors say what form is expected.
func ParseURI(raw string) (*URI, error) { return rpc.ParseURI(raw) }

var (
	clientsMu sync.Mutex
	clients   = map[*rpc.Client]*Client{}
)

// NewClient returns the client for cfg. Provider instances configured alike share one
// client and its pool for the life of the process. No connection is made here: the first
// call dials, so a provider that is configured but unused never touches the host.
func NewClient(cfg Config) (*Client, error) {
	r, err := rpc.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	clientsMu.Lock()
	defer clientsMu.Unlock()
	c, ok := clients[r]
	if !ok {
		c = &Client{rpc: r, uri: r.URI(), Warnings: r.Warnings}
		clients[r] = c
	}
	return c, nil
}

// URI is the parsed URI this client talks to.
func (c *Client) URI() *URI { return c.uri }

// Stats are the pool's counters.
func (c *Client) Stats() Stats { return c.rpc.Stats() }

// CloseIdle drops idle connections; the next call dials again.
func (c *Client) CloseIdle() { c.rpc.CloseIdle() }

// Read runs fn, which must only read (lookups, XML, lists): when the connection breaks
// under it, fn runs again on a freshly dialled connection, a few times.
// op names the action for messages ("look up domain web-1").
func (c *Client) Read(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.rpc.Read(ctx, op, fn)
}

// Write runs fn once. When the connection breaks under it the error says so, and the
// caller must read the object back before assuming the change did or did not happen.
func (c *Client) Write(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.rpc.Write(ctx, op, fn)
}

// readSettled is Read that rides out a daemon that is away for a while (rpc.ReadSettled):
// for the look-ups that decide what a write whose answer was lost did, and for reading
// back an object just made.
func (c *Client) readSettled(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.rpc.ReadSettled(ctx, op, fn)
}

// writeSettled runs fn, which must be safe to repeat, again whenever the connection fails,
// until the daemon answers (rpc.WriteSettled).
func (c *Client) writeSettled(ctx context.Context, op string, fn func(*golibvirt.Libvirt) error) error {
	return c.rpc.WriteSettled(ctx, op, fn)
}
