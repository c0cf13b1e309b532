package rpc

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// dialSSH dials srv with cfg through the real SSH dialer and checks the socket channel
// works (the test server echoes).
func dialSSH(t *testing.T, uri string, cfg SSHConfig) error {
	t.Helper()
	dial, _, err := newSSHDialer(mustURI(t, uri), cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatalf("write on the socket channel: %v", err)
	}
	buf := make([]byte, 4)
	if _, err := c.Read(buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read on the socket channel: %q %v", buf, err)
	}
	return nil
}

func authorizedLine(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// Item 6: host certificates signed by a CA listed with @cert-authority are accepted;
// certificates of other CAs, for other names, or with a revoked key or CA are not.
func TestSSHHostCertificates(t *testing.T) {
	isolateSSH(t)
	client, clientPEM := newClientKey(t)
	ca, otherCA := newSigner(t), newSigner(t)
	hostKey := newSigner(t)
	serve := func(hostKeys ...ssh.Signer) *testSSHServer {
		return startTestSSHServer(t, &testSSHServer{hostKeys: hostKeys, authorized: []ssh.PublicKey{client.PublicKey()}})
	}

	good := serve(hostCert(t, hostKey, ca, "127.0.0.1"))
	caLine := func(srv *testSSHServer, k ssh.PublicKey) string {
		return "@cert-authority [127.0.0.1]:" + strconv.Itoa(srv.Port) + " " + authorizedLine(k)
	}

	t.Run("certificate from the listed CA connects", func(t *testing.T) {
		if err := dialSSH(t, good.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: caLine(good, ca.PublicKey())}); err != nil {
			t.Fatalf("host certificate signed by the @cert-authority: %v", err)
		}
	})
	t.Run("wildcard @cert-authority on a non-standard port", func(t *testing.T) {
		if err := dialSSH(t, good.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: "@cert-authority * " + authorizedLine(ca.PublicKey())}); err != nil {
			t.Fatalf("@cert-authority *: %v", err)
		}
	})
	t.Run("certificate from another CA is refused clearly", func(t *testing.T) {
		err := dialSSH(t, good.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: caLine(good, otherCA.PublicKey())})
		var hk *HostKeyError
		if !errors.As(err, &hk) || hk.CertProblem == "" || hk.Changed || !isPermanent(err) {
			t.Fatalf("want a certificate HostKeyError, got %v", err)
		}
		for _, want := range []string{ssh.FingerprintSHA256(ca.PublicKey()), ssh.FingerprintSHA256(hostKey.PublicKey()), "@cert-authority", "not accepted"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
	t.Run("certificate for another name is refused", func(t *testing.T) {
		srv := serve(hostCert(t, hostKey, ca, "kvm9.example.com"))
		err := dialSSH(t, srv.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: caLine(srv, ca.PublicKey())})
		var hk *HostKeyError
		if !errors.As(err, &hk) || !strings.Contains(hk.CertProblem, "principal") {
			t.Fatalf("want a principal error, got %v", err)
		}
	})
	t.Run("revoked host key is refused", func(t *testing.T) {
		kh := caLine(good, ca.PublicKey()) + "\n@revoked * " + authorizedLine(hostKey.PublicKey())
		err := dialSSH(t, good.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: kh})
		var hk *HostKeyError
		if !errors.As(err, &hk) || !hk.Revoked || !strings.Contains(err.Error(), "@revoked") {
			t.Fatalf("want revoked, got %v", err)
		}
	})
	t.Run("revoked CA is refused", func(t *testing.T) {
		kh := caLine(good, ca.PublicKey()) + "\n@revoked * " + authorizedLine(ca.PublicKey())
		err := dialSSH(t, good.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: kh})
		var hk *HostKeyError
		if !errors.As(err, &hk) || !hk.RevokedCA {
			t.Fatalf("want revoked CA, got %v", err)
		}
	})
	t.Run("revoked key is refused even with verification off", func(t *testing.T) {
		kh := "@revoked * " + authorizedLine(hostKey.PublicKey())
		err := dialSSH(t, good.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: kh, InsecureSkipHostKeyVerification: true})
		var hk *HostKeyError
		if !errors.As(err, &hk) || !hk.Revoked {
			t.Fatalf("want revoked, got %v", err)
		}
	})
	t.Run("a CA key is no plain host key", func(t *testing.T) {
		// The host presents the CA's own key as its plain host key: @cert-authority vouches
		// for certificates only.
		srv := serve(ca)
		err := dialSSH(t, srv.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: caLine(srv, ca.PublicKey())})
		if err == nil {
			t.Fatal("a @cert-authority key was accepted as a plain host key")
		}
	})
	t.Run("host with two key types recorded by one connects", func(t *testing.T) {
		ecdsaKey := newECDSASigner(t)
		srv := serve(hostKey, ecdsaKey)
		for _, k := range []ssh.Signer{ecdsaKey, hostKey} {
			if err := dialSSH(t, srv.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: srv.knownHostsLine(k.PublicKey())}); err != nil {
				t.Errorf("known_hosts with only the %s key: %v", k.PublicKey().Type(), err)
			}
		}
	})
	t.Run("plain key and certificate lines together", func(t *testing.T) {
		srv := serve(hostKey, hostCert(t, hostKey, ca, "127.0.0.1"))
		kh := caLine(srv, ca.PublicKey()) + "\n" + srv.knownHostsLine(hostKey.PublicKey())
		if err := dialSSH(t, srv.uri(""), SSHConfig{PrivateKey: clientPEM, KnownHosts: kh}); err != nil {
			t.Fatal(err)
		}
	})
}

// waitDial runs dial and fails the test when it does not return within limit.
func waitDial(t *testing.T, limit time.Duration, dial func() error) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- dial() }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(limit):
		t.Fatalf("dial still running after %s: the context does not bound it", limit)
	}
	return 0, nil
}

// Item 7: every step of a dial ends with its context, whatever the far side does.
func TestDialBoundedByContext(t *testing.T) {
	// The bounds are generous (a busy 2-core CI machine stalls handshakes for seconds);
	// what they catch is a dial that never returns, which is what happened before.
	isolateSSH(t)
	client, clientPEM := newClientKey(t)
	hostKey := newSigner(t)
	const budget = 1500 * time.Millisecond

	check := func(t *testing.T, dial dialFunc) {
		t.Helper()
		took, err := waitDial(t, 40*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			c, err := dial(ctx)
			if err == nil {
				c.Close()
			}
			return err
		})
		if err == nil {
			t.Fatal("dial succeeded against a server that never finishes")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("want a deadline error, got %v", err)
		}
		if took > budget+15*time.Second {
			t.Errorf("dial took %s with a %s context", took, budget)
		}
	}
	sshDialer := func(t *testing.T, srv *testSSHServer) dialFunc {
		dial, _, err := newSSHDialer(mustURI(t, srv.uri("")), SSHConfig{PrivateKey: clientPEM, KnownHosts: srv.knownHostsLine(hostKey.PublicKey())})
		if err != nil {
			t.Fatal(err)
		}
		return dial
	}

	t.Run("ssh: server accepts TCP and says nothing", func(t *testing.T) {
		srv := startTestSSHServer(t, &testSSHServer{Silent: true})
		check(t, sshDialer(t, srv))
	})
	t.Run("ssh: server authenticates and never answers the channel open", func(t *testing.T) {
		srv := startTestSSHServer(t, &testSSHServer{HangChannel: true, hostKeys: []ssh.Signer{hostKey}, authorized: []ssh.PublicKey{client.PublicKey()}})
		check(t, sshDialer(t, srv))
	})
	t.Run("tls: handshake completes, the verdict byte never comes", func(t *testing.T) {
		addr := startMuteTLSServer(t)
		dial, _, err := newDialer(mustURI(t, "qemu+tls://"+addr+"/system?no_verify=1"), Config{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, dial)
	})
	t.Run("the pool slot comes back", func(t *testing.T) {
		srv := startTestSSHServer(t, &testSSHServer{HangChannel: true, hostKeys: []ssh.Signer{hostKey}, authorized: []ssh.PublicKey{client.PublicKey()}})
		cfg := Config{URI: srv.uri(""), MaxConnections: 1, DialTimeout: budget, DialAttempts: 1, BreakerThreshold: 100,
			SSH: SSHConfig{PrivateKey: clientPEM, KnownHosts: srv.knownHostsLine(hostKey.PublicKey())}}
		c, err := NewClient(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdle()
		for i := range 2 { // the second call needs the slot the first one used
			took, err := waitDial(t, 40*time.Second, func() error {
				return c.Write(context.Background(), "version", func(*golibvirt.Libvirt) error { return nil })
			})
			if err == nil || !errors.Is(err, context.DeadlineExceeded) || took > budget+15*time.Second {
				t.Fatalf("call %d: %v after %s", i+1, err, took)
			}
		}
	})
}

// startMuteTLSServer completes TLS handshakes and then never sends a byte.
func startMuteTLSServer(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _ = tls.Server(c, cfg).Handshake() }() // then silence
		}
	}()
	return l.Addr().String()
}

// Item 8: the ssh-agent connection of a dial is closed when the handshake is over.
func TestSSHAgentConnectionClosed(t *testing.T) {
	isolateSSH(t)
	keyring := agent.NewKeyring()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	agentSigners, err := keyring.Signers()
	if err != nil || len(agentSigners) != 1 {
		t.Fatalf("keyring: %v", err)
	}
	sock := t.TempDir() + "/agent.sock"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var open, total atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			open.Add(1)
			total.Add(1)
			go func() {
				defer open.Add(-1)
				defer c.Close()
				_ = agent.ServeAgent(keyring, c) // returns when the client closes
			}()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)

	hostKey := newSigner(t)
	srv := startTestSSHServer(t, &testSSHServer{hostKeys: []ssh.Signer{hostKey}, authorized: []ssh.PublicKey{agentSigners[0].PublicKey()}})
	dial, _, err := newSSHDialer(mustURI(t, srv.uri("")), SSHConfig{KnownHosts: srv.knownHostsLine(hostKey.PublicKey())})
	if err != nil {
		t.Fatal(err)
	}
	const dials = 5
	var conns []net.Conn
	for range dials {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := dial(ctx)
		cancel()
		if err != nil {
			t.Fatalf("dial with the agent's key: %v", err)
		}
		conns = append(conns, c) // the libvirt connections stay open, as in the pool
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if srv.KeyLogins.Load() == 0 || total.Load() != dials {
		t.Fatalf("agent used %d times for %d dials (key logins %d)", total.Load(), dials, srv.KeyLogins.Load())
	}
	deadline := time.Now().Add(3 * time.Second)
	for open.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := open.Load(); n != 0 {
		t.Errorf("%d of %d agent connections still open after the handshakes", n, dials)
	}
}

// Item 11c: with verification off and a host key known_hosts records differently, no
// password (nor keyboard-interactive answer) is sent; keys still work.
func TestSSHNoPasswordToChangedHost(t *testing.T) {
	isolateSSH(t)
	client, clientPEM := newClientKey(t)
	hostKey := newSigner(t)
	srv := startTestSSHServer(t, &testSSHServer{hostKeys: []ssh.Signer{hostKey}, authorized: []ssh.PublicKey{client.PublicKey()}, password: "s3cret"})
	changed := srv.knownHostsLine(newSigner(t).PublicKey())

	for _, tc := range []struct {
		name string
		uri  string
		cfg  SSHConfig
	}{
		{"insecure_skip_host_key_verification", srv.uri(""), SSHConfig{Password: "s3cret", KnownHosts: changed, InsecureSkipHostKeyVerification: true}},
		{"no_verify=1", srv.uri("no_verify=1"), SSHConfig{Password: "s3cret", KnownHosts: changed}},
		{"known_hosts_verify=ignore", srv.uri("known_hosts_verify=ignore"), SSHConfig{Password: "s3cret", KnownHosts: changed}},
		{"keyboard-interactive only", srv.uri("sshauth=keyboard-interactive"), SSHConfig{Password: "s3cret", KnownHosts: changed, InsecureSkipHostKeyVerification: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.PasswordTries.Load()
			err := dialSSH(t, tc.uri, tc.cfg)
			if tries := srv.PasswordTries.Load() - before; tries != 0 {
				t.Fatalf("the password was sent %d times to a host whose key changed (dial: %v)", tries, err)
			}
			if err == nil || !strings.Contains(err.Error(), "no password was sent") || !isPermanent(err) {
				t.Fatalf("want an error saying why no password was sent, got %v", err)
			}
		})
	}
	t.Run("a key still works", func(t *testing.T) {
		before := srv.PasswordTries.Load()
		if err := dialSSH(t, srv.uri(""), SSHConfig{PrivateKey: clientPEM, Password: "s3cret", KnownHosts: changed, InsecureSkipHostKeyVerification: true}); err != nil {
			t.Fatalf("key login to a changed host with verification off: %v", err)
		}
		if srv.PasswordTries.Load() != before {
			t.Error("password sent")
		}
	})
	t.Run("an unknown host still gets the password", func(t *testing.T) {
		before := srv.PasswordTries.Load()
		if err := dialSSH(t, srv.uri(""), SSHConfig{Password: "s3cret", InsecureSkipHostKeyVerification: true}); err != nil {
			t.Fatalf("password login with verification off: %v", err)
		}
		if srv.PasswordTries.Load() == before {
			t.Error("password not used")
		}
	})
}

// Item 11a: ?sshauth= picks and orders the methods.
func TestSSHAuthOrder(t *testing.T) {
	isolateSSH(t)
	client, clientPEM := newClientKey(t)
	hostKey := newSigner(t)
	srv := startTestSSHServer(t, &testSSHServer{hostKeys: []ssh.Signer{hostKey}, authorized: []ssh.PublicKey{client.PublicKey()}, password: "s3cret"})
	kh := srv.knownHostsLine(hostKey.PublicKey())
	both := SSHConfig{PrivateKey: clientPEM, Password: "s3cret", KnownHosts: kh}

	try := func(t *testing.T, params string, cfg SSHConfig) (keys, passwords int32, err error) {
		k0, p0 := srv.KeyLogins.Load(), srv.PasswordTries.Load()
		err = dialSSH(t, srv.uri(params), cfg)
		return srv.KeyLogins.Load() - k0, srv.PasswordTries.Load() - p0, err
	}
	t.Run("default: the key wins", func(t *testing.T) {
		keys, pws, err := try(t, "", both)
		if err != nil || keys == 0 || pws != 0 {
			t.Fatalf("keys %d passwords %d: %v", keys, pws, err)
		}
	})
	t.Run("sshauth=password,privkey: the password first", func(t *testing.T) {
		keys, pws, err := try(t, "sshauth=password,privkey", both)
		if err != nil || keys != 0 || pws != 1 {
			t.Fatalf("keys %d passwords %d: %v", keys, pws, err)
		}
	})
	t.Run("sshauth=privkey: never the password", func(t *testing.T) {
		_, pws, err := try(t, "sshauth=privkey", SSHConfig{PrivateKey: func() string { _, p := newClientKey(t); return p }(), Password: "s3cret", KnownHosts: kh})
		if err == nil || pws != 0 || !strings.Contains(err.Error(), "sshauth=privkey") {
			t.Fatalf("passwords %d: %v", pws, err)
		}
	})
	t.Run("sshauth=agent without an agent is a configuration error", func(t *testing.T) {
		_, _, err := newSSHDialer(mustURI(t, srv.uri("sshauth=agent")), both)
		if err == nil || !strings.Contains(err.Error(), "SSH_AUTH_SOCK") {
			t.Fatalf("want a configuration error, got %v", err)
		}
	})
}
