package rpc

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func newHostKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustURI(t *testing.T, raw string) *URI {
	t.Helper()
	u, err := ParseURI(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2222}

func TestHostKeyPolicy(t *testing.T) {
	saved := globalKnownHostsFiles
	globalKnownHostsFiles = nil // the machine's /etc/ssh/ssh_known_hosts stays out of this
	t.Cleanup(func() { globalKnownHostsFiles = saved })
	good := newHostKey(t)
	other := newHostKey(t)
	line := knownhosts.Line([]string{"[127.0.0.1]:2222"}, good)
	u := mustURI(t, "qemu+ssh://root@127.0.0.1:2222/system")

	t.Run("known key connects", func(t *testing.T) {
		p, warnings, err := newHostKeyPolicy(u, SSHConfig{KnownHosts: line})
		if err != nil || len(warnings) != 0 {
			t.Fatalf("policy: %v %v", err, warnings)
		}
		if err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, good); err != nil {
			t.Fatalf("known key rejected: %v", err)
		}
	})

	t.Run("changed key is a hard error naming host and fingerprint", func(t *testing.T) {
		p, _, _ := newHostKeyPolicy(u, SSHConfig{KnownHosts: line})
		err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, other)
		var hk *HostKeyError
		if !errors.As(err, &hk) || !hk.Changed {
			t.Fatalf("want changed HostKeyError, got %v", err)
		}
		msg := err.Error()
		for _, want := range []string{"127.0.0.1:2222", ssh.FingerprintSHA256(other), "does NOT match", "ssh.known_hosts"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
	})

	t.Run("unknown host is a hard error with the fingerprint and how to add it", func(t *testing.T) {
		p, _, _ := newHostKeyPolicy(u, SSHConfig{KnownHosts: knownhosts.Line([]string{"elsewhere"}, good)})
		err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, good)
		var hk *HostKeyError
		if !errors.As(err, &hk) || hk.Changed {
			t.Fatalf("want unknown-host HostKeyError, got %v", err)
		}
		for _, want := range []string{"not in known_hosts", ssh.FingerprintSHA256(good), "ssh-keyscan -p 2222 127.0.0.1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
		}
	})

	t.Run("no known_hosts at all rejects every host", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		p, _, err := newHostKeyPolicy(u, SSHConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, good); err == nil {
			t.Fatal("accepted a host key with no known_hosts")
		}
	})

	t.Run("default file ~/.ssh/known_hosts is read", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("HOME", home)
		if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p, _, err := newHostKeyPolicy(u, SSHConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, good); err != nil {
			t.Fatalf("default known_hosts ignored: %v", err)
		}
	})

	t.Run("known_hosts file from the URI", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "kh")
		if err := os.WriteFile(f, []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		p, _, err := newHostKeyPolicy(mustURI(t, "qemu+ssh://127.0.0.1:2222/system?known_hosts="+f), SSHConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, good); err != nil {
			t.Fatalf("URI known_hosts ignored: %v", err)
		}
	})

	t.Run("missing known_hosts file named explicitly is a config error", func(t *testing.T) {
		_, _, err := newHostKeyPolicy(u, SSHConfig{KnownHostsFile: "/nonexistent/kh"})
		if err == nil || !strings.Contains(err.Error(), "/nonexistent/kh") {
			t.Fatalf("want error naming the file, got %v", err)
		}
	})

	t.Run("insecure skip accepts anything and warns", func(t *testing.T) {
		for _, tc := range []struct {
			u   *URI
			cfg SSHConfig
		}{
			{u, SSHConfig{InsecureSkipHostKeyVerification: true}},
			{mustURI(t, "qemu+ssh://127.0.0.1:2222/system?no_verify=1"), SSHConfig{}},
		} {
			p, warnings, err := newHostKeyPolicy(tc.u, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "127.0.0.1:2222") {
				t.Errorf("want one warning naming the host, got %q", warnings)
			}
			if err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, other); err != nil {
				t.Errorf("insecure policy rejected a key: %v", err)
			}
		}
	})

	t.Run("revoked key", func(t *testing.T) {
		content := "@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(good))) + "\n" + line
		p, _, _ := newHostKeyPolicy(u, SSHConfig{KnownHosts: content})
		err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, good)
		var hk *HostKeyError
		if !errors.As(err, &hk) || !hk.Revoked {
			t.Fatalf("want revoked HostKeyError, got %v", err)
		}
	})

	t.Run("host key algorithms follow known_hosts", func(t *testing.T) {
		p, _, _ := newHostKeyPolicy(u, SSHConfig{KnownHosts: line})
		algos := p.algorithms("127.0.0.1:2222")
		if len(algos) != 1 || algos[0] != ssh.KeyAlgoED25519 {
			t.Errorf("algorithms = %v", algos)
		}
		if a := p.algorithms("unknown:22"); a != nil {
			t.Errorf("unknown host algorithms = %v, want nil (library default)", a)
		}
	})

	t.Run("system-wide known_hosts is read as well, as OpenSSH does", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		global := filepath.Join(t.TempDir(), "ssh_known_hosts")
		if err := os.WriteFile(global, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		globalKnownHostsFiles = []string{global, "/nonexistent/ssh_known_hosts2"}
		defer func() { globalKnownHostsFiles = nil }()
		for _, cfg := range []SSHConfig{{}, {KnownHosts: knownhosts.Line([]string{"elsewhere"}, other)}} {
			p, _, err := newHostKeyPolicy(u, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, good); err != nil {
				t.Errorf("key recorded in %s rejected: %v", global, err)
			}
			err = p.callback(&sshDialState{})("127.0.0.1:2222", addr, other)
			if err == nil || !strings.Contains(err.Error(), global) {
				t.Errorf("want an error naming %s among the sources, got %v", global, err)
			}
		}
	})

	t.Run("a @cert-authority line alone: a plain key is unknown, not changed", func(t *testing.T) {
		ca := newHostKey(t)
		content := "@cert-authority [127.0.0.1]:2222 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ca)))
		p, _, err := newHostKeyPolicy(u, SSHConfig{KnownHosts: content})
		if err != nil {
			t.Fatal(err)
		}
		// The server must be asked for a certificate, not for its plain key.
		if algos := p.algorithms("127.0.0.1:2222"); len(algos) != 1 || algos[0] != ssh.CertAlgoED25519v01 {
			t.Errorf("algorithms = %v, want [%s]", algos, ssh.CertAlgoED25519v01)
		}
		err = p.callback(&sshDialState{})("127.0.0.1:2222", addr, good)
		var hk *HostKeyError
		if !errors.As(err, &hk) || hk.Changed {
			t.Fatalf("want an unknown-host error, not a changed key: %v", err)
		}
		// Nor does the CA's own key pass as the host's plain key.
		if err := p.callback(&sshDialState{})("127.0.0.1:2222", addr, ca); err == nil {
			t.Error("the CA key was accepted as a plain host key")
		}
	})

	t.Run("known_hosts content leaves no file behind", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		if _, _, err := newHostKeyPolicy(u, SSHConfig{KnownHosts: line}); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(tmp)
		if len(entries) != 0 {
			t.Errorf("left %d files in TMPDIR", len(entries))
		}
	})
}

// FuzzKnownHostsPolicy: any known_hosts content, host and offered key (plain or a
// certificate) gets a verdict; nothing panics.
func FuzzKnownHostsPolicy(f *testing.F) {
	hostPub, _, _ := ed25519.GenerateKey(rand.Reader)
	hostKey, _ := ssh.NewPublicKey(hostPub)
	caPub, caPriv, _ := ed25519.GenerateKey(rand.Reader)
	caKey, _ := ssh.NewPublicKey(caPub)
	caSigner, _ := ssh.NewSignerFromKey(caPriv)
	cert := &ssh.Certificate{Key: hostKey, CertType: ssh.HostCert, ValidPrincipals: []string{"kvm1.example.com"}, ValidBefore: ssh.CertTimeInfinity}
	_ = cert.SignCert(rand.Reader, caSigner)
	auth := func(k ssh.PublicKey) string { return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))) }
	seeds := []string{
		knownhosts.Line([]string{"kvm1.example.com"}, hostKey),
		knownhosts.Line([]string{"[kvm1.example.com]:2222", "10.0.0.5"}, hostKey),
		"@cert-authority *.example.com " + auth(caKey),
		"@revoked * " + auth(hostKey) + "\n" + knownhosts.Line([]string{"kvm1.example.com"}, hostKey),
		"|1|" + "c2FsdHNhbHRzYWx0c2FsdHNhbHQ=|aGFzaGhhc2hoYXNoaGFzaGhhc2g= " + auth(hostKey),
		"# comment\n\n!kvm2.example.com,*.example.com " + auth(hostKey),
		"@cert-authority @revoked * " + auth(caKey),
	}
	globalKnownHostsFiles = nil // only the fuzzed content is read
	for _, s := range seeds {
		f.Add(s, "kvm1.example.com:22", hostKey.Marshal())
		f.Add(s, "[kvm1.example.com]:2222", cert.Marshal())
	}
	f.Fuzz(func(t *testing.T, content, host string, keyBlob []byte) {
		if content == "" { // would read ~/.ssh/known_hosts
			return
		}
		key, err := ssh.ParsePublicKey(keyBlob)
		if err != nil {
			key = hostKey
		}
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(host, "22")
		}
		u := &URI{Transport: TransportSSH, Host: "kvm1.example.com"}
		for _, insecure := range []bool{false, true} {
			p, _, err := newHostKeyPolicy(u, SSHConfig{KnownHosts: content, KnownHostsFile: "", InsecureSkipHostKeyVerification: insecure})
			if err != nil {
				continue
			}
			_ = p.algorithms(host)
			err = p.callback(&sshDialState{})(host, addr, key)
			var hk *HostKeyError
			if err != nil && !errors.As(err, &hk) {
				t.Fatalf("verdict is not a HostKeyError: %v", err)
			}
			if hk != nil {
				_ = hk.Error()
			}
		}
	})
}

func TestSSHAuthMethods(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	u := mustURI(t, "qemu+ssh://h/system")

	if _, err := newSSHAuth(u, SSHConfig{}); err == nil || !strings.Contains(err.Error(), "no SSH credentials") {
		t.Errorf("no credentials: %v", err)
	}
	if _, err := newSSHAuth(u, SSHConfig{PrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAsecretmaterial\n-----END OPENSSH PRIVATE KEY-----\n"}); err == nil ||
		strings.Contains(err.Error(), "secretmaterial") {
		t.Errorf("bad key content must fail without echoing it: %v", err)
	}
	if _, err := newSSHAuth(u, SSHConfig{PrivateKeyFile: "/nonexistent/id"}); err == nil || !strings.Contains(err.Error(), "/nonexistent/id") {
		t.Errorf("missing key file must be named: %v", err)
	}
	a, err := newSSHAuth(u, SSHConfig{Password: "pw"})
	if err != nil {
		t.Fatalf("password only: %v", err)
	}
	if m := a.methods(&sshDialState{}, &agentConn{}); len(m) != 2 { // password + keyboard-interactive
		t.Errorf("password only: %d methods", len(m))
	}
}
