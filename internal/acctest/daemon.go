package acctest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// libvirtdPidFile is where tools/testhost.sh keeps libvirtd's pid (LIBVIRT_TEST_LIBVIRTD_PIDFILE
// from `tools/testhost.sh env`).
func libvirtdPidFile() string {
	return Env("LIBVIRT_TEST_LIBVIRTD_PIDFILE", "/var/lib/kvmforge-testhost/libvirtd.pid")
}

// testhostScript is tools/testhost.sh of this checkout.
func testhostScript() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "tools", "testhost.sh")
}

// processGone reports whether pid has exited (a zombie counts: pid 1 here may not reap).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndex(s, ") "); i >= 0 && len(s) > i+2 {
		return s[i+2] == 'Z'
	}
	return false
}

// KillLibvirtd kills the test host's libvirtd with SIGKILL, found by its pid file (never by
// name), as a crash or an OOM kill would, and waits until it has exited. It returns the pid.
// Callers must hold the host lock exclusively (flock -x): every other test loses the daemon.
func KillLibvirtd(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(libvirtdPidFile())
	if err != nil {
		t.Fatalf("libvirtd pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("libvirtd pid file %s holds %q", libvirtdPidFile(), b)
	}
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(comm)) != "libvirtd" {
		t.Fatalf("pid %d from %s is not libvirtd (%q)", pid, libvirtdPidFile(), comm)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 libvirtd (pid %d): %v", pid, err)
	}
	for deadline := time.Now().Add(30 * time.Second); !processGone(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("libvirtd (pid %d) still alive 30 s after SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return pid
}

// RestartLibvirtd starts the test host's libvirtd again (tools/testhost.sh
// restart-libvirtd: stops it by its pid file if it still runs, starts it, waits until it
// answers) and returns how long that took.
func RestartLibvirtd(t testing.TB) time.Duration {
	t.Helper()
	start := time.Now()
	out, err := exec.Command(testhostScript(), "restart-libvirtd").CombinedOutput()
	if err != nil {
		t.Fatalf("tools/testhost.sh restart-libvirtd: %v\n%s", err, out)
	}
	return time.Since(start)
}

// ClientCounter counts libvirtd's clients on its unix socket per client process
// (virt-admin srv-clients-list, and client-info once per new client): what a process
// really holds open, whatever it believes about itself. Not safe for concurrent use.
type ClientCounter struct {
	pids map[string]int // client id -> its process (0: not a unix client with a pid)
}

var (
	clientIDRe  = regexp.MustCompile(`(?m)^\s*(\d+)\s+unix\s`)
	clientPIDRe = regexp.MustCompile(`(?m)^unix_process_id\s*:\s*(\d+)`)
)

// Count returns, for each process for which want is true, how many connections it has open.
func (c *ClientCounter) Count(t testing.TB, want func(pid int) bool) map[int]int {
	t.Helper()
	if c.pids == nil {
		c.pids = map[string]int{}
	}
	out, err := exec.Command("virt-admin", "srv-clients-list", "libvirtd").CombinedOutput()
	if err != nil {
		t.Fatalf("virt-admin srv-clients-list: %v\n%s", err, out)
	}
	counts := map[int]int{}
	for _, m := range clientIDRe.FindAllStringSubmatch(string(out), -1) {
		pid, known := c.pids[m[1]]
		if !known {
			info, err := exec.Command("virt-admin", "client-info", "libvirtd", m[1]).CombinedOutput()
			if err != nil {
				continue // it went away meanwhile
			}
			if pm := clientPIDRe.FindStringSubmatch(string(info)); pm != nil {
				pid, _ = strconv.Atoi(pm[1])
			}
			c.pids[m[1]] = pid
		}
		if pid > 0 && want(pid) {
			counts[pid]++
		}
	}
	return counts
}

// ProcessesOf returns the pids of running processes whose executable is bin.
func ProcessesOf(bin string) map[int]bool {
	want, err := filepath.EvalSymlinks(bin)
	if err != nil {
		want = bin
	}
	pids := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == want {
			pids[pid] = true
		}
	}
	return pids
}

// HostObjects lists the names of the domains on the test host and of the volumes in the
// test pool (refreshed first, so that files libvirt has not noticed yet count too) that
// start with prefix, sorted.
func HostObjects(t testing.TB, prefix string) (domains, volumes []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := Client(t).Read(ctx, "list domains and volumes "+prefix+"*", func(l *golibvirt.Libvirt) error {
		domains, volumes = nil, nil
		ds, _, err := l.ConnectListAllDomains(1, 0)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if strings.HasPrefix(d.Name, prefix) {
				domains = append(domains, d.Name)
			}
		}
		p, err := l.StoragePoolLookupByName(Pool())
		if err != nil {
			return err
		}
		// Best effort: libvirt refuses a refresh while another test's upload runs in the
		// pool ("asynchronous jobs running"), and what libvirt made itself is listed anyway.
		_ = l.StoragePoolRefresh(p, 0)
		vs, _, err := l.StoragePoolListAllVolumes(p, 1, 0)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if strings.HasPrefix(v.Name, prefix) {
				volumes = append(volumes, v.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list the host's objects: %v", err)
	}
	sort.Strings(domains)
	sort.Strings(volumes)
	return domains, volumes
}

// CountDomains is how many domains whose name starts with prefix exist on the test host;
// -1 when the daemon cannot be asked right now.
func CountDomains(ctx context.Context, t testing.TB, prefix string) int {
	t.Helper()
	n := 0
	err := Client(t).Read(ctx, "count domains "+prefix+"*", func(l *golibvirt.Libvirt) error {
		ds, _, err := l.ConnectListAllDomains(1, 0)
		if err != nil {
			return err
		}
		n = 0
		for _, d := range ds {
			if strings.HasPrefix(d.Name, prefix) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return -1
	}
	return n
}

// RemoveHostObjects undefines the domains and deletes the volumes of the test pool whose
// names start with prefix: the cleanup of a test that may fail half-way through a fault,
// after its own destroy. It returns what it had to remove (nothing when the destroy did
// its job).
func RemoveHostObjects(t testing.TB, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var removed []string
	err := Client(t).Write(ctx, "remove "+prefix+"*", func(l *golibvirt.Libvirt) error {
		ds, _, err := l.ConnectListAllDomains(1, 0)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if strings.HasPrefix(d.Name, prefix) {
				_ = l.DomainDestroy(d)
				if err := l.DomainUndefineFlags(d, golibvirt.DomainUndefineNvram|golibvirt.DomainUndefineManagedSave); err != nil {
					return err
				}
				removed = append(removed, "domain "+d.Name)
			}
		}
		p, err := l.StoragePoolLookupByName(Pool())
		if err != nil {
			return err
		}
		_ = l.StoragePoolRefresh(p, 0)
		vs, _, err := l.StoragePoolListAllVolumes(p, 1, 0)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if strings.HasPrefix(v.Name, prefix) {
				if err := l.StorageVolDelete(v, 0); err != nil {
					return err
				}
				removed = append(removed, "volume "+v.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("cleanup of %s*: %v", prefix, err)
	}
	return removed
}
