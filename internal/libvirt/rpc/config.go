package rpc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Config is everything needed to reach one libvirt daemon. The provider builds it from its
// configuration block and environment; tests build it directly.
type Config struct {
	URI            string
	SSH            SSHConfig
	TLS            TLSConfig
	MaxConnections int // size of the shared pool; 0 means DefaultMaxConnections

	// Tuning, zero values mean the defaults below. Tests shorten them.
	DialTimeout       time.Duration // one dial, including SSH/TLS handshake and ConnectOpen
	DialAttempts      int           // dials tried before a call fails (backoff between them)
	BackoffBase       time.Duration // first wait between dial attempts, doubled each time
	BackoffMax        time.Duration
	KeepaliveInterval time.Duration // how often idle connections are pinged
	IdleTimeout       time.Duration // idle connections older than this are closed
	BreakerThreshold  int           // consecutive failed dials that open the breaker
	BreakerCooldown   time.Duration // how long an open breaker fails calls without dialling
}

// SSHConfig is the provider's ssh block. Zero values fall back to the URI's query
// parameters, then to OpenSSH's defaults (~/.ssh/known_hosts, ~/.ssh/id_*).
type SSHConfig struct {
	Username       string
	PrivateKey     string // PEM content; sensitive
	PrivateKeyFile string
	Password       string // sensitive
	KnownHosts     string // known_hosts content
	KnownHostsFile string
	// InsecureSkipHostKeyVerification accepts any host key; the provider says so in a warning.
	InsecureSkipHostKeyVerification bool
}

// TLSConfig is the provider's tls block; empty files fall back to ?pkipath= and then to
// libvirt's default PKI locations.
type TLSConfig struct {
	CAFile             string
	CertFile           string
	KeyFile            string
	InsecureSkipVerify bool
}

// Defaults.
const (
	DefaultMaxConnections    = 4
	defaultDialTimeout       = 20 * time.Second
	defaultDialAttempts      = 4
	defaultBackoffBase       = 250 * time.Millisecond
	defaultBackoffMax        = 4 * time.Second
	defaultKeepaliveInterval = 30 * time.Second
	defaultIdleTimeout       = 5 * time.Minute
	defaultBreakerThreshold  = 3
	defaultBreakerCooldown   = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.MaxConnections <= 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = defaultDialTimeout
	}
	if c.DialAttempts <= 0 {
		c.DialAttempts = defaultDialAttempts
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = defaultBackoffBase
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = defaultBackoffMax
	}
	if c.KeepaliveInterval <= 0 {
		c.KeepaliveInterval = defaultKeepaliveInterval
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = defaultIdleTimeout
	}
	if c.BreakerThreshold <= 0 {
		c.BreakerThreshold = defaultBreakerThreshold
	}
	if c.BreakerCooldown <= 0 {
		c.BreakerCooldown = defaultBreakerCooldown
	}
	return c
}

// key identifies a pool: provider instances configured identically share one.
// Secrets go into the hash only, never into anything printed.
func (c Config) key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%#v", c)
	return c.URI + "#" + hex.EncodeToString(h.Sum(nil))[:16]
}
