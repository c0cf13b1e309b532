package rpc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Transport is how the provider reaches the libvirt daemon named by a URI.
type Transport string

const (
	TransportUnix Transport = "unix"
	TransportSSH  Transport = "ssh"
	TransportTCP  Transport = "tcp"
	TransportTLS  Transport = "tls"
)

// Default ports, as libvirt's remote driver uses them.
const (
	defaultTCPPort = "16509"
	defaultTLSPort = "16514"
	defaultSSHPort = "22"
)

// URI is a parsed libvirt connection URI, e.g. qemu+ssh://root@host:2222/system?keyfile=/k.
// Query parameters keep libvirt's own spelling (keyfile, known_hosts, no_verify, socket,
// pkipath) so that URIs copied from virsh work unchanged.
type URI struct {
	Raw       string
	Driver    string    // qemu, test, ...
	Transport Transport // unix when the URI names no host or says +unix
	User      string
	Host      string // empty for local sockets
	Port      string // empty means the transport's default
	Path      string // /system, /session, /default

	Socket     string // ?socket=
	Keyfile    string // ?keyfile= (ssh)
	KnownHosts string // ?known_hosts= (ssh)
	NoVerify   bool   // ?no_verify=1 (ssh host key, tls server certificate)
	PKIPath    string // ?pkipath= (tls)
	// KnownHostsIgnore is ?known_hosts_verify=ignore: no SSH host key verification (ssh only).
	KnownHostsIgnore bool
	// SSHAuth is ?sshauth=, the SSH authentication methods to use in order of preference
	// (sshAuthAgent, sshAuthPrivkey, sshAuthPassword, sshAuthKeyboard); empty means all.
	SSHAuth []string
	// Name is ?name=: the URI the remote daemon opens instead of the one derived from this URI.
	Name string
}

// libvirt's names for the SSH authentication methods of ?sshauth=.
const (
	sshAuthAgent    = "agent"
	sshAuthPrivkey  = "privkey"
	sshAuthPassword = "password"
	sshAuthKeyboard = "keyboard-interactive"
)

// ParseURI parses and validates a libvirt URI. Errors say what form is expected.
func ParseURI(raw string) (*URI, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("libvirt URI is empty: expected e.g. qemu:///system or qemu+ssh://user@host/system")
	}
	// Every message below shows the URI with any password cut out: a URI that does not
	// parse may still hold one, and url.Parse's own errors quote the whole string.
	shown := redactRaw(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("libvirt URI %q is not a valid URI: %s", shown, parseProblem(shown))
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("libvirt URI %q has no driver: expected <driver>[+<transport>]://[user@][host][:port]/<path>, e.g. qemu:///system", shown)
	}
	out := &URI{Raw: raw, Host: u.Hostname(), Port: u.Port(), Path: u.Path}
	if u.User != nil {
		out.User = u.User.Username()
		if _, has := u.User.Password(); has {
			return nil, fmt.Errorf("libvirt URI %q contains a password: put it in the provider's ssh block (password, sensitive) instead", redact(u))
		}
	}

	driver, transport, hasTransport := strings.Cut(u.Scheme, "+")
	out.Driver = driver
	if driver == "" {
		return nil, fmt.Errorf("libvirt URI %q has no driver before '+': expected e.g. qemu+ssh://host/system", shown)
	}
	switch {
	case !hasTransport && out.Host == "":
		out.Transport = TransportUnix
	case !hasTransport:
		// libvirt's default for a URI with a host and no transport is TLS.
		out.Transport = TransportTLS
	default:
		switch Transport(transport) {
		case TransportUnix, TransportSSH, TransportTCP, TransportTLS:
			out.Transport = Transport(transport)
		case "libssh", "libssh2":
			// Same wire protocol and options; we implement it with golang.org/x/crypto/ssh.
			out.Transport = TransportSSH
		default:
			return nil, fmt.Errorf("libvirt URI %q uses transport %q, which this provider does not support: use unix, ssh, tcp or tls", shown, transport)
		}
	}
	if out.Transport == TransportUnix && out.Host != "" {
		return nil, fmt.Errorf("libvirt URI %q names host %q but the unix transport is local: drop the host or use +ssh / +tcp / +tls", shown, out.Host)
	}
	if out.Transport != TransportUnix && out.Host == "" {
		return nil, fmt.Errorf("libvirt URI %q uses transport %s but names no host: expected %s+%s://host/%s", shown, out.Transport, driver, out.Transport, strings.TrimPrefix(out.Path, "/"))
	}
	if out.Port != "" {
		if p, err := strconv.Atoi(out.Port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("libvirt URI %q has port %q: expected a number from 1 to 65535", shown, out.Port)
		}
	}

	q := u.Query()
	for key, vals := range q {
		v := vals[len(vals)-1]
		switch key {
		case "socket":
			out.Socket = v
		case "keyfile":
			out.Keyfile = v
		case "known_hosts":
			out.KnownHosts = v
		case "no_verify":
			b, err := parseBoolParam(v)
			if err != nil {
				return nil, fmt.Errorf("libvirt URI %q: no_verify=%q: expected 0 or 1", shown, v)
			}
			out.NoVerify = b
		case "pkipath":
			out.PKIPath = v
		case "known_hosts_verify":
			switch v {
			case "normal":
			case "ignore":
				out.KnownHostsIgnore = true
			case "auto":
				// libvirt's auto appends the key of an unknown host to known_hosts and connects
				// (trust on first use). This provider never writes known_hosts: a key it did
				// not verify must not become trusted behind the user's back.
				return nil, fmt.Errorf("libvirt URI %q: known_hosts_verify=auto (add unknown host keys to known_hosts) is not supported: "+
					"seed known_hosts instead (ssh-keyscan, then check the fingerprint) and use normal, the default; "+
					"ignore turns verification off", shown)
			default:
				return nil, fmt.Errorf("libvirt URI %q: known_hosts_verify=%q: expected normal, ignore or auto", shown, v)
			}
		case "sshauth":
			methods, err := parseSSHAuth(v)
			if err != nil {
				return nil, fmt.Errorf("libvirt URI %q: sshauth=%q: %w", shown, v, err)
			}
			out.SSHAuth = methods
		case "name":
			if v == "" {
				return nil, fmt.Errorf("libvirt URI %q: name= is empty: expected the URI the remote daemon opens, e.g. qemu:///system", shown)
			}
			out.Name = v
		case "mode", "proxy", "netcat", "command", "no_tty", "tls_priority":
			// Options of libvirt's C client for things this provider does differently, kept so
			// that URIs copied from virsh keep working: mode / proxy / netcat choose the helper
			// run on the remote host (nothing runs there: the provider opens the daemon's socket
			// through the SSH connection itself); command names the ssh binary and no_tty stops
			// it from prompting (the provider speaks SSH itself and never prompts);
			// tls_priority is a GnuTLS cipher string (Go's TLS 1.2+ defaults apply).
		default:
			return nil, fmt.Errorf("libvirt URI %q has unknown query parameter %q: supported are socket, keyfile, known_hosts, known_hosts_verify, "+
				"no_verify, sshauth, pkipath and name (mode, proxy, netcat, command, no_tty and tls_priority are accepted and have no effect)", shown, key)
		}
	}
	return out, nil
}

func parseBoolParam(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", v)
}

// parseSSHAuth reads libvirt's sshauth list: comma-separated method names, most preferred first.
func parseSSHAuth(v string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(v, ",") {
		m = strings.TrimSpace(m)
		switch m {
		case sshAuthAgent, sshAuthPrivkey, sshAuthPassword, sshAuthKeyboard:
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		default:
			return nil, fmt.Errorf("unknown method %q: expected a comma-separated list of agent, privkey, password, keyboard-interactive", m)
		}
	}
	return out, nil
}

// redactRaw cuts the password out of the user:password@ part of a URI string without
// parsing it (it may not parse). It errs on the side of cutting too much.
func redactRaw(raw string) string {
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	} else if i := strings.Index(raw, ":"); i >= 0 {
		start = i + 1
	}
	at := strings.LastIndex(raw, "@")
	if at < start {
		return raw
	}
	user, _, hasPassword := strings.Cut(raw[start:at], ":")
	if !hasPassword {
		return raw
	}
	return raw[:start] + user + ":xxxxx" + raw[at:]
}

// parseProblem says what is wrong with a URI that url.Parse refused, from the redacted
// string: url.Parse's own error quotes all of its input.
func parseProblem(shown string) string {
	_, err := url.Parse(shown)
	var uerr *url.Error
	switch {
	case err == nil:
		return "its user:password part cannot be parsed (and a password does not belong in the URI)"
	case errors.As(err, &uerr):
		return uerr.Err.Error()
	}
	return err.Error()
}

func redact(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return c.String()
}

// DriverURI is the name handed to the daemon's ConnectOpen: the driver and path without
// transport, host or client-side options (the remote daemon opens its local driver), or
// ?name= when given, as libvirt's client does.
func (u *URI) DriverURI() string {
	if u.Name != "" {
		return u.Name
	}
	return u.Driver + "://" + u.Path
}

// Address is host:port for network transports.
func (u *URI) Address() string {
	port := u.Port
	if port == "" {
		switch u.Transport {
		case TransportSSH:
			port = defaultSSHPort
		case TransportTCP:
			port = defaultTCPPort
		case TransportTLS:
			port = defaultTLSPort
		}
	}
	return net.JoinHostPort(u.Host, port)
}

// String is the URI as given, for messages.
func (u *URI) String() string { return u.Raw }

// LocalSocket is the unix socket of a local daemon for this URI: ?socket= when given,
// otherwise where libvirt puts it — the monolithic libvirtd socket (also served by
// virtproxyd) first, then the driver's modular daemon (virtqemud-sock, ...).
func (u *URI) LocalSocket() string {
	if u.Socket != "" {
		return u.Socket
	}
	if u.Path == "/session" {
		dir := os.Getenv("XDG_RUNTIME_DIR")
		if dir == "" {
			home, _ := os.UserHomeDir()
			dir = filepath.Join(home, ".cache")
		}
		return filepath.Join(dir, "libvirt", "libvirt-sock")
	}
	candidates := []string{
		"/run/libvirt/libvirt-sock",
		"/var/run/libvirt/libvirt-sock",
		"/run/libvirt/virt" + u.Driver + "d-sock",
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode()&os.ModeSocket != 0 {
			return c
		}
	}
	return candidates[0]
}

// RemoteSocket is the daemon socket dialled on the far side of an SSH connection.
func (u *URI) RemoteSocket() string {
	if u.Socket != "" {
		return u.Socket
	}
	return "/var/run/libvirt/libvirt-sock"
}
