package libvirt

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError is a host key that known_hosts does not vouch for. It is never retried.
type HostKeyError struct {
	Host        string // host:port as dialled
	KeyType     string
	Fingerprint string // SHA256:... of the key the host offered
	Changed     bool   // known_hosts has other keys for this host: possibly an attack
	Revoked     bool
	Sources     string // where we looked
}

func (e *HostKeyError) Error() string {
	host, port, _ := net.SplitHostPort(e.Host)
	switch {
	case e.Revoked:
		return fmt.Sprintf("ssh host key verification failed for %s: its %s key %s is marked @revoked in %s", e.Host, e.KeyType, e.Fingerprint, e.Sources)
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

// hostKeyPolicy checks host keys against known_hosts content and files, OpenSSH-style.
type hostKeyPolicy struct {
	insecure bool
	check    ssh.HostKeyCallback
	sources  string
}

func newHostKeyPolicy(u *URI, c SSHConfig) (*hostKeyPolicy, []string, error) {
	if c.InsecureSkipHostKeyVerification || u.NoVerify {
		warn := fmt.Sprintf("SSH host key verification is disabled for %s: the provider will talk to whatever answers there, "+
			"and anyone on the path can read and change what it sends (including secrets). Seed known_hosts instead.", u.Address())
		return &hostKeyPolicy{insecure: true}, []string{warn}, nil
	}
	var files, names []string
	if c.KnownHosts != "" {
		// knownhosts only reads files: parse the content from a private file that is
		// removed again before we return; nothing of it stays on disk.
		f, err := os.CreateTemp("", "libvirt-known-hosts-*")
		if err != nil {
			return nil, nil, fmt.Errorf("ssh.known_hosts: %w", err)
		}
		defer os.Remove(f.Name())
		_, werr := f.WriteString(c.KnownHosts)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, nil, fmt.Errorf("ssh.known_hosts: %w", werr)
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
			return nil, nil, fmt.Errorf("known_hosts file %s cannot be read: %w", p, err)
		}
		files = append(files, p)
		names = append(names, p)
	}
	if len(files) == 0 {
		// Default, like OpenSSH. A missing default file just means every host is unknown.
		home, _ := os.UserHomeDir()
		def := home + "/.ssh/known_hosts"
		names = append(names, def)
		if _, err := os.Stat(def); err == nil {
			files = append(files, def)
		}
	}
	p := &hostKeyPolicy{sources: strings.Join(names, ", ")}
	if len(files) > 0 {
		cb, err := knownhosts.New(files...)
		if err != nil {
			return nil, nil, fmt.Errorf("known_hosts (%s) cannot be parsed: %w", p.sources, err)
		}
		p.check = cb
	}
	return p, nil, nil
}

func (p *hostKeyPolicy) callback(host string, remote net.Addr, key ssh.PublicKey) error {
	if p.insecure {
		return nil
	}
	herr := &HostKeyError{Host: host, KeyType: key.Type(), Fingerprint: ssh.FingerprintSHA256(key), Sources: p.sources}
	if p.check == nil {
		return herr
	}
	err := p.check(host, remote, key)
	if err == nil {
		return nil
	}
	var kerr *knownhosts.KeyError
	var rerr *knownhosts.RevokedError
	switch {
	case errors.As(err, &rerr):
		herr.Revoked = true
	case errors.As(err, &kerr):
		herr.Changed = len(kerr.Want) > 0
	default:
		return err
	}
	return herr
}

// placeholderKey is a throwaway key used to ask known_hosts which key types it holds
// for a host (knownhosts answers a mismatch with the keys it wanted).
var placeholderKey = func() ssh.PublicKey {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	k, _ := ssh.NewPublicKey(pub)
	return k
}()

// algorithms makes the server present a key type that known_hosts has for it; otherwise
// a host with both an ed25519 and an ecdsa key, recorded only by one, would look changed.
func (p *hostKeyPolicy) algorithms(addr string) []string {
	if p.insecure || p.check == nil {
		return nil
	}
	err := p.check(addr, &net.TCPAddr{IP: net.IPv4zero}, placeholderKey)
	var kerr *knownhosts.KeyError
	if !errors.As(err, &kerr) || len(kerr.Want) == 0 {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			algos = append(algos, a)
		}
	}
	for _, k := range kerr.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
			add(t)
		default:
			add(t)
		}
	}
	return algos
}
