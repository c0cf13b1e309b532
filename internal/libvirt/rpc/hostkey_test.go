package rpc

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// FuzzKnownHostsPolicy checks every verdict of the host key policy against a model of
// what OpenSSH's ssh(1) decides for the same known_hosts content, host and offered key
// (khOracle below, written from sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT" and ssh's
// check_host_key, and compared with OpenSSH 9.2p1's ssh on some 2800 random khPlanLines
// cases, plain keys and certificates, without a difference; it does not use
// x/crypto/ssh/knownhosts). The known_hosts content is the fuzzed text, after lines that
// the fuzzer's plan bytes pick from structured cases about the host (khPlanLines: the
// offered key, another key of its type, another type, @revoked, @cert-authority, hashed
// names, * ? ! patterns, [host]:port, garbage). On every input:
//   - a key @revoked for the host is refused as revoked, also with verification off;
//   - a host no line names is refused as unknown; one whose lines hold only other keys,
//     as changed; one with a line for exactly the offered key (and no @revoked) is accepted;
//   - every refusal is a *HostKeyError naming the host and the key's fingerprint;
//   - with verification off, everything but a revoked key is accepted, and a changed key
//     is noted (passwords are then withheld).
//
// Where the Go library reads known_hosts differently from ssh in a way that is known and
// kept (khOracle lists them), either reading is accepted. Inputs outside what the model
// covers (uppercase or control bytes, unusual ports, patterns the two read differently
// and no reading models) get the last two checks only.
func FuzzKnownHostsPolicy(f *testing.F) {
	// The seeds that were here before, with keys made afresh on each run.
	hostPub, _, _ := ed25519.GenerateKey(rand.Reader)
	hostKey, _ := ssh.NewPublicKey(hostPub)
	caPub, caPriv, _ := ed25519.GenerateKey(rand.Reader)
	caKey, _ := ssh.NewPublicKey(caPub)
	caSigner, _ := ssh.NewSignerFromKey(caPriv)
	cert := &ssh.Certificate{Key: hostKey, CertType: ssh.HostCert, ValidPrincipals: []string{"kvm1.example.com"}, ValidBefore: ssh.CertTimeInfinity}
	_ = cert.SignCert(rand.Reader, caSigner)
	auth := khAuthorized
	seeds := []string{
		knownhosts.Line([]string{"kvm1.example.com"}, hostKey),
		knownhosts.Line([]string{"[kvm1.example.com]:2222", "10.0.0.5"}, hostKey),
		"@cert-authority *.example.com " + auth(caKey),
		"@revoked * " + auth(hostKey) + "\n" + knownhosts.Line([]string{"kvm1.example.com"}, hostKey),
		"|1|" + "c2FsdHNhbHRzYWx0c2FsdHNhbHQ=|aGFzaGhhc2hoYXNoaGFzaGhhc2g= " + auth(hostKey),
		"# comment\n\n!kvm2.example.com,*.example.com " + auth(hostKey),
		"@cert-authority @revoked * " + auth(caKey),
	}
	for _, s := range seeds {
		f.Add(s, "kvm1.example.com:22", hostKey.Marshal(), []byte{})
		f.Add(s, "[kvm1.example.com]:2222", cert.Marshal(), []byte{})
	}

	// One seed for each case, with the fixed keys of khKeys.
	ks := newKHKeys(f)
	k, o, e1, e2 := ks.k, ks.o, ks.e1, ks.e2
	ca1, ca2 := ks.ca1.PublicKey(), ks.ca2.PublicKey()
	const h22, h2222 = "kvm1.example.com:22", "[kvm1.example.com]:2222"
	line := func(field string, key ssh.PublicKey) string { return field + " " + auth(key) }
	hostCert := func(key ssh.PublicKey, ca ssh.Signer, principal string) []byte {
		return ks.cert(key, ca, ssh.HostCert, principal).Marshal()
	}
	for _, c := range []struct {
		content, host string
		key           ssh.PublicKey
		blob          []byte // the offered key when not key
	}{
		// A line for the host with exactly the offered key: accepted.
		{content: line("kvm1.example.com", k), host: h22, key: k},
		{content: line("[kvm1.example.com]:2222", k), host: h2222, key: k},
		{content: line("elsewhere.example.com,kvm1.example.com", k), host: h22, key: k},
		{content: line(khHashed("kvm1.example.com", 7), k), host: h22, key: k},
		{content: line(khHashed("[kvm1.example.com]:2222", 9), k), host: h2222, key: k},
		{content: line("*.example.com", k), host: h22, key: k},
		{content: line("kvm?.example.com", k), host: h22, key: k},
		{content: line("[kvm1.*]:2222", k), host: h2222, key: k},
		{content: line("10.0.0.5", k), host: "10.0.0.5:22", key: k},
		{content: line("[fe80::1]:2222", k), host: "[fe80::1]:2222", key: k},
		{content: line("kvm1.example.com", e1), host: h22, key: e1},
		{content: "garbage\n" + line("kvm1.example.com", k) + "\nkvm1.example.com ssh-ed25519 AAAA", host: h22, key: k},
		// Only other keys of the offered key's type: changed.
		{content: line("kvm1.example.com", o), host: h22, key: k},
		{content: line("[kvm1.example.com]:2222", o), host: h2222, key: k},
		{content: line(khHashed("kvm1.example.com", 3), o), host: h22, key: k},
		{content: line("kvm1.example.com", e2), host: h22, key: e1},
		// Another type only: ssh calls that changed too.
		{content: line("kvm1.example.com", e1), host: h22, key: k},
		// No line for the host: unknown.
		{content: line("elsewhere.example.com", k), host: h22, key: k},
		{content: line("[kvm1.example.com]:2223", k), host: h2222, key: k},
		{content: line("*.example.com,!kvm1.*", k), host: h22, key: k},
		{content: line(khHashed("elsewhere.example.com", 5), k), host: h22, key: k},
		{content: "@cert-authority kvm1.example.com " + auth(ca1), host: h22, key: k},
		// A port-less line at another port: ssh's retry without the port accepts the key;
		// the policy may refuse it as unknown.
		{content: line("kvm1.example.com", k), host: h2222, key: k},
		// @revoked: refused, also with verification off.
		{content: "@revoked * " + auth(k) + "\n" + line("kvm1.example.com", k), host: h22, key: k},
		{content: "@revoked kvm1.example.com " + auth(k), host: h22, key: k},
		{content: "@revoked [kvm1.example.com]:2222\t" + auth(k) + "\n" + line("[kvm1.example.com]:2222", k), host: h2222, key: k},
		{content: "@revoked elsewhere.example.com " + auth(k) + "\n" + line("kvm1.example.com", k), host: h22, key: k},
		// Certificates.
		{content: "@cert-authority *.example.com " + auth(ca1), host: h22, blob: hostCert(k, ks.ca1, "kvm1.example.com")},
		{content: "@cert-authority [kvm1.example.com]:2222 " + auth(ca1), host: h2222, blob: hostCert(k, ks.ca1, "kvm1.example.com")},
		{content: "@cert-authority *.example.com " + auth(ca1), host: h22, blob: hostCert(k, ks.ca1, "kvm2.example.com")},
		{content: "@cert-authority *.example.com " + auth(ca1) + "\n@revoked * " + auth(ca1), host: h22, blob: hostCert(k, ks.ca1, "kvm1.example.com")},
		{content: "@cert-authority *.example.com " + auth(ca2) + "\n" + line("kvm1.example.com", k), host: h22, blob: hostCert(k, ks.ca1, "kvm1.example.com")},
		// Host patterns the library reads differently from ssh (khOracle): either verdict.
		{content: line("[kvm1.example.com]:2222,!*", k), host: h2222, key: k},  // ssh: * excludes [host]:port
		{content: line("kvm1,!kvm1*", k), host: "kvm1:22", key: k},             // ssh: a final * matches nothing too
		{content: line("*", o) + "\n" + line("kvm1*", k), host: h2222, key: k}, // ssh: * names [host]:port, kvm1* does not
		// Nothing but garbage: a configuration error, or unknown.
		{content: "garbage\n@unknown * " + auth(k), host: h22, key: k},
	} {
		blob := c.blob
		if blob == nil {
			blob = c.key.Marshal()
		}
		f.Add(c.content, c.host, blob, []byte{})
	}
	// Structured cases: 4 plan bytes a line (kind, host field, key, variant; see khPlanLines);
	// the first byte of a key blob that is no key picks the offered key (khKeys.offered).
	for _, plan := range [][]byte{
		{0, 0, 0, 0},                         // the offered key
		{0, 0, 2, 0},                         // another ed25519 key
		{0, 0, 3, 0},                         // an ecdsa key
		{0, 3, 0, 0},                         // another host
		{3, 4, 0, 0, 0, 0, 0, 0},             // @revoked *, and the key
		{3, 1, 0, 0},                         // @revoked for the bare host name only
		{4, 5, 5, 3, 0, 0, 2, 0},             // @cert-authority kvm*, another key
		{0, 8, 0, 9, 0, 9, 2, 1},             // hashed names
		{0, 10, 0, 0x15},                     // host,!kvm1.*: excluded
		{0, 11, 0, 0x07, 0, 7, 2, 2},         // lists and ?
		{0, 2, 0, 0, 0, 6, 2, 0x85},          // [host]:other port, bracketed *
		{5, 0, 0, 3, 5, 0, 0, 4, 0, 0, 0, 0}, // garbage, then the key
		{6, 0, 0, 1, 7, 0, 0, 0},             // comment, indented line with a comment
	} {
		for _, host := range []string{h22, h2222, "[fe80::1]:2222"} {
			for _, sel := range []byte{0, 2, 3} {
				f.Add("", host, []byte{sel}, plan)
			}
		}
	}

	saved := globalKnownHostsFiles
	globalKnownHostsFiles = nil // only the fuzzed content is read
	f.Cleanup(func() { globalKnownHostsFiles = saved })
	u := &URI{Transport: TransportSSH, Host: "kvm1.example.com"}

	f.Fuzz(func(t *testing.T, content, host string, keyBlob, plan []byte) {
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(host, "22")
		}
		hostname, port, hostOK := khHost(host)
		if len(plan) > 0 && !hostOK {
			// Structured cases stay where the model can judge them: one of a few hosts,
			// and only the fuzzed lines of printable text.
			host = [...]string{h22, h2222, "10.0.0.5:22", "[fe80::1]:2222", "kvm1:22"}[int(plan[0])%5]
			hostname, port, hostOK = khHost(host)
		}
		if len(plan) > 0 {
			content = strings.Join(slices.DeleteFunc(strings.Split(content, "\n"), func(l string) bool {
				return strings.ContainsFunc(l, func(r rune) bool { return r != '\t' && (r < 0x20 || r > 0x7e) })
			}), "\n")
		}
		key := ks.offered(keyBlob, hostname)
		lines := khPlanLines(plan, hostname, port, ks.pool(key))
		if content != "" {
			lines = append(lines, content)
		}
		known := strings.Join(lines, "\n")
		if known == "" { // would read ~/.ssh/known_hosts
			return
		}
		plain := key
		if c, ok := key.(*ssh.Certificate); ok {
			plain = c.Key
		}

		verdict := func(insecure bool) (khVerdict, *sshDialState) {
			p, _, err := newHostKeyPolicy(u, SSHConfig{KnownHosts: known, InsecureSkipHostKeyVerification: insecure})
			if err != nil {
				if insecure {
					t.Fatalf("with verification off the policy still failed: %v", err)
				}
				return khConfigError, nil
			}
			_ = p.algorithms(host)
			st := &sshDialState{}
			err = p.callback(st)(host, addr, key)
			if err == nil {
				return khAccept, st
			}
			var hk *HostKeyError
			if !errors.As(err, &hk) {
				t.Fatalf("verdict is not a HostKeyError: %v", err)
			}
			fp := ssh.FingerprintSHA256(plain)
			if msg := hk.Error(); hk.Host != host || hk.Fingerprint != fp || !strings.Contains(msg, host) || !strings.Contains(msg, fp) {
				t.Fatalf("refusal does not name host %s and fingerprint %s: %+v: %s", host, fp, hk, msg)
			}
			switch {
			case hk.Revoked:
				return khRevoked, st
			case hk.CertProblem != "":
				return khCertRefused, st
			case hk.Changed:
				return khChanged, st
			}
			return khUnknown, st
		}
		got, _ := verdict(false)
		gotInsecure, st := verdict(true)

		describe := func() string {
			return fmt.Sprintf("known_hosts:\n\t%s\nhost %s, offered %s", strings.ReplaceAll(known, "\n", "\n\t"), host, khDescribe(key))
		}
		if hostOK {
			if entries, ok := khParse(known, hostname, port); ok && khKeyOK(key) {
				want, allowed := khOracle(entries, hostname, port, key)
				// The library refuses a whole known_hosts it cannot parse (ssh skips the bad
				// line): a refusal, whatever ssh would say of the rest — stricter, never looser.
				if got == khConfigError && khLibRefusesFile(t, known) {
					allowed[khConfigError] = true
				}
				if !allowed[got] {
					t.Fatalf("%s\n%s: ssh says %v (allowed: %v), the policy says %v", describe(), want.property(), want, khSet(allowed), got)
				}
				if want == khRevoked && gotInsecure != khRevoked {
					t.Fatalf("%s\na key @revoked for the host must be refused with verification off too; got %v", describe(), gotInsecure)
				}
			}
		}
		// Verification off: the verdict with it on decides, whatever the model says.
		switch {
		case got == khRevoked && gotInsecure != khRevoked:
			t.Fatalf("%s\nwith verification off a revoked key was not refused: %v", describe(), gotInsecure)
		case got != khRevoked && gotInsecure != khAccept:
			t.Fatalf("%s\nwith verification off a %v key was refused: %v", describe(), got, gotInsecure)
		case got != khRevoked && st.hostKeyMismatch.Load() != (got == khChanged || got == khCertRefused):
			t.Fatalf("%s\nwith verification off, verdict %v, the mismatch flag is %v", describe(), got, st.hostKeyMismatch.Load())
		}
	})
}

// khVerdict is a verdict on a host key: ssh's, or the policy's.
type khVerdict int

const (
	khAccept      khVerdict = iota
	khUnknown               // no line for the host
	khChanged               // lines for the host, none with this key
	khRevoked               // @revoked
	khCertRefused           // the policy only: a certificate refused (HostKeyError.CertProblem)
	khConfigError           // the policy only: known_hosts has lines and none can be read
)

func (v khVerdict) String() string {
	return [...]string{"accepted", "unknown host", "changed key", "revoked", "certificate refused", "known_hosts unreadable"}[v]
}

func (v khVerdict) property() string {
	switch v {
	case khRevoked:
		return "a key @revoked for the host must be refused as revoked"
	case khUnknown:
		return "a host that no line names must be refused as unknown"
	case khChanged:
		return "a host whose lines hold only other keys must be refused as a changed key"
	}
	return "a host with a line for exactly the offered key must be accepted"
}

func khSet(s map[khVerdict]bool) []khVerdict {
	var out []khVerdict
	for v := khAccept; v <= khConfigError; v++ {
		if s[v] {
			out = append(out, v)
		}
	}
	return out
}

func khAuthorized(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

func khDescribe(k ssh.PublicKey) string {
	if c, ok := k.(*ssh.Certificate); ok {
		typ := "host"
		if c.CertType != ssh.HostCert {
			typ = "user"
		}
		return fmt.Sprintf("%s certificate for %s %s, CA %s, principals %q, valid %d..%d",
			typ, c.Key.Type(), ssh.FingerprintSHA256(c.Key), ssh.FingerprintSHA256(c.SignatureKey), c.ValidPrincipals, c.ValidAfter, c.ValidBefore)
	}
	return k.Type() + " " + ssh.FingerprintSHA256(k)
}

// khHashed is a hashed known_hosts name, |1|salt|HMAC-SHA1(salt, name), as ssh-keygen -H
// writes it.
func khHashed(name string, salt byte) string {
	s := bytes.Repeat([]byte{salt}, sha1.Size)
	mac := hmac.New(sha1.New, s)
	mac.Write([]byte(name))
	return "|1|" + base64.StdEncoding.EncodeToString(s) + "|" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// khKeys are the fuzz target's fixed keys, the same on every run so that a saved input
// means the same thing later.
type khKeys struct {
	k, o, e1, e2 ssh.PublicKey // k and o ed25519, e1 and e2 ecdsa
	ca1, ca2     ssh.Signer    // ed25519 certificate authorities
}

func newKHKeys(tb testing.TB) *khKeys {
	tb.Helper()
	ed := func(seed byte) ssh.Signer {
		s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	ec := func(line string) ssh.PublicKey {
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			tb.Fatal(err)
		}
		return k
	}
	return &khKeys{
		k:   ed(1).PublicKey(),
		o:   ed(2).PublicKey(),
		e1:  ec("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBA4gVdVcxtspdR76p0pADkxtkoAI9UF9gklH+TLxbOc7d9fp8ven9aVFWxzMz/0JdfROItyNsi4c0yTE+ZOdeTo="),
		e2:  ec("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBDBQPHeLH6FjxYyic1lCTpjkyyXuoO80MCg2ZHm1yl91Tviz1S45xeEneuVbsbSziAZnsMGun8iSOev8O8nBoYU="),
		ca1: ed(3),
		ca2: ed(4),
	}
}

func (ks *khKeys) cert(key ssh.PublicKey, ca ssh.Signer, typ uint32, principal string) *ssh.Certificate {
	if principal == "" {
		// A host that parses to no name (the fuzzer finds some): x/crypto refuses to sign an
		// empty principal, and no principal at all would mean any host.
		principal = "no-hostname.invalid"
	}
	c := &ssh.Certificate{Key: key, CertType: typ, KeyId: "fuzz", ValidPrincipals: []string{principal}, ValidBefore: ssh.CertTimeInfinity}
	if err := c.SignCert(rand.Reader, ca); err != nil {
		panic(err)
	}
	return c
}

// offered is the key the host offers: keyBlob if it is a key, else the variant its first
// byte picks.
func (ks *khKeys) offered(keyBlob []byte, hostname string) ssh.PublicKey {
	if k, err := ssh.ParsePublicKey(keyBlob); err == nil {
		return k
	}
	sel := byte(0)
	if len(keyBlob) > 0 {
		sel = keyBlob[0]
	}
	switch sel % 8 {
	case 1:
		return ks.e1
	case 2:
		return ks.cert(ks.k, ks.ca1, ssh.HostCert, hostname)
	case 3:
		return ks.cert(ks.k, ks.ca1, ssh.HostCert, "other.example.com") // not for this host
	case 4:
		return ks.cert(ks.k, ks.ca2, ssh.HostCert, hostname)
	case 5:
		return ks.cert(ks.k, ks.ca1, ssh.UserCert, hostname) // not a host certificate
	case 6:
		return ks.cert(ks.e1, ks.ca1, ssh.HostCert, hostname)
	case 7:
		return ks.o
	}
	return ks.k
}

// pool is the keys plan lines choose from: the offered (plain) key first.
func (ks *khKeys) pool(offered ssh.PublicKey) []ssh.PublicKey {
	plain := offered
	c, isCert := offered.(*ssh.Certificate)
	if isCert {
		plain = c.Key
	}
	pool := []ssh.PublicKey{plain, ks.k, ks.o, ks.e1, ks.e2, ks.ca1.PublicKey(), ks.ca2.PublicKey()}
	if isCert {
		pool = append(pool, c.SignatureKey)
	}
	return pool
}

// khPlanLines turns plan bytes into known_hosts lines about hostname:port, 4 bytes a line:
// kind (a key line, @revoked, @cert-authority, garbage, a comment), host field
// (khPlanField), key (an index into pool), variant.
func khPlanLines(plan []byte, hostname, port string, pool []ssh.PublicKey) []string {
	if hostname == "" {
		hostname = "x"
	}
	var lines []string
	for i := 0; i < len(plan) && len(lines) < 32; i += 4 {
		var b [4]byte // a short last line is padded with zeros
		copy(b[:], plan[i:])
		kind, form, ki, aux := b[0], b[1], b[2], b[3]
		key := pool[int(ki)%len(pool)]
		sep := " "
		if aux&0x40 != 0 {
			sep = "\t"
		}
		field := khPlanField(form, aux, hostname, port)
		entry := field + sep + khAuthorized(key)
		switch kind % 8 {
		case 3:
			entry = "@revoked " + entry
		case 4:
			entry = "@cert-authority " + entry
		case 5:
			entry = khGarbage(aux, field, key)
		case 6:
			entry = [...]string{"", "# " + entry, " \t", "#" + field}[aux%4]
		case 7:
			entry = "  " + entry + " a comment"
		}
		lines = append(lines, entry)
	}
	return lines
}

// khPlanField is a known_hosts host field for hostname:port, by form: its name there,
// the bare name, another port, another host, *, name prefix*, *suffix, a ? in the name
// (bracketed with the port or not, by aux's top bit), hashed names, lists, negations.
func khPlanField(form, aux byte, hostname, port string) string {
	name := hostname
	if port != "22" {
		name = "[" + hostname + "]:" + port
	}
	glob := func(p string) string {
		if port != "22" && (aux&0x80 != 0 || strings.Count(p, ":") == 1) {
			return "[" + p + "]:" + port
		}
		if strings.Count(p, ":") == 1 { // host:port to the library, a name to ssh
			return "*"
		}
		return p
	}
	n := int(aux&0x3f) % len(hostname)
	switch form % 12 {
	case 0:
		return name
	case 1:
		return hostname
	case 2:
		other := "2222"
		if port == "2222" {
			other = "2223"
		}
		return "[" + hostname + "]:" + other
	case 3:
		return [...]string{"other.example.com", "10.9.8.7", hostname + "x", "x" + hostname}[aux%4]
	case 4:
		return glob("*")
	case 5:
		return glob(hostname[:n] + "*")
	case 6:
		return glob("*" + hostname[n:])
	case 7:
		return glob(hostname[:n] + "?" + hostname[n+1:])
	case 8:
		return khHashed(name, aux)
	case 9:
		return khHashed([...]string{hostname, "other.example.com"}[aux&1], aux)
	case 10: // a match, then an exclusion
		return khPlanField(aux%8, aux, hostname, port) + ",!" + khPlanField(aux>>3%8, aux, hostname, port)
	default: // another host, then a match
		neg := ""
		if aux&1 != 0 {
			neg = "!"
		}
		return neg + "other.example.com," + khPlanField(aux>>1%8, aux, hostname, port)
	}
}

func khGarbage(aux byte, field string, key ssh.PublicKey) string {
	blob := base64.StdEncoding.EncodeToString(key.Marshal())
	switch aux % 9 {
	case 0:
		return "garbage"
	case 1:
		return field + " " + key.Type()
	case 2:
		return field + " " + key.Type() + " AAAA"
	case 3:
		return field + " ssh-rsa " + blob // wrong type
	case 4:
		return "@cert-authority @revoked " + field + " " + khAuthorized(key)
	case 5:
		return "@unknown " + field + " " + khAuthorized(key)
	case 6:
		return field + " " + key.Type() + " " + blob[:len(blob)-4]
	case 7:
		return "|1|bad|hash " + khAuthorized(key)
	}
	return "|2|" + strings.TrimPrefix(khHashed("x", aux), "|1|") + " " + khAuthorized(key)
}

// ---- The oracle: ssh(1)'s verdict ----

// khEntry is a known_hosts line that ssh reads.
type khEntry struct {
	marker string // "", "@cert-authority" or "@revoked"
	field  string // host patterns, or one hashed name
	key    ssh.PublicKey
}

func khHost(host string) (hostname, port string, ok bool) {
	hostname, port, err := net.SplitHostPort(host)
	if err != nil || !khPort(port) || hostname == "" {
		return hostname, port, false
	}
	chars := "abcdefghijklmnopqrstuvwxyz0123456789.-"
	if strings.Contains(hostname, ":") {
		chars = "0123456789abcdef:."
		if net.ParseIP(hostname) == nil {
			return hostname, port, false
		}
	}
	return hostname, port, khOnly(hostname, chars)
}

func khOnly(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.Contains(chars, s[i:i+1]) {
			return false
		}
	}
	return true
}

// khPort: a port as ssh prints it (the library compares ports as strings).
func khPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 65536 && strconv.Itoa(n) == p
}

// khKeyOK: the offered key is one both ssh and the library take as it is: ed25519 or
// ECDSA, or a certificate for one, signed by one, whose signature holds, without critical
// options, with literal principals and no validity bound near now or past 2^63.
func khKeyOK(k ssh.PublicKey) bool {
	plainOK := func(k ssh.PublicKey) bool {
		switch k.Type() {
		case ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521:
			return true
		}
		return false
	}
	c, ok := k.(*ssh.Certificate)
	if !ok {
		return plainOK(k)
	}
	if !plainOK(c.Key) || !plainOK(c.SignatureKey) || len(c.CriticalOptions) > 0 || len(c.ValidPrincipals) == 0 {
		return false
	}
	for _, p := range c.ValidPrincipals {
		if strings.ContainsAny(p, "*?") {
			return false
		}
	}
	const margin = 3600
	now := time.Now().Unix()
	after, before := int64(c.ValidAfter), int64(c.ValidBefore)
	if after < 0 || (c.ValidBefore != ssh.CertTimeInfinity && before < 0) || c.ValidAfter >= c.ValidBefore ||
		(after > now-margin && after < now+margin) || (before > now-margin && before < now+margin) {
		return false
	}
	// The signature, checked at a moment the certificate is valid, for a name it has.
	at := ssh.CertChecker{Clock: func() time.Time { return time.Unix(after, 0) }}
	return at.CheckCert(c.ValidPrincipals[0], c) == nil
}

// khParse reads known_hosts content as ssh does. ok is false when the content holds what
// ssh and the library may read differently and the model does not cover: bytes other than
// printable ASCII and tab, uppercase names (ssh lowercases them), base64 with stray bits,
// key types other than ed25519 and ECDSA, certificates as keys, and host patterns other
// than (!)name-or-glob, (!)[name-or-glob]:port (port not 22) and well-formed hashed names.
func khParse(content, hostname, port string) (entries []khEntry, ok bool) {
	for _, line := range strings.Split(content, "\n") {
		if len(line) > 4096 {
			return nil, false
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
				return nil, false
			}
		}
		fields := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		marker := ""
		if strings.HasPrefix(fields[0], "@") {
			if fields[0] != "@cert-authority" && fields[0] != "@revoked" {
				continue // unknown marker: the line is skipped
			}
			// ssh ends a marker at the first space of the line, or at the first tab if it
			// has no space: a tab after it and a space later, and ssh skips the line.
			if rest := strings.TrimLeft(line, " \t")[len(fields[0]):]; rest != "" && rest[0] == '\t' && strings.Contains(rest, " ") {
				return nil, false
			}
			marker, fields = fields[0], fields[1:]
		}
		if len(fields) < 3 || strings.HasPrefix(fields[0], "@") {
			continue
		}
		field, typ, blob := fields[0], fields[1], fields[2]
		raw, err := base64.StdEncoding.Strict().DecodeString(blob)
		if err != nil {
			if _, lax := base64.StdEncoding.DecodeString(blob); lax == nil {
				return nil, false // non-zero padding bits: ssh skips the line, Go reads it
			}
			continue
		}
		key, err := ssh.ParsePublicKey(raw)
		if err != nil {
			continue
		}
		if _, isCert := key.(*ssh.Certificate); isCert || !khKeyOK(key) {
			return nil, false
		}
		if key.Type() != typ {
			continue
		}
		if !khFieldOK(field, hostname, port) {
			return nil, false
		}
		entries = append(entries, khEntry{marker: marker, field: field, key: key})
	}
	return entries, true
}

func khFieldOK(field, hostname, port string) bool {
	if strings.HasPrefix(field, "|") {
		// ssh compares the field with |1|base64(salt)|base64(hash) as it would write it; the
		// library decodes and compares bytes. They agree unless a sloppily encoded field
		// holds the right hash.
		for _, name := range []string{hostname, "[" + hostname + "]:" + port} {
			if khHashMatch(field, name, true) != khHashMatch(field, name, false) {
				return false
			}
		}
		return true
	}
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789.-*?:"
	for _, p := range strings.Split(field, ",") {
		if strings.HasPrefix(p, "!") {
			p = p[1:]
			if p == "" {
				return false // a negation of nothing: the library refuses the line
			}
		}
		if strings.HasPrefix(p, "[") {
			i := strings.LastIndex(p, "]:")
			if i < 0 || !khOnly(p[1:i], chars) || !khPort(p[i+2:]) || p[i+2:] == "22" {
				return false
			}
		} else if !khOnly(p, chars) || strings.Count(p, ":") == 1 {
			return false // host:port is [host]:port to the library, a name to ssh
		}
	}
	return true
}

// khHashMatch: does the hashed field name this name, to ssh (strict) or to the library.
func khHashMatch(field, name string, strict bool) bool {
	parts := strings.Split(field, "|")
	if len(parts) != 4 || parts[0] != "" || parts[1] != "1" {
		return false
	}
	enc := base64.StdEncoding
	salt, err1 := enc.DecodeString(parts[2])
	hash, err2 := enc.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	if strict && (len(salt) != sha1.Size || enc.EncodeToString(salt) != parts[2] || enc.EncodeToString(hash) != parts[3]) {
		return false
	}
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(name))
	return hmac.Equal(mac.Sum(nil), hash)
}

// khGlob is ssh's match_pattern: * any run of characters, ? one. lib: as
// x/crypto/ssh/knownhosts matches, where a * at the end of a pattern matches one
// character at least.
func khGlob(s, pat string, lib bool) bool {
	for {
		if pat == "" {
			return s == ""
		}
		if pat[0] == '*' {
			pat = strings.TrimLeft(pat, "*")
			if pat == "" {
				return !lib || s != ""
			}
			for i := 0; i < len(s); i++ {
				if khGlob(s[i:], pat, lib) {
					return true
				}
			}
			return false
		}
		if s == "" || (pat[0] != '?' && pat[0] != s[0]) {
			return false
		}
		s, pat = s[1:], pat[1:]
	}
}

// khModel is ssh's check_host_key over entries, for hostname:port. With lib, host patterns
// are read the way the Go library reads them (see khOracle).
type khModel struct {
	entries        []khEntry
	hostname, port string
	lib            bool
}

// matches: does the entry's host field name the host, looked up as [host]:port (withPort,
// port not 22) or as the bare host name.
func (m *khModel) matches(e khEntry, withPort bool) bool {
	bracketed := withPort && m.port != "22"
	name := m.hostname
	if bracketed {
		name = "[" + m.hostname + "]:" + m.port
	}
	if strings.HasPrefix(e.field, "|") {
		return khHashMatch(e.field, name, true)
	}
	matched := false
	for _, p := range strings.Split(e.field, ",") {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		var hit bool
		if !m.lib {
			hit = khGlob(name, p, false)
		} else if i := strings.LastIndex(p, "]:"); strings.HasPrefix(p, "[") && i > 0 {
			hit = bracketed && p[i+2:] == m.port && khGlob(m.hostname, p[1:i], true)
		} else {
			hit = !bracketed && khGlob(m.hostname, p, true)
		}
		if hit && neg {
			return false
		}
		matched = matched || hit
	}
	return matched
}

type khStatus int

const (
	khNew khStatus = iota
	khOK
	khMismatch
	khRevokedKey
)

// status is check_key_in_hostkeys: the entries for the name, as the key finds them.
func (m *khModel) status(key ssh.PublicKey, withPort bool) khStatus {
	cert, isCert := key.(*ssh.Certificate)
	st := khNew
	for _, e := range m.entries {
		if !m.matches(e, withPort) {
			continue
		}
		switch {
		case e.marker == "@revoked":
			if keyEqual(e.key, key) || (isCert && (keyEqual(e.key, cert.Key) || keyEqual(e.key, cert.SignatureKey))) {
				return khRevokedKey
			}
		case st == khOK:
		case isCert:
			if e.marker == "@cert-authority" && keyEqual(e.key, cert.SignatureKey) {
				st = khOK
			}
		case e.marker == "":
			if keyEqual(e.key, key) {
				st = khOK
			} else {
				st = khMismatch
			}
		}
	}
	return st
}

type khResult struct {
	v           khVerdict
	viaPortless bool // accepted by the retry without the port
	viaCA       bool // a certificate accepted by its CA
}

// check is check_host_key: a certificate that no CA vouches for is checked again as its
// plain key; a host unknown at a port other than 22 is looked up again without the port,
// and accepted only when that finds the key itself.
func (m *khModel) check(key ssh.PublicKey, withPort bool) khResult {
	cert, isCert := key.(*ssh.Certificate)
	switch m.status(key, withPort) {
	case khOK:
		if !isCert {
			return khResult{v: khAccept}
		}
		now := uint64(time.Now().Unix())
		if cert.CertType == ssh.HostCert && slices.Contains(cert.ValidPrincipals, m.hostname) && cert.ValidAfter <= now && now < cert.ValidBefore {
			return khResult{v: khAccept, viaCA: true}
		}
		return m.check(cert.Key, withPort)
	case khRevokedKey:
		return khResult{v: khRevoked}
	case khMismatch:
		return khResult{v: khChanged}
	}
	if withPort && m.port != "22" {
		if r := m.check(key, false); r.v == khAccept {
			r.viaPortless = true
			return r
		}
	}
	if isCert {
		return m.check(cert.Key, withPort)
	}
	return khResult{v: khUnknown}
}

// khLibRefusesFile reports whether x/crypto's knownhosts refuses known as a file (a line
// it cannot parse): then the policy refuses every host with it, as "known_hosts unreadable".
func khLibRefusesFile(t *testing.T, known string) bool {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "known_hosts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(known); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = knownhosts.New(f.Name())
	return err != nil
}

// khOracle is ssh's verdict on the key the host offers, and the verdicts the policy may
// give: ssh's, and where the Go library (x/crypto/ssh/knownhosts with
// github.com/skeema/knownhosts) is known to read known_hosts differently, the refusal it
// gives instead, or ssh's verdict under the library's reading of host patterns:
//   - a key @revoked on any line is refused, whatever hosts the line names (ssh: only
//     lines for this host);
//   - ssh's retry without the port at a port other than 22 is narrower (only wildcard
//     lines): a key accepted only by that retry may be refused, as unknown, changed or a
//     refused certificate, and a host unknown at its port whose bare name has other keys
//     may be called changed;
//   - a certificate from a CA that known_hosts lists for the host, but that cannot be
//     accepted, is refused (ssh tries the certified key next), unless ssh accepts it by
//     a CA listed for the host with its port;
//   - host patterns: the library reads a pattern without [ ]:port as one for port 22 only,
//     so at another port it neither matches nor excludes (ssh globs it over "[host]:port");
//     and a * at the end of a pattern matches one character at least.
func khOracle(entries []khEntry, hostname, port string, key ssh.PublicKey) (khVerdict, map[khVerdict]bool) {
	plain := key
	cert, isCert := key.(*ssh.Certificate)
	if isCert {
		plain = cert.Key
	}
	allowed := map[khVerdict]bool{}
	var want khVerdict
	for _, lib := range []bool{false, true} {
		m := &khModel{entries: entries, hostname: hostname, port: port, lib: lib}
		r := m.check(key, true)
		if !lib {
			want = r.v
		}
		allowed[r.v] = true
		if r.viaPortless {
			allowed[khUnknown], allowed[khChanged], allowed[khCertRefused] = true, true, isCert
		}
		if port != "22" && m.status(plain, true) == khNew {
			for _, e := range entries {
				if e.marker == "" && !keyEqual(e.key, plain) && m.matches(e, false) {
					allowed[khChanged] = true
				}
			}
		}
		for _, e := range entries {
			switch {
			case e.marker == "@revoked" && (keyEqual(e.key, plain) || (isCert && keyEqual(e.key, cert.SignatureKey))):
				allowed[khRevoked] = true
			case e.marker == "@cert-authority" && isCert && (m.matches(e, true) || m.matches(e, false)) &&
				!(r.v == khAccept && r.viaCA && !r.viaPortless):
				allowed[khCertRefused] = true
			}
		}
	}
	if len(entries) == 0 {
		allowed[khConfigError] = true
	}
	return want, allowed
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
