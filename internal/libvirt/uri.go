package libvirt

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
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
}

// ParseURI parses and validates a libvirt URI. Errors say what form is expected.
func ParseURI(raw string) (*URI, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("libvirt URI is empty: expected e.g. qemu:///system or qemu+ssh://user@host/system")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("libvirt URI %q is not a valid URI: %w", raw, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("libvirt URI %q has no driver: expected <driver>[+<transport>]://[user@][host][:port]/<path>, e.g. qemu:///system", raw)
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
		return nil, fmt.Errorf("libvirt URI %q has no driver before '+': expected e.g. qemu+ssh://host/system", raw)
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
			return nil, fmt.Errorf("libvirt URI %q uses transport %q, which this provider does not support: use unix, ssh, tcp or tls", raw, transport)
		}
	}
	if out.Transport == TransportUnix && out.Host != "" {
		return nil, fmt.Errorf("libvirt URI %q names host %q but the unix transport is local: drop the host or use +ssh / +tcp / +tls", raw, out.Host)
	}
	if out.Transport != TransportUnix && out.Host == "" {
		return nil, fmt.Errorf("libvirt URI %q uses transport %s but names no host: expected %s+%s://host/%s", raw, out.Transport, driver, out.Transport, strings.TrimPrefix(out.Path, "/"))
	}
	if out.Port != "" {
		if p, err := strconv.Atoi(out.Port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("libvirt URI %q has port %q: expected a number from 1 to 65535", raw, out.Port)
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
				return nil, fmt.Errorf("libvirt URI %q: no_verify=%q: expected 0 or 1", raw, v)
			}
			out.NoVerify = b
		case "pkipath":
			out.PKIPath = v
		case "mode", "proxy", "no_tty", "name", "command", "netcat", "sshauth", "known_hosts_verify", "tls_priority":
			// Options of libvirt's C client that have no meaning for this provider; accepted so
			// that URIs copied from virsh keep working.
		default:
			return nil, fmt.Errorf("libvirt URI %q has unknown query parameter %q: supported are socket, keyfile, known_hosts, no_verify, pkipath", raw, key)
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

func redact(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User(c.User.Username())
	}
	return c.String()
}

// DriverURI is the name handed to the daemon's ConnectOpen: the driver and path without
// transport, host or client-side options (the remote daemon opens its local driver).
func (u *URI) DriverURI() string {
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
