package libvirt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
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
	auth, err := sshAuthMethods(u, c)
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
		// The handshake has no context of its own: bound it with the socket deadline.
		if dl, ok := ctx.Deadline(); ok {
			_ = raw.SetDeadline(dl)
		}
		cfg := &ssh.ClientConfig{
			User:              username,
			Auth:              auth,
			HostKeyCallback:   policy.callback,
			HostKeyAlgorithms: policy.algorithms(addr),
		}
		sc, chans, reqs, err := ssh.NewClientConn(raw, addr, cfg)
		if err != nil {
			raw.Close()
			var hk *HostKeyError
			if errors.As(err, &hk) {
				return nil, &permanentError{hk}
			}
			if strings.Contains(err.Error(), "unable to authenticate") {
				return nil, &permanentError{fmt.Errorf("ssh to %s as %q: authentication rejected (check ssh.private_key / private_key_file / password): %w", addr, username, err)}
			}
			return nil, fmt.Errorf("ssh to %s: %w", addr, err)
		}
		_ = raw.SetDeadline(time.Time{})
		client := ssh.NewClient(sc, chans, reqs)
		ch, err := client.Dial("unix", socket)
		if err != nil {
			client.Close()
			return nil, fmt.Errorf("ssh to %s: open the libvirt socket %s on the host (set ?socket= if it lives elsewhere): %w", addr, socket, err)
		}
		return &sshConn{Conn: ch, client: client}, nil
	}
	return dial, warnings, nil
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

// sshAuthMethods: keys first (explicit key content, then key files, then the agent), then
// the password — a key wins over a password when both are set.
func sshAuthMethods(u *URI, c SSHConfig) ([]ssh.AuthMethod, error) {
	var signers []ssh.Signer
	explicit := false
	if c.PrivateKey != "" {
		explicit = true
		s, err := ssh.ParsePrivateKey([]byte(c.PrivateKey))
		if err != nil {
			return nil, fmt.Errorf("ssh.private_key is not a usable private key (PEM or OpenSSH format, unencrypted): %v", sanitizeKeyErr(err))
		}
		signers = append(signers, s)
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
		signers = append(signers, s)
	}
	if !explicit {
		// Like OpenSSH: try the default identities that exist and are usable.
		if home, err := os.UserHomeDir(); err == nil {
			for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
				if s, err := readKeyFile(filepath.Join(home, ".ssh", name)); err == nil {
					signers = append(signers, s)
				}
			}
		}
	}
	var methods []ssh.AuthMethod
	agentSock := os.Getenv("SSH_AUTH_SOCK")
	if len(signers) > 0 || agentSock != "" {
		methods = append(methods, ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
			all := append([]ssh.Signer(nil), signers...)
			if agentSock != "" {
				// The user's own agent socket, as ssh(1) uses it. The callback gets no context;
				// the timeout keeps a dead agent socket from stalling the handshake.
				d := net.Dialer{Timeout: 5 * time.Second}
				if conn, err := d.DialContext(context.Background(), "unix", agentSock); err == nil {
					if more, err := agent.NewClient(conn).Signers(); err == nil {
						all = append(all, more...)
					}
				}
			}
			return all, nil
		}))
	}
	if c.Password != "" {
		pw := c.Password
		methods = append(methods, ssh.Password(pw), ssh.KeyboardInteractive(
			func(_, _ string, questions []string, _ []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = pw
				}
				return answers, nil
			}))
	}
	if len(methods) == 0 {
		return nil, fmt.Errorf("libvirt URI %s: no SSH credentials: set ssh.private_key, ssh.private_key_file (or ?keyfile=), ssh.password, or run an ssh-agent", u)
	}
	return methods, nil
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
