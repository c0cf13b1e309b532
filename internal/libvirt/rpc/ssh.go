package rpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// newSSHDialer reaches the daemon's unix socket through an SSH connection (the
// direct-streamlocal channel OpenSSH offers), so nothing has to run on the remote side.
func newSSHDialer(u *URI, c SSHConfig) (dialFunc, []string, error) {
	username := firstNonEmpty(u.User, c.Username)
	if username == "" {
		if cur, err := user.Current(); err == nil {
			username = cur.Username
		}
	}
	auth, err := newSSHAuth(u, c)
	if err != nil {
		return nil, nil, err
	}
	policy, warnings, err := newHostKeyPolicy(u, c)
	if err != nil {
		return nil, nil, err
	}
	addr := u.Address()
	socket := u.RemoteSocket()

	dial := func(ctx context.Context) (net.Conn, error) {
		raw, err := tcpDial(ctx, addr)
		if err != nil {
			return nil, err
		}
		// The handshake, authentication and the channel open all wait on raw and take no
		// context of their own: ctx bounds raw until the channel is open.
		release := bindContext(ctx, raw)
		st := &sshDialState{}
		ag := &agentConn{ctx: ctx, sock: auth.agentSock}
		cfg := &ssh.ClientConfig{
			User:              username,
			Auth:              auth.methods(st, ag),
			HostKeyCallback:   policy.callback(st),
			HostKeyAlgorithms: policy.algorithms(addr),
		}
		sc, chans, reqs, err := ssh.NewClientConn(raw, addr, cfg)
		// Agent signers are needed during authentication only: one agent connection per
		// dial, closed here, not one left open per pooled connection.
		ag.close()
		if err != nil {
			raw.Close()
			_ = release()
			return nil, sshDialError(ctx, addr, username, auth, st, err)
		}
		client := ssh.NewClient(sc, chans, reqs)
		ch, err := client.Dial("unix", socket)
		if err != nil {
			client.Close()
			_ = release()
			return nil, fmt.Errorf("ssh to %s: open the libvirt socket %s on the host (set ?socket= if it lives elsewhere): %w", addr, socket, ctxCause(ctx, err))
		}
		if err := release(); err != nil {
			client.Close()
			return nil, fmt.Errorf("ssh to %s: open the libvirt socket %s on the host: %w", addr, socket, err)
		}
		return &sshConn{Conn: ch, client: client}, nil
	}
	return dial, warnings, nil
}

// sshDialError turns a failed SSH handshake into an error that says what to do.
func sshDialError(ctx context.Context, addr, username string, auth *sshAuth, st *sshDialState, err error) error {
	var hk *HostKeyError
	switch {
	case errors.As(err, &hk):
		return &permanentError{hk}
	case ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("ssh to %s: %w", addr, ctxCause(ctx, err))
	case st.hostKeyMismatch.Load() && auth.password != "" && (errors.Is(err, errPasswordWithheld) || strings.Contains(err.Error(), "unable to authenticate")):
		return &permanentError{fmt.Errorf("ssh to %s as %q: the host offered a key that known_hosts (or its @cert-authority lines) does not record for it, "+
			"so no password was sent (host key verification is off, and OpenSSH withholds passwords then too); no SSH key was accepted. "+
			"Check the host's key and fix known_hosts, or authenticate with a key: %w", addr, username, err)}
	case strings.Contains(err.Error(), "unable to authenticate"):
		return &permanentError{fmt.Errorf("ssh to %s as %q: authentication rejected (check ssh.private_key / private_key_file / password%s): %w", addr, username, auth.orderNote(), err)}
	case strings.Contains(err.Error(), "no common algorithm for host key"):
		return &permanentError{fmt.Errorf("ssh to %s: the host offers none of the host key types that known_hosts records for it; "+
			"its key type may have changed: check the host's key and fix known_hosts: %w", addr, err)}
	}
	return fmt.Errorf("ssh to %s: %w", addr, err)
}

// sshConn closes the SSH client with the channel: one SSH connection per pooled
// libvirt connection, so one broken link never takes the others down.
type sshConn struct {
	net.Conn
	client *ssh.Client
}

func (c *sshConn) Close() error {
	err := c.Conn.Close()
	if cerr := c.client.Close(); err == nil {
		err = cerr
	}
	return err
}

// errPasswordWithheld ends the password methods of a dial to a host whose key known_hosts
// records differently while verification is off.
var errPasswordWithheld = errors.New("password not sent: the host key does not match known_hosts")

// sshAuth is the credentials of an SSH URI, in the order they are offered.
type sshAuth struct {
	order     []string     // sshauth methods, most preferred first
	keys      []ssh.Signer // privkey
	agentSock string       // agent, when set
	password  string       // password and keyboard-interactive, when set
	explicit  bool         // order came from ?sshauth=
}

// newSSHAuth collects the credentials: keys (explicit key content, then key files, else the
// default identities), the agent, then the password; ?sshauth= picks and orders them. By
// default a key wins over a password when both are set.
func newSSHAuth(u *URI, c SSHConfig) (*sshAuth, error) {
	a := &sshAuth{order: []string{sshAuthPrivkey, sshAuthAgent, sshAuthPassword, sshAuthKeyboard}, password: c.Password}
	if len(u.SSHAuth) > 0 {
		a.order, a.explicit = u.SSHAuth, true
	}
	if a.wants(sshAuthPrivkey) {
		explicit := false
		if c.PrivateKey != "" {
			explicit = true
			s, err := ssh.ParsePrivateKey([]byte(c.PrivateKey))
			if err != nil {
				return nil, fmt.Errorf("ssh.private_key is not a usable private key (PEM or OpenSSH format, unencrypted): %v", sanitizeKeyErr(err))
			}
			a.keys = append(a.keys, s)
		}
		for _, f := range []string{c.PrivateKeyFile, u.Keyfile} {
			if f == "" {
				continue
			}
			explicit = true
			s, err := readKeyFile(f)
			if err != nil {
				return nil, err
			}
			a.keys = append(a.keys, s)
		}
		if !explicit {
			// Like OpenSSH: try the default identities that exist and are usable.
			if home, err := os.UserHomeDir(); err == nil {
				for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
					if s, err := readKeyFile(filepath.Join(home, ".ssh", name)); err == nil {
						a.keys = append(a.keys, s)
					}
				}
			}
		}
	}
	if a.wants(sshAuthAgent) {
		a.agentSock = os.Getenv("SSH_AUTH_SOCK")
	}
	if !a.wants(sshAuthPassword) && !a.wants(sshAuthKeyboard) {
		a.password = ""
	}
	if len(a.keys) == 0 && a.agentSock == "" && a.password == "" {
		if a.explicit {
			return nil, fmt.Errorf("libvirt URI %s: no SSH credentials for the methods in sshauth (%s): "+
				"privkey needs ssh.private_key, ssh.private_key_file, ?keyfile= or ~/.ssh/id_*; agent needs SSH_AUTH_SOCK; password and keyboard-interactive need ssh.password",
				u, strings.Join(a.order, ","))
		}
		return nil, fmt.Errorf("libvirt URI %s: no SSH credentials: set ssh.private_key, ssh.private_key_file (or ?keyfile=), ssh.password, or run an ssh-agent", u)
	}
	return a, nil
}

func (a *sshAuth) wants(method string) bool { return slices.Contains(a.order, method) }

func (a *sshAuth) orderNote() string {
	if !a.explicit {
		return ""
	}
	return "; only the methods in ?sshauth=" + strings.Join(a.order, ",") + " were tried"
}

// methods are the auth methods of one dial. SSH tries "publickey" once, so agent and
// private keys form one method, at the place of the first of them in the order.
func (a *sshAuth) methods(st *sshDialState, ag *agentConn) []ssh.AuthMethod {
	var methods []ssh.AuthMethod
	keysAdded := false
	withheld := func() bool { return st.hostKeyMismatch.Load() }
	for _, m := range a.order {
		switch m {
		case sshAuthPrivkey, sshAuthAgent:
			if keysAdded || (len(a.keys) == 0 && a.agentSock == "") {
				continue
			}
			keysAdded = true
			methods = append(methods, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
				var all []ssh.Signer
				for _, src := range a.order {
					switch src {
					case sshAuthPrivkey:
						all = append(all, a.keys...)
					case sshAuthAgent:
						if a.agentSock != "" {
							all = append(all, ag.signers()...)
						}
					}
				}
				return all, nil
			}))
		case sshAuthPassword:
			if a.password == "" {
				continue
			}
			pw := a.password
			methods = append(methods, ssh.PasswordCallback(func() (string, error) {
				if withheld() {
					return "", errPasswordWithheld
				}
				return pw, nil
			}))
		case sshAuthKeyboard:
			if a.password == "" {
				continue
			}
			pw := a.password
			methods = append(methods, ssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
				if withheld() {
					return nil, errPasswordWithheld
				}
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = pw
				}
				return answers, nil
			}))
		}
	}
	return methods
}

// agentConn is one dial's connection to the user's ssh-agent (SSH_AUTH_SOCK, as ssh(1)
// uses it): opened when authentication first asks for keys, bounded by the dial's
// context (a dead or stuck agent cannot stall the handshake), closed after the handshake.
type agentConn struct {
	ctx     context.Context
	sock    string
	mu      sync.Mutex
	conn    net.Conn
	release func() error
}

func (a *agentConn) signers() []ssh.Signer {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn != nil || a.sock == "" {
		return nil // asked once per dial
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(a.ctx, "unix", a.sock)
	if err != nil {
		return nil
	}
	a.conn, a.release = conn, bindContext(a.ctx, conn)
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		return nil
	}
	return signers
}

func (a *agentConn) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn != nil {
		_ = a.release()
		_ = a.conn.Close()
	}
}

func readKeyFile(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(expandHome(path))
	if err != nil {
		return nil, fmt.Errorf("cannot read SSH private key file %s: %w", path, err)
	}
	s, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("SSH private key file %s is not a usable private key (PEM or OpenSSH format, unencrypted; use an ssh-agent for encrypted keys): %v", path, sanitizeKeyErr(err))
	}
	return s, nil
}

// sanitizeKeyErr keeps parser messages but never any key material.
func sanitizeKeyErr(err error) string {
	var pp *ssh.PassphraseMissingError
	if errors.As(err, &pp) {
		return "the key is encrypted with a passphrase"
	}
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	return p
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
