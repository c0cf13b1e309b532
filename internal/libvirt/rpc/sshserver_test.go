package rpc

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// testSSHServer is an in-process SSH server on 127.0.0.1 (golang.org/x/crypto/ssh), for
// unit tests of the SSH dialer that need no daemon and no sshd binary. It accepts the
// direct-streamlocal channel the dialer opens and echoes on it.
type testSSHServer struct {
	Addr string // 127.0.0.1:port
	Port int

	// Silent accepts TCP and never speaks SSH.
	Silent bool
	// HangChannel authenticates, then never answers the channel open.
	HangChannel bool

	hostKeys   []ssh.Signer
	authorized []ssh.PublicKey // client keys accepted
	password   string          // accepted password ("" = password auth off)

	PasswordTries atomic.Int32 // password and keyboard-interactive answers received
	KeyLogins     atomic.Int32

	mu    sync.Mutex
	conns []net.Conn
}

func newSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newECDSASigner(t testing.TB) ssh.Signer {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signerPEM is the OpenSSH private key form of a fresh ed25519 key, and its signer.
func newClientKey(t testing.TB) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, string(pem.EncodeToMemory(block))
}

// hostCert signs host's key with ca as a host certificate for principals.
func hostCert(t testing.TB, host, ca ssh.Signer, principals ...string) ssh.Signer {
	t.Helper()
	cert := &ssh.Certificate{
		Key:             host.PublicKey(),
		Serial:          1,
		CertType:        ssh.HostCert,
		KeyId:           "test host",
		ValidPrincipals: principals,
		ValidBefore:     ssh.CertTimeInfinity,
	}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewCertSigner(cert, host)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func startTestSSHServer(t testing.TB, srv *testSSHServer) *testSSHServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Addr = l.Addr().String()
	srv.Port = l.Addr().(*net.TCPAddr).Port
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			for _, k := range srv.authorized {
				if keyEqual(k, key) {
					srv.KeyLogins.Add(1)
					return &ssh.Permissions{}, nil
				}
			}
			return nil, errUnauthorized
		},
	}
	if srv.password != "" {
		cfg.PasswordCallback = func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			srv.PasswordTries.Add(1)
			if string(pw) == srv.password {
				return &ssh.Permissions{}, nil
			}
			return nil, errUnauthorized
		}
		cfg.KeyboardInteractiveCallback = func(_ ssh.ConnMetadata, client ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			answers, err := client("", "", []string{"Password: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			srv.PasswordTries.Add(1)
			if len(answers) == 1 && answers[0] == srv.password {
				return &ssh.Permissions{}, nil
			}
			return nil, errUnauthorized
		}
	}
	for _, k := range srv.hostKeys {
		cfg.AddHostKey(k)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		l.Close()
		srv.mu.Lock()
		for _, c := range srv.conns {
			c.Close()
		}
		srv.mu.Unlock()
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			srv.mu.Lock()
			srv.conns = append(srv.conns, c)
			srv.mu.Unlock()
			if srv.Silent {
				continue // holds the connection, says nothing
			}
			go srv.serve(c, cfg, done)
		}
	}()
	return srv
}

func (srv *testSSHServer) serve(c net.Conn, cfg *ssh.ServerConfig, done chan struct{}) {
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if srv.HangChannel {
			go func() { <-done }() // never answered
			continue
		}
		if nc.ChannelType() != "direct-streamlocal@openssh.com" {
			_ = nc.Reject(ssh.UnknownChannelType, "only direct-streamlocal")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go ssh.DiscardRequests(creqs)
		go func() {
			defer ch.Close()
			buf := make([]byte, 512)
			for {
				n, err := ch.Read(buf)
				if err != nil {
					return
				}
				if _, err := ch.Write(buf[:n]); err != nil {
					return
				}
			}
		}()
	}
}

var errUnauthorized = errors.New("not authorized")

// knownHostsLine is a known_hosts line for this server's address and key.
func (srv *testSSHServer) knownHostsLine(key ssh.PublicKey) string {
	return knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, key)
}

// uri is the qemu+ssh URI of this server.
func (srv *testSSHServer) uri(params string) string {
	u := "qemu+ssh://tester@127.0.0.1:" + strconv.Itoa(srv.Port) + "/system"
	if params != "" {
		u += "?" + params
	}
	return u
}

// isolateSSH keeps the machine's ~/.ssh, ssh-agent and /etc/ssh/ssh_known_hosts out of a test.
func isolateSSH(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SSH_AUTH_SOCK", "")
	saved := globalKnownHostsFiles
	globalKnownHostsFiles = nil
	t.Cleanup(func() { globalKnownHostsFiles = saved })
}
