package rpc

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError is a host key that known_hosts does not vouch for. It is never retried.
type HostKeyError struct {
	Host        string // host:port as dialled
	KeyType     string // of the host key itself (for a certificate: of the certified key)
	Fingerprint string // SHA256:... of the key the host offered (for a certificate: of the certified key)
	Changed     bool   // known_hosts has other keys for this host: possibly an attack
	Revoked     bool   // the key, or the CA that signed its certificate (RevokedCA), is @revoked
	RevokedCA   bool
	Sources     string // where we looked

	// Set when the host presented a certificate that known_hosts did not accept.
	CertAuthority string // SHA256:... of the CA that signed it
	CertProblem   string // why it was not accepted
}

func (e *HostKeyError) Error() string {
	host, port, _ := net.SplitHostPort(e.Host)
	switch {
	case e.RevokedCA:
		return fmt.Sprintf("ssh host key verification failed for %s: its host certificate (for %s key %s) is signed by CA %s, which is marked @revoked in %s", e.Host, e.KeyType, e.Fingerprint, e.CertAuthority, e.Sources)
	case e.Revoked:
		return fmt.Sprintf("ssh host key verification failed for %s: its %s key %s is marked @revoked in %s", e.Host, e.KeyType, e.Fingerprint, e.Sources)
	case e.CertProblem != "":
		return fmt.Sprintf("ssh host key verification failed for %s: it presented a host certificate for %s key %s, signed by CA %s, which is not accepted: %s. "+
			"known_hosts (%s) must list that CA as @cert-authority for this host (or hold the host's own key), and the certificate must name %q as a principal and be valid now.",
			e.Host, e.KeyType, e.Fingerprint, e.CertAuthority, e.CertProblem, e.Sources, host)
	case e.Changed:
		return fmt.Sprintf("ssh host key verification failed for %s: the host offered %s key %s, which does NOT match the key recorded for it in %s. "+
			"The host key has changed: someone may be intercepting the connection, or the host was reinstalled. "+
			"Verify the new fingerprint out of band, then replace the old entry (ssh-keygen -R '[%s]:%s').", e.Host, e.KeyType, e.Fingerprint, e.Sources, host, port)
	default:
		return fmt.Sprintf("ssh host key verification failed for %s: the host is not in known_hosts (%s). It offered %s key %s. "+
			"If that is the host's key, add it (ssh-keyscan -p %s %s >> ~/.ssh/known_hosts, or the provider's ssh.known_hosts), "+
			"or set ssh.insecure_skip_host_key_verification = true (not recommended).", e.Host, e.Sources, e.KeyType, e.Fingerprint, port, host)
	}
}

// Where OpenSSH looks by default (GlobalKnownHostsFile, UserKnownHostsFile). Variables so
// that tests do not depend on the machine's files.
var (
	globalKnownHostsFiles = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}
	userKnownHostsFiles   = []string{"~/.ssh/known_hosts", "~/.ssh/known_hosts2"}
)

// hostKeyPolicy checks host keys against known_hosts content and files, OpenSSH-style:
// plain host keys, @cert-authority lines for host certificates, and @revoked keys.
type hostKeyPolicy struct {
	insecure bool
	db       *knownhosts.HostKeyDB // nil when no known_hosts exists at all
	sources  string
}

// sshDialState is what one SSH dial learns during its handshake.
type sshDialState struct {
	// hostKeyMismatch is set when verification is off and known_hosts records other keys
	// for the host: passwords are then withheld, as OpenSSH does.
	hostKeyMismatch atomic.Bool
}

func newHostKeyPolicy(u *URI, c SSHConfig) (*hostKeyPolicy, []string, error) {
	insecure := c.InsecureSkipHostKeyVerification || u.NoVerify || u.KnownHostsIgnore
	var warnings []string
	if insecure {
		warnings = append(warnings, fmt.Sprintf("SSH host key verification is disabled for %s: the provider will talk to whatever answers there, "+
			"and anyone on the path can read and change what it sends (including secrets). Seed known_hosts instead. "+
			"(A password is still withheld from a host whose key known_hosts records differently, as OpenSSH does.)", u.Address()))
	}
	p, err := loadKnownHosts(u, c)
	if err != nil {
		if !insecure {
			return nil, nil, err
		}
		// Verification is off anyway; without known_hosts a changed key cannot be noticed.
		warnings = append(warnings, fmt.Sprintf("%v: with host key verification disabled this is not an error, but a changed host key cannot be noticed", err))
		p = &hostKeyPolicy{}
	}
	p.insecure = insecure
	return p, warnings, nil
}

func loadKnownHosts(u *URI, c SSHConfig) (*hostKeyPolicy, error) {
	var files, names []string
	if c.KnownHosts != "" {
		// knownhosts only reads files: parse the content from a private file that is
		// removed again before we return; nothing of it stays on disk.
		f, err := os.CreateTemp("", "libvirt-known-hosts-*")
		if err != nil {
			return nil, fmt.Errorf("ssh.known_hosts: %w", err)
		}
		defer os.Remove(f.Name())
		_, werr := f.WriteString(c.KnownHosts)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("ssh.known_hosts: %w", werr)
		}
		files = append(files, f.Name())
		names = append(names, "ssh.known_hosts")
	}
	for _, p := range []string{c.KnownHostsFile, u.KnownHosts} {
		if p == "" {
			continue
		}
		p = expandHome(p)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("known_hosts file %s cannot be read: %w", p, err)
		}
		files = append(files, p)
		names = append(names, p)
	}
	// Default files, like OpenSSH: the user's when nothing else is named, the system-wide
	// ones always. A missing or unreadable default file just holds no hosts.
	defaults := globalKnownHostsFiles
	if len(files) == 0 {
		defaults = append(slices.Clone(userKnownHostsFiles), globalKnownHostsFiles...)
		names = append(names, expandHome(userKnownHostsFiles[0]))
	}
	for _, p := range defaults {
		p = expandHome(p)
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		f.Close()
		files = append(files, p)
		if !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	p := &hostKeyPolicy{sources: strings.Join(names, ", ")}
	if len(files) > 0 {
		db, err := knownhosts.NewDB(files...)
		if err != nil {
			return nil, fmt.Errorf("known_hosts (%s) cannot be parsed: %w", p.sources, err)
		}
		p.db = db
	}
	return p, nil
}

// callback is the HostKeyCallback of one dial. With verification off it accepts every key
// but a revoked one, and notes in st when known_hosts disagrees.
func (p *hostKeyPolicy) callback(st *sshDialState) ssh.HostKeyCallback {
	return func(host string, remote net.Addr, key ssh.PublicKey) error {
		err := p.check(host, remote, key)
		var hk *HostKeyError
		if err == nil || !p.insecure || !errors.As(err, &hk) || hk.Revoked {
			// A key the user marked @revoked is refused even then, as OpenSSH does.
			return err
		}
		if hk.Changed || hk.CertProblem != "" {
			st.hostKeyMismatch.Store(true)
		}
		return nil
	}
}

// check is known_hosts' verdict on the key a host offered: nil when it vouches for it,
// otherwise a *HostKeyError saying why not.
func (p *hostKeyPolicy) check(host string, remote net.Addr, key ssh.PublicKey) error {
	herr := &HostKeyError{Host: host, KeyType: key.Type(), Fingerprint: ssh.FingerprintSHA256(key), Sources: p.sources}
	cert, isCert := key.(*ssh.Certificate)
	if isCert {
		herr.KeyType, herr.Fingerprint = cert.Key.Type(), ssh.FingerprintSHA256(cert.Key)
		herr.CertAuthority = ssh.FingerprintSHA256(cert.SignatureKey)
	}
	if p.db == nil {
		return herr
	}
	if isCert && p.revoked(host, remote, cert.SignatureKey) {
		herr.Revoked, herr.RevokedCA = true, true
		return herr
	}
	if p.revoked(host, remote, key) {
		herr.Revoked = true
		return herr
	}
	var plain, authorities []ssh.PublicKey
	for _, k := range p.db.HostKeys(host) {
		if k.Cert {
			authorities = append(authorities, k.PublicKey)
		} else {
			plain = append(plain, k.PublicKey)
		}
	}
	if isCert && slices.ContainsFunc(authorities, func(k ssh.PublicKey) bool { return keyEqual(k, cert.SignatureKey) }) {
		if cert.CertType != ssh.HostCert {
			herr.CertProblem = "it is not a host certificate"
			return herr
		}
		hostname, _, err := net.SplitHostPort(host)
		if err != nil {
			hostname = host
		}
		// Principal = the host name as dialled, validity, signature, as OpenSSH checks them.
		if err := (&ssh.CertChecker{}).CheckCert(hostname, cert); err != nil {
			herr.CertProblem = strings.TrimPrefix(err.Error(), "ssh: ")
			return herr
		}
		return nil
	}
	// A plain key, or a certificate from a CA known_hosts does not list for this host: the
	// key itself must be recorded (OpenSSH falls back to the certified key the same way).
	// @cert-authority lines vouch for certificates only, never for a plain key.
	raw := key
	if isCert {
		raw = cert.Key
	}
	if slices.ContainsFunc(plain, func(k ssh.PublicKey) bool { return keyEqual(k, raw) }) {
		return nil
	}
	switch {
	case len(plain) > 0:
		herr.Changed = true
	case isCert && len(authorities) > 0:
		herr.CertProblem = "known_hosts lists other certificate authorities for this host"
	}
	return herr
}

// revoked says whether known_hosts marks key @revoked.
func (p *hostKeyPolicy) revoked(host string, remote net.Addr, key ssh.PublicKey) bool {
	if cert, isCert := key.(*ssh.Certificate); isCert {
		key = cert.Key // as OpenSSH: revoking a key revokes its certificates
	}
	var rerr *xknownhosts.RevokedError
	return errors.As(p.db.HostKeyCallback()(host, remote, key), &rerr)
}

func keyEqual(a, b ssh.PublicKey) bool { return bytes.Equal(a.Marshal(), b.Marshal()) }

// algorithms makes the server present a key type that known_hosts has for it (certificate
// types for @cert-authority lines); otherwise a host with both an ed25519 and an ecdsa key,
// recorded only by one, would look changed. With verification off they are a preference
// only, so that a host whose key type changed still connects (keys only, see callback).
func (p *hostKeyPolicy) algorithms(addr string) []string {
	if p.db == nil {
		return nil
	}
	known := p.db.HostKeyAlgorithms(addr)
	if len(known) == 0 {
		return nil
	}
	if !p.insecure {
		return known
	}
	for _, a := range ssh.SupportedAlgorithms().HostKeys {
		if !slices.Contains(known, a) {
			known = append(known, a)
		}
	}
	return known
}
