package libvirt_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"golang.org/x/crypto/ssh"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

func newClient(t *testing.T, cfg libvirt.Config) *libvirt.Client {
	t.Helper()
	c, err := libvirt.NewClient(cfg)
	if err != nil {
		t.Fatalf("NewClient(%s): %v", cfg.URI, err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

func hostInfo(t *testing.T, c *libvirt.Client) (*libvirt.HostInfo, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.HostInfo(ctx)
}

func TestAccSSH(t *testing.T) {
	acctest.RequireAcc(t)
	sshd := acctest.StartSSHD(t)
	t.Setenv("HOME", t.TempDir()) // no ~/.ssh of the machine's leaks into these cases
	t.Setenv("SSH_AUTH_SOCK", "")

	t.Run("right known_hosts connects", func(t *testing.T) {
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: sshd.ClientKeyPEM, KnownHosts: sshd.KnownHostsLine}})
		info, err := hostInfo(t, c)
		if err != nil {
			t.Fatalf("qemu+ssh with the right known_hosts: %v", err)
		}
		if info.HypervisorType != "QEMU" || len(c.Warnings) != 0 {
			t.Errorf("hypervisor %q, warnings %q", info.HypervisorType, c.Warnings)
		}
	})

	t.Run("host certificate from a @cert-authority connects", func(t *testing.T) {
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: sshd.ClientKeyPEM, KnownHosts: sshd.CAKnownHostsLine}})
		if _, err := hostInfo(t, c); err != nil {
			t.Fatalf("OpenSSH host certificate signed by the @cert-authority in known_hosts: %v", err)
		}
	})

	t.Run("host certificate of another CA is refused", func(t *testing.T) {
		other := "@cert-authority [127.0.0.1]:" + itoa(sshd.Port) + " " + strings.TrimSpace(strings.SplitN(acctest.NewHostKeyLine(t, "x"), " ", 2)[1])
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: sshd.ClientKeyPEM, KnownHosts: other}})
		_, err := hostInfo(t, c)
		var hk *libvirt.HostKeyError
		if !errors.As(err, &hk) || hk.CertProblem == "" {
			t.Fatalf("want a certificate HostKeyError, got %v", err)
		}
	})

	t.Run("sshauth=agent,privkey with the key in a file", func(t *testing.T) {
		c := newClient(t, libvirt.Config{URI: sshd.URI() + "?sshauth=agent,privkey&keyfile=" + sshd.ClientKeyFile, SSH: libvirt.SSHConfig{KnownHosts: sshd.KnownHostsLine}})
		if _, err := hostInfo(t, c); err != nil {
			t.Fatalf("sshauth: %v", err)
		}
	})

	t.Run("key file and known_hosts file from URI parameters", func(t *testing.T) {
		kh := sshd.Dir + "/known_hosts"
		if err := writeString(kh, sshd.KnownHostsLine+"\n"); err != nil {
			t.Fatal(err)
		}
		c := newClient(t, libvirt.Config{URI: sshd.URI() + "?keyfile=" + sshd.ClientKeyFile + "&known_hosts=" + kh})
		if _, err := hostInfo(t, c); err != nil {
			t.Fatalf("keyfile/known_hosts query parameters: %v", err)
		}
	})

	fingerprint := ssh.FingerprintSHA256(sshd.HostKey)

	t.Run("missing known_hosts entry is a hard error naming host and fingerprint", func(t *testing.T) {
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: sshd.ClientKeyPEM, KnownHosts: acctest.NewHostKeyLine(t, "elsewhere.example")}})
		_, err := hostInfo(t, c)
		var hk *libvirt.HostKeyError
		if !errors.As(err, &hk) || hk.Changed {
			t.Fatalf("want unknown-host error, got %v", err)
		}
		for _, want := range []string{"127.0.0.1", fingerprint, "not in known_hosts"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if errors.Is(err, libvirt.ErrNotFound) || !libvirt.IsTransport(err) {
			t.Errorf("host key failure must be a transport error, not not-found: %v", err)
		}
		if s := c.Stats(); s.Dials != 0 {
			t.Errorf("dials = %d after host key failure", s.Dials)
		}
	})

	t.Run("no known_hosts at all is a hard error", func(t *testing.T) {
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: sshd.ClientKeyPEM}})
		_, err := hostInfo(t, c)
		if err == nil || !strings.Contains(err.Error(), fingerprint) {
			t.Fatalf("want host key error with fingerprint, got %v", err)
		}
	})

	t.Run("changed host key is a hard error", func(t *testing.T) {
		wrong := acctest.NewHostKeyLine(t, "127.0.0.1:"+itoa(sshd.Port))
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: sshd.ClientKeyPEM, KnownHosts: wrong}})
		_, err := hostInfo(t, c)
		var hk *libvirt.HostKeyError
		if !errors.As(err, &hk) || !hk.Changed {
			t.Fatalf("want changed-key error, got %v", err)
		}
		if !strings.Contains(err.Error(), fingerprint) || !strings.Contains(err.Error(), "does NOT match") {
			t.Errorf("error %q", err)
		}
	})

	t.Run("insecure flag connects and warns", func(t *testing.T) {
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: sshd.ClientKeyPEM, InsecureSkipHostKeyVerification: true}})
		if _, err := hostInfo(t, c); err != nil {
			t.Fatalf("insecure: %v", err)
		}
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "verification is disabled") {
			t.Errorf("warnings = %q", c.Warnings)
		}
	})

	t.Run("rejected key is a clear error", func(t *testing.T) {
		c := newClient(t, libvirt.Config{URI: sshd.URI(), SSH: libvirt.SSHConfig{PrivateKey: acctest.NewSSHKey(t), KnownHosts: sshd.KnownHostsLine}})
		_, err := hostInfo(t, c)
		if err == nil || !strings.Contains(err.Error(), "authentication rejected") {
			t.Fatalf("want authentication error, got %v", err)
		}
	})
}

func TestAccTCP(t *testing.T) {
	acctest.RequireAcc(t)
	c := newClient(t, libvirt.Config{URI: acctest.Env("LIBVIRT_TEST_TCP_URI", "qemu+tcp://127.0.0.1/system")})
	info, err := hostInfo(t, c)
	if err != nil {
		t.Fatalf("qemu+tcp: %v", err)
	}
	if info.HypervisorType != "QEMU" {
		t.Errorf("hypervisor %q", info.HypervisorType)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "unencrypted and unauthenticated") {
		t.Errorf("qemu+tcp warnings = %q", c.Warnings)
	}
}

func TestAccTLS(t *testing.T) {
	acctest.RequireAcc(t)
	uri := acctest.Env("LIBVIRT_TEST_TLS_URI", "")
	if uri == "" {
		t.Fatal("LIBVIRT_TEST_TLS_URI is not set: eval \"$(tools/testhost.sh env)\"")
	}
	c := newClient(t, libvirt.Config{URI: uri})
	if _, err := hostInfo(t, c); err != nil {
		t.Fatalf("qemu+tls: %v", err)
	}
	// Without the CA the server is not trusted: a clear, non-retried error.
	bad := newClient(t, libvirt.Config{URI: "qemu+tls://127.0.0.1/system", TLS: libvirt.TLSConfig{CAFile: acctest.Env("LIBVIRT_TEST_PKIPATH", "") + "/clientcert.pem"}})
	if _, err := hostInfo(t, bad); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted server: %v", err)
	}
}

// A connection the daemon drops under a live client is re-dialled and the next read
// succeeds; a call that the drop interrupts is a transport error, never "not found".
func TestAccReconnectAfterDrop(t *testing.T) {
	acctest.RequireAcc(t)
	c := newClient(t, libvirt.Config{URI: acctest.URI(), MaxConnections: 3})
	if _, err := hostInfo(t, c); err != nil {
		t.Fatal(err)
	}
	before := c.Stats().Dials
	if n := acctest.DropDaemonClients(t); n == 0 {
		t.Fatal("virt-admin found none of this process's connections to drop")
	}
	// Not HostInfo again: the client caches it, and the read must reach the daemon.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.ListDomains(ctx); err != nil {
		t.Fatalf("read after the daemon dropped the connection: %v", err)
	}
	if after := c.Stats().Dials; after <= before {
		t.Errorf("dials %d -> %d: the read did not re-dial", before, after)
	}
}

func TestAccTransportErrorIsNotNotFound(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	_, port, _ := net.SplitHostPort(proxy.Addr)
	c := newClient(t, libvirt.Config{URI: "qemu+tcp://127.0.0.1:" + port + "/system", DialAttempts: 2, BackoffBase: 50 * time.Millisecond})
	ctx := context.Background()
	missing := "tfacc-no-such-domain"
	lookup := func(l *golibvirt.Libvirt) error { _, err := l.DomainLookupByName(missing); return err }

	// A real not-found, over the same path, is ErrNotFound.
	err := c.Read(ctx, "look up domain "+missing, lookup)
	if !errors.Is(err, libvirt.ErrNotFound) || libvirt.IsTransport(err) {
		t.Fatalf("missing domain: want ErrNotFound, got %v", err)
	}

	// The link dies while the lookup is in flight: transport error, not not-found.
	proxy.Freeze()
	done := make(chan error, 1)
	go func() { done <- c.Write(ctx, "look up domain "+missing, lookup) }()
	time.Sleep(300 * time.Millisecond)
	proxy.Cut()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("call did not return after the link was cut")
	}
	if errors.Is(err, libvirt.ErrNotFound) || !libvirt.IsTransport(err) {
		t.Fatalf("cut link: want a transport error, got %v", err)
	}

	// A deadline on a hung link is a transport error as well, and returns on time.
	proxy.Thaw()
	if err := c.Read(ctx, "warm up", lookup); !errors.Is(err, libvirt.ErrNotFound) {
		t.Fatalf("after thaw: %v", err)
	}
	proxy.Freeze()
	dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	err = c.Write(dctx, "look up domain "+missing, lookup)
	cancel()
	if errors.Is(err, libvirt.ErrNotFound) || !libvirt.IsTransport(err) {
		t.Fatalf("hung link: want a transport error, got %v", err)
	}
	proxy.Thaw()
	proxy.Cut()
	// And the next read re-dials and answers again.
	if err := c.Read(ctx, "look up domain "+missing, lookup); !errors.Is(err, libvirt.ErrNotFound) {
		t.Fatalf("read after re-dial: %v", err)
	}
}

func TestAccPoolBound(t *testing.T) {
	acctest.RequireAcc(t)
	c := newClient(t, libvirt.Config{URI: acctest.URI(), MaxConnections: 2})
	ctx := context.Background()
	errs := make(chan error, 20)
	for range 20 {
		go func() {
			errs <- c.Read(ctx, "version", func(l *golibvirt.Libvirt) error {
				_, err := l.ConnectGetLibVersion()
				time.Sleep(20 * time.Millisecond)
				return err
			})
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s := c.Stats()
	if s.MaxOpen > 2 || s.MaxInUse > 2 {
		t.Errorf("pool of 2 opened %d connections, %d in use at once", s.MaxOpen, s.MaxInUse)
	}
	if s.MaxInUse != 2 {
		t.Errorf("20 concurrent calls used %d connections at once, want 2", s.MaxInUse)
	}
}

// Idle connections are pinged by the keepalive loop: one the daemon dropped is found and
// closed without any caller touching it, and one idle past IdleTimeout is closed too.
func TestAccKeepalive(t *testing.T) {
	acctest.RequireAcc(t)
	c := newClient(t, libvirt.Config{URI: acctest.URI(), MaxConnections: 1, KeepaliveInterval: 100 * time.Millisecond, IdleTimeout: time.Hour})
	if _, err := hostInfo(t, c); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Open != 1 || s.Idle != 1 {
		t.Fatalf("after one call: %+v", s)
	}
	acctest.DropDaemonClients(t)
	waitFor(t, "the dropped idle connection to be closed", func() bool { return c.Stats().Open == 0 })

	idle := newClient(t, libvirt.Config{URI: acctest.URI(), MaxConnections: 2, KeepaliveInterval: 100 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	if _, err := hostInfo(t, idle); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the idle connection to time out", func() bool { return idle.Stats().Open == 0 })
	if _, err := hostInfo(t, idle); err != nil {
		t.Fatalf("call after idle close: %v", err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A dead host: after a few failed dials the breaker opens and every other caller fails at
// once naming the first cause, instead of each waiting out its own dials; after the
// cool-down it closes by itself once the host answers again.
func TestAccBreaker(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	proxy.Refuse()
	_, port, _ := net.SplitHostPort(proxy.Addr)
	c := newClient(t, libvirt.Config{URI: "qemu+tcp://127.0.0.1:" + port + "/system", MaxConnections: 4,
		DialAttempts: 4, BackoffBase: 20 * time.Millisecond, BreakerThreshold: 3, BreakerCooldown: time.Second})
	ctx := context.Background()
	ping := func(l *golibvirt.Libvirt) error { _, err := l.ConnectGetLibVersion(); return err }

	const callers = 10
	errs := make(chan error, callers)
	for range callers {
		go func() { errs <- c.Read(ctx, "version", ping) }()
	}
	for range callers {
		err := <-errs
		if err == nil || !libvirt.IsTransport(err) || errors.Is(err, libvirt.ErrNotFound) {
			t.Fatalf("dead host: want a transport error, got %v", err)
		}
	}
	// 10 callers x 3 reads x 4 dials would be 120 connection attempts without the breaker.
	if n := proxy.Accepted() + proxy.Refused(); n > 6 {
		t.Errorf("%d connection attempts to a dead host; the breaker should have stopped them after 3", n)
	}
	err := c.Read(ctx, "version", ping)
	var open *libvirt.BreakerOpenError
	if !errors.As(err, &open) || !strings.Contains(err.Error(), "first cause") {
		t.Fatalf("while open: want BreakerOpenError naming the first cause, got %v", err)
	}

	proxy.Accept()
	time.Sleep(1100 * time.Millisecond) // the cool-down
	if err := c.Read(ctx, "version", ping); err != nil {
		t.Fatalf("after the cool-down, with the host back: %v", err)
	}
}

// Item 10: the keepalive loop pings idle connections without opening the pool beyond
// max_connections: many callers and a keepalive every few milliseconds, for seconds.
func TestAccKeepaliveRespectsMaxConnections(t *testing.T) {
	acctest.RequireAcc(t)
	const maxConns = 2
	c := newClient(t, libvirt.Config{URI: acctest.URI(), MaxConnections: maxConns, KeepaliveInterval: time.Millisecond, IdleTimeout: time.Hour})
	ctx := context.Background()
	ping := func(l *golibvirt.Libvirt) error { _, err := l.ConnectGetLibVersion(); return err }
	stop := time.Now().Add(3 * time.Second)
	const callers = 6
	errs := make(chan error, callers)
	for i := range callers {
		go func() {
			var err error
			for time.Now().Before(stop) && err == nil {
				err = c.Read(ctx, "version", ping)
				// Pauses leave connections idle for the keepalive to take.
				time.Sleep(time.Duration(500+300*i) * time.Microsecond)
			}
			errs <- err
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s := c.Stats()
	if s.MaxOpen > maxConns {
		t.Errorf("max_connections = %d, but %d connections were open at once (%d dials)", maxConns, s.MaxOpen, s.Dials)
	}
	if s.MaxInUse > maxConns {
		t.Errorf("%d connections in use at once", s.MaxInUse)
	}
	t.Logf("stats after the run: %+v", s)
}
