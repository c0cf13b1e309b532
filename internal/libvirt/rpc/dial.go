package rpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"
)

// dialFunc opens the byte stream to a libvirt daemon; the RPC protocol runs on top.
type dialFunc func(ctx context.Context) (net.Conn, error)

// newDialer picks the transport named by the URI. Errors here are configuration errors
// (unreadable key, missing CA) and are reported when the provider is configured.
func newDialer(u *URI, cfg Config) (dialFunc, []string, error) {
	switch u.Transport {
	case TransportUnix:
		path := u.LocalSocket()
		return func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return nil, fmt.Errorf("dial unix socket %s (is libvirtd running and readable by this user?): %w", path, err)
			}
			return c, nil
		}, nil, nil
	case TransportTCP:
		addr := u.Address()
		warn := fmt.Sprintf("%s uses plain TCP to %s: the link is unencrypted and unauthenticated, so anyone who can reach that port "+
			"controls the host, and anyone on the path can read and change what the provider sends (including secrets such as cloud-init user data). "+
			"Use it only on a loopback address or an isolated management network; prefer qemu+ssh:// or qemu+tls:// elsewhere.", u, addr)
		return func(ctx context.Context) (net.Conn, error) {
			return tcpDial(ctx, addr)
		}, []string{warn}, nil
	case TransportTLS:
		tlsCfg, warnings, err := tlsClientConfig(u, cfg.TLS)
		if err != nil {
			return nil, nil, err
		}
		addr := u.Address()
		return func(ctx context.Context) (net.Conn, error) {
			raw, err := tcpDial(ctx, addr)
			if err != nil {
				return nil, err
			}
			// ctx bounds the handshake and the wait for the daemon's verdict below.
			release := bindContext(ctx, raw)
			c := tls.Client(raw, tlsCfg)
			if err := c.HandshakeContext(ctx); err != nil {
				raw.Close()
				_ = release()
				if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
					return nil, fmt.Errorf("TLS handshake with %s: %w", addr, ctxCause(ctx, err))
				}
				return nil, &permanentError{fmt.Errorf("TLS handshake with %s: %w", addr, err)}
			}
			// libvirtd then checks the client certificate and sends one byte: 1 = accepted.
			ok := make([]byte, 1)
			if _, err := io.ReadFull(c, ok); err != nil {
				raw.Close()
				_ = release()
				return nil, fmt.Errorf("TLS with %s: waiting for the daemon to accept the client certificate: %w", addr, ctxCause(ctx, err))
			}
			if err := release(); err != nil {
				raw.Close()
				return nil, fmt.Errorf("TLS with %s: %w", addr, err)
			}
			if ok[0] != 1 {
				raw.Close()
				return nil, &permanentError{fmt.Errorf("TLS with %s: the daemon rejected the client certificate (check tls.cert_file / key_file and the daemon's tls_allowed_dn_list)", addr)}
			}
			return c, nil
		}, warnings, nil
	case TransportSSH:
		return newSSHDialer(u, cfg.SSH)
	}
	return nil, nil, fmt.Errorf("libvirt URI %s: unsupported transport %q", u, u.Transport)
}

func tcpDial(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAlive: 15 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial tcp %s: %w", addr, err)
	}
	return c, nil
}

// bindContext makes ctx bound every read and write on c until release is called: c gets
// ctx's deadline, and cancelling ctx expires it at once. Handshakes and protocol steps that
// take no context of their own (SSH, the TLS verdict byte) thus cannot outlive the dial.
// release detaches c from ctx again; it fails when ctx ended first (c is then unusable).
func bindContext(ctx context.Context, c net.Conn) (release func() error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	return func() error {
		if !stop() {
			return ctx.Err()
		}
		_ = c.SetDeadline(time.Time{})
		return nil
	}
}

// ctxCause names the context as the reason when a dial step failed because ctx ended (its
// deadline expired the socket; what the step reports then may be a timeout or just EOF):
// errors.Is(err, context.DeadlineExceeded) then holds.
func ctxCause(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}

// permanentError marks dial failures that another attempt cannot fix (bad host key,
// rejected credentials, untrusted certificate): the pool does not retry them.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// tlsFiles resolves CA, certificate and key the way libvirt's client does: explicit files,
// then ?pkipath=, then the per-user ~/.pki/libvirt (non-root), then the system PKI.
func tlsFiles(u *URI, t TLSConfig) (ca, cert, key string) {
	ca, cert, key = t.CAFile, t.CertFile, t.KeyFile
	var dca, dcert, dkey string
	switch {
	case u.PKIPath != "":
		dca = filepath.Join(u.PKIPath, "cacert.pem")
		dcert = filepath.Join(u.PKIPath, "clientcert.pem")
		dkey = filepath.Join(u.PKIPath, "clientkey.pem")
	default:
		dca, dcert, dkey = "/etc/pki/CA/cacert.pem", "/etc/pki/libvirt/clientcert.pem", "/etc/pki/libvirt/private/clientkey.pem"
		if os.Geteuid() != 0 {
			if home, err := os.UserHomeDir(); err == nil {
				user := filepath.Join(home, ".pki", "libvirt")
				if _, err := os.Stat(filepath.Join(user, "cacert.pem")); err == nil {
					dca = filepath.Join(user, "cacert.pem")
					dcert = filepath.Join(user, "clientcert.pem")
					dkey = filepath.Join(user, "clientkey.pem")
				}
			}
		}
	}
	if ca == "" {
		ca = dca
	}
	if cert == "" {
		cert = dcert
	}
	if key == "" {
		key = dkey
	}
	return ca, cert, key
}

func tlsClientConfig(u *URI, t TLSConfig) (*tls.Config, []string, error) {
	caFile, certFile, keyFile := tlsFiles(u, t)
	insecure := t.InsecureSkipVerify || u.NoVerify
	cfg := &tls.Config{ServerName: u.Host, MinVersion: tls.VersionTLS12}
	var warnings []string
	if insecure {
		cfg.InsecureSkipVerify = true // #nosec G402 -- asked for explicitly; the user is warned.
		warnings = append(warnings, fmt.Sprintf("TLS server certificate verification is disabled for %s: anyone between this machine and the host can impersonate it.", u.Address()))
	} else {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, nil, fmt.Errorf("libvirt URI %s: cannot read the CA certificate %s (set tls.ca_file or ?pkipath=): %w", u, caFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("libvirt URI %s: %s holds no PEM certificate", u, caFile)
		}
		cfg.RootCAs = pool
	}
	// libvirtd asks for a client certificate unless told otherwise; send one when we have it.
	_, certErr := os.Stat(certFile)
	_, keyErr := os.Stat(keyFile)
	if certErr == nil && keyErr == nil {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("libvirt URI %s: cannot load the client certificate %s / key %s: %w", u, certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	} else if t.CertFile != "" || t.KeyFile != "" {
		return nil, nil, fmt.Errorf("libvirt URI %s: client certificate %s or key %s is missing", u, certFile, keyFile)
	}
	return cfg, warnings, nil
}
