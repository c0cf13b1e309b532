package acctest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHD is a real OpenSSH server on 127.0.0.1 with a host key of its own, started for one
// test. Through it the libvirt daemon's unix socket is reachable as qemu+ssh://.
type SSHD struct {
	Port           int
	User           string
	HostKey        ssh.PublicKey
	KnownHostsLine string // "[127.0.0.1]:PORT ssh-ed25519 ..."
	// The host also holds a host certificate for 127.0.0.1, signed by HostCA; sshd presents
	// it to clients that ask for certificates (known_hosts with @cert-authority).
	HostCA           ssh.PublicKey
	CAKnownHostsLine string // "@cert-authority [127.0.0.1]:PORT ssh-ed25519 <HostCA>"
	ClientKeyPEM     string // private key authorised for User
	ClientKeyFile    string // the same key in a file
	Dir              string
}

// URI is the qemu+ssh URI of the test host through this server.
func (s *SSHD) URI() string {
	return fmt.Sprintf("qemu+ssh://%s@127.0.0.1:%d/system", s.User, s.Port)
}

// StartSSHD starts /usr/sbin/sshd for the test and stops it (by its pid) at cleanup.
func StartSSHD(t testing.TB) *SSHD {
	t.Helper()
	sshdBin, err := exec.LookPath("sshd")
	if err != nil {
		sshdBin = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshdBin); err != nil {
		t.Fatalf("OpenSSH server not installed (apt-get install openssh-server; make testhost-up does it): %v", err)
	}
	dir := t.TempDir()
	s := &SSHD{Dir: dir}
	cur, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	s.User = cur.Username

	hostPub, hostPEM := newEd25519Key(t)
	s.HostKey = hostPub
	clientPub, clientPEM := newEd25519Key(t)
	s.ClientKeyPEM = string(clientPEM)
	s.ClientKeyFile = filepath.Join(dir, "id_client")
	writeFile(t, s.ClientKeyFile, clientPEM)
	writeFile(t, filepath.Join(dir, "host_ed25519"), hostPEM)
	writeFile(t, filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(clientPub))

	s.Port = freePort(t)
	s.KnownHostsLine = knownhosts.Line([]string{knownhosts.Normalize("127.0.0.1:" + strconv.Itoa(s.Port))}, hostPub)
	s.HostCA = writeHostCert(t, filepath.Join(dir, "host_ed25519-cert.pub"), hostPub)
	s.CAKnownHostsLine = "@cert-authority " + knownhosts.Normalize("127.0.0.1:"+strconv.Itoa(s.Port)) + " " +
		strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.HostCA)))
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %[2]s/host_ed25519
HostCertificate %[2]s/host_ed25519-cert.pub
PidFile %[2]s/sshd.pid
AuthorizedKeysFile %[2]s/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowStreamLocalForwarding yes
# AllowTcpForwarding also gates streamlocal channels: 'local' lets the libvirt socket through.
AllowTcpForwarding local
X11Forwarding no
PrintMotd no
LogLevel VERBOSE
`, s.Port, dir)
	writeFile(t, filepath.Join(dir, "sshd_config"), []byte(cfg))
	// sshd's privilege separation directory; Debian creates it only from its init scripts.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}

	// The log goes to a file, not a pipe: per-connection sshd children outlive the
	// listener while the provider's pool keeps its connections, and would hold a pipe open.
	logPath := filepath.Join(dir, "sshd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	readLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	cmd := exec.Command(sshdBin, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // by its pid; sessions still open end with their connections
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", readLog())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), time.Second)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on 127.0.0.1:%d: %v\n%s", s.Port, err, readLog())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func newEd25519Key(t testing.TB) (ssh.PublicKey, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshPub, pem.EncodeToMemory(block)
}

// writeHostCert signs host with a fresh CA as a host certificate for 127.0.0.1, writes it
// where sshd's HostCertificate reads it, and returns the CA's key.
func writeHostCert(t testing.TB, path string, host ssh.PublicKey) ssh.PublicKey {
	t.Helper()
	_, caPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ssh.NewSignerFromKey(caPriv)
	if err != nil {
		t.Fatal(err)
	}
	cert := &ssh.Certificate{Key: host, Serial: 1, CertType: ssh.HostCert, KeyId: "tfacc host",
		ValidPrincipals: []string{"127.0.0.1"}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, ssh.MarshalAuthorizedKey(cert))
	return ca.PublicKey()
}

// NewSSHKey returns a fresh private key (PEM) that no server trusts.
func NewSSHKey(t testing.TB) string {
	_, p := newEd25519Key(t)
	return string(p)
}

// NewHostKeyLine returns a known_hosts line for host with a key that is not the host's.
func NewHostKeyLine(t testing.TB, host string) string {
	k, _ := newEd25519Key(t)
	return knownhosts.Line([]string{knownhosts.Normalize(host)}, k)
}

// writeFile writes a file only its owner can read: sshd refuses keys and configs that
// others can read.
func writeFile(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
