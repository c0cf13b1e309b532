package rpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// conn is one live RPC connection to the daemon.
type conn struct {
	l        *golibvirt.Libvirt
	raw      net.Conn // closing it interrupts every call in flight on l
	lastUsed time.Time
}

func (c *conn) close() {
	// Closing the socket is enough: go-libvirt's reader sees it and fails pending calls.
	_ = c.raw.Close()
}

// call runs fn on the connection and makes ctx's deadline real: go-libvirt calls take no
// context, so when ctx ends first we close the socket, which aborts the call.
func (c *conn) call(ctx context.Context, fn func(*golibvirt.Libvirt) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, c.close)
	err := fn(c.l)
	if !stop() && err != nil {
		// The socket was closed under the call: report why.
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// Stats are counters of a pool, for tests and the benchmark.
type Stats struct {
	Open     int // live connections now
	Idle     int
	InUse    int
	MaxOpen  int // peak of Open
	MaxInUse int // peak of InUse
	Dials    int // successful dials since the pool was made
}

// pool holds up to size live connections to one daemon and hands them out one caller at
// a time. Dead connections are dropped and re-dialled with backoff on the next use.
type pool struct {
	uri    *URI
	cfg    Config
	dial   dialFunc
	tokens chan struct{} // one per connection that may be in use

	mu    sync.Mutex
	idle  []*conn // most recently used last
	stats Stats

	breaker *breaker

	stopKeepalive chan struct{}
}

func newPool(u *URI, cfg Config, dial dialFunc) *pool {
	p := &pool{
		uri:           u,
		cfg:           cfg,
		dial:          dial,
		tokens:        make(chan struct{}, cfg.MaxConnections),
		stopKeepalive: make(chan struct{}),
		breaker:       &breaker{threshold: cfg.BreakerThreshold, cooldown: cfg.BreakerCooldown, now: time.Now},
	}
	for range cfg.MaxConnections {
		p.tokens <- struct{}{}
	}
	go p.keepalive()
	return p
}

// acquire waits for a free slot, then returns an idle live connection or dials a new one.
func (p *pool) acquire(ctx context.Context) (*conn, error) {
	select {
	case <-p.tokens:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free connection (max_connections = %d): %w", p.cfg.MaxConnections, ctx.Err())
	}
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if c.l.IsConnected() {
			p.markInUse(+1)
			return c, nil
		}
		p.discard(c) // died while idle (daemon restarted, link dropped)
	}
	c, err := p.dialWithBackoff(ctx)
	if err != nil {
		p.tokens <- struct{}{}
		return nil, err
	}
	p.markInUse(+1)
	return c, nil
}

// release returns a connection; a broken one is closed instead of kept.
func (p *pool) release(c *conn, broken bool) {
	p.markInUse(-1)
	if broken || !c.l.IsConnected() {
		p.discard(c)
	} else {
		c.lastUsed = time.Now()
		p.mu.Lock()
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	}
	p.tokens <- struct{}{}
}

func (p *pool) markInUse(delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.InUse += delta
	p.stats.MaxInUse = max(p.stats.MaxInUse, p.stats.InUse)
}

func (p *pool) discard(c *conn) {
	c.close()
	p.mu.Lock()
	p.stats.Open--
	p.mu.Unlock()
}

// dialWithBackoff dials until a connection opens, up to DialAttempts times with growing
// pauses (BackoffBase doubling to BackoffMax), unless the breaker is open or a failure is
// permanent (a rejected host key or credential).
func (p *pool) dialWithBackoff(ctx context.Context) (*conn, error) {
	var c *conn
	var last error
	attempt, gaveUp := 0, false
	err := poll.Until(ctx, poll.Options{Every: p.cfg.BackoffBase, Max: p.cfg.BackoffMax}, func(ctx context.Context) (bool, error) {
		attempt++
		if err := p.breaker.allow(); err != nil {
			gaveUp = true
			if last != nil {
				return false, last
			}
			return false, err
		}
		cn, err := p.connect(ctx)
		if err == nil {
			p.breaker.success()
			c = cn
			return true, nil
		}
		if ctx.Err() == nil {
			p.breaker.failure(err)
		} else {
			p.breaker.abandon() // our own deadline says nothing about the host
		}
		last = err
		if isPermanent(err) || ctx.Err() != nil || attempt == p.cfg.DialAttempts {
			gaveUp = true
			return false, err
		}
		return false, nil
	})
	switch {
	case err == nil:
		return c, nil
	case !gaveUp: // ctx ended during a pause
		return nil, fmt.Errorf("%w (after %d dial attempts, last: %v)", ctx.Err(), attempt, last)
	}
	return nil, err
}

// connect dials once and opens the driver (ConnectOpen) within DialTimeout: a pooled
// connection, counted in the stats.
func (p *pool) connect(ctx context.Context) (*conn, error) {
	c, err := p.open(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.stats.Open++
	p.stats.Dials++
	p.stats.MaxOpen = max(p.stats.MaxOpen, p.stats.Open)
	p.mu.Unlock()
	return c, nil
}

// open dials once and opens the driver within DialTimeout.
func (p *pool) open(ctx context.Context) (*conn, error) {
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	raw, err := p.dial(dctx)
	if err != nil {
		return nil, err
	}
	c := &conn{l: golibvirt.NewWithDialer(dialers.NewAlreadyConnected(raw)), raw: raw}
	err = c.call(dctx, func(l *golibvirt.Libvirt) error {
		return l.ConnectToURI(golibvirt.ConnectURI(p.uri.DriverURI()))
	})
	if err != nil {
		raw.Close()
		var lerr golibvirt.Error
		if errors.As(err, &lerr) {
			// The daemon answered and refused (unknown driver, access denied): retrying
			// will not change its mind.
			msg := lerr.Message
			if strings.Contains(msg, "no connection driver available") {
				msg += fmt.Sprintf(": the daemon has no %q driver; this provider manages QEMU/KVM hosts: use e.g. qemu:///system "+
					"or qemu+ssh://user@host/system", p.uri.Driver)
			}
			return nil, &permanentError{fmt.Errorf("open %s on the daemon: %s", p.uri.DriverURI(), msg)}
		}
		return nil, fmt.Errorf("open %s on the daemon: %w", p.uri.DriverURI(), err)
	}
	return c, nil
}

// keepalive pings idle connections so that a dead link is found before a caller needs
// it (and SSH / NAT sessions stay open), and closes the ones idle for too long. A ticker,
// not poll.Until: this is a task for the life of the pool, not a wait for something.
func (p *pool) keepalive() {
	t := time.NewTicker(p.cfg.KeepaliveInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stopKeepalive:
			return
		case <-t.C:
		}
		p.keepaliveRound()
	}
}

// keepaliveRound checks each connection that is idle now, one at a time. A connection
// out for its ping is "in use": it holds a token like any caller's, so callers that find
// no idle connection meanwhile wait instead of dialling past max_connections. When no
// token is free the pool is busy, its connections are being used anyway: the rest of the
// round is skipped.
func (p *pool) keepaliveRound() {
	p.mu.Lock()
	round := slices.Clone(p.idle)
	p.mu.Unlock()
	for _, c := range round {
		select {
		case <-p.tokens:
		default:
			return
		}
		p.mu.Lock()
		i := slices.Index(p.idle, c)
		if i >= 0 {
			p.idle = slices.Delete(p.idle, i, i+1)
		}
		p.mu.Unlock()
		if i < 0 {
			p.tokens <- struct{}{} // a caller took it meanwhile
			continue
		}
		if p.healthy(c) {
			p.mu.Lock()
			// Back where its last use puts it: callers take the most recently used.
			j, _ := slices.BinarySearchFunc(p.idle, c.lastUsed, func(e *conn, t time.Time) int { return e.lastUsed.Compare(t) })
			p.idle = slices.Insert(p.idle, j, c)
			p.mu.Unlock()
		} else {
			p.discard(c)
		}
		p.tokens <- struct{}{}
	}
}

// healthy pings an idle connection; false for one idle too long, dead, or not answering.
func (p *pool) healthy(c *conn) bool {
	if time.Since(c.lastUsed) > p.cfg.IdleTimeout || !c.l.IsConnected() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.call(ctx, func(l *golibvirt.Libvirt) error { _, err := l.ConnectGetLibVersion(); return err }) == nil
}

// stats returns a snapshot of the counters.
func (p *pool) snapshot() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Idle = len(p.idle)
	return s
}

// closeIdle closes every idle connection (tests, and a provider shutting down).
func (p *pool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		p.discard(c)
	}
}
