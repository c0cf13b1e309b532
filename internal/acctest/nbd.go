package acctest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// NBDExport serves file (raw) over NBD on 127.0.0.1 of the test's network namespace
// (where libvirtd and its guests' QEMU run) with qemu-nbd, as export name, and returns
// the port. The server is stopped when the test ends.
func NBDExport(t testing.TB, file, name string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port for qemu-nbd: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	pidFile := filepath.Join(t.TempDir(), "qemu-nbd.pid")
	cmd := exec.Command("qemu-nbd", "--fork", "--persistent", "--shared=4", "--bind=127.0.0.1", "--port="+strconv.Itoa(port),
		"--format=raw", "--export-name="+name, "--pid-file="+pidFile, file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("qemu-nbd for %s: %v: %s", file, err, out)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			_ = c.Close()
			return port
		}
		if time.Now().After(deadline) {
			t.Fatalf("qemu-nbd on port %d does not answer: %v", port, err)
		}
	}
}
