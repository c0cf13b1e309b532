package acctest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// ISCSITarget serves file as LUN 1 of iSCSI target iqn with tgtd (Debian's tgt, a
// user-space target) on 127.0.0.1 of the test's network namespace, and returns the
// portal's port. tgtd runs in the foreground in its own process group, managed over its
// own control port, and is killed when the test ends (it ignores SIGTERM while it has
// targets).
func ISCSITarget(t testing.TB, file, iqn string) int {
	t.Helper()
	if _, err := exec.LookPath("tgtd"); err != nil {
		t.Fatalf("tgtd is not installed on the test host (apt-get install tgt): %v", err)
	}
	port, control := freePort(t), controlPort(t)
	cmd := exec.Command("tgtd", "-f", "-C", strconv.Itoa(control), "--iscsi", fmt.Sprintf("portal=127.0.0.1:%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start tgtd: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	adm := func(args ...string) error {
		out, err := exec.Command("tgtadm", append([]string{"-C", strconv.Itoa(control), "--lld", "iscsi"}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tgtadm %v: %w: %s", args, err, out)
		}
		return nil
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := adm("--op", "show", "--mode", "target")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tgtd does not answer: %v", err)
		}
	}
	for _, args := range [][]string{
		{"--op", "new", "--mode", "target", "--tid", "1", "-T", iqn},
		{"--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", "1", "-b", file},
		{"--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL"},
	} {
		if err := adm(args...); err != nil {
			t.Fatal(err)
		}
	}
	return port
}

// controlPort is a tgtd control port (an index for its socket, at most 32767) that no
// tgtd on this host uses.
func controlPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		n := 1000 + rand.IntN(30000)
		if _, err := os.Stat(fmt.Sprintf("/var/run/tgtd/socket.%d", n)); errors.Is(err, os.ErrNotExist) {
			return n
		}
	}
	t.Fatal("no free tgtd control port")
	return 0
}
