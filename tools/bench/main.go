// Command bench is the measuring helper of `make bench` (tools/bench/bench.sh): it runs one
// command, waits for it, and writes what it cost as key=value lines:
//
//	wall_s=12.345      wall-clock seconds from start to exit
//	user_s=3.210       user CPU seconds of the command and every descendant it waited for
//	sys_s=0.987        system CPU seconds, likewise (a provider plugin is waited for by
//	                   terraform/tofu, so its CPU is included; libvirtd's and QEMU's are not)
//	rss_peak_kib=4567  the highest VmHWM seen among the command's descendants whose name
//	                   starts with -watch (sampled from /proc every -every), 0 when none ran
//	watched=3          how many such processes were seen
//	exit=0             the command's exit status
//
// It exits with the command's own status, so the caller can still test it (for example
// `plan -detailed-exitcode`). It is a benchmark tool, not a test: it asserts nothing.
//
//	go run ./tools/bench -out run.txt -watch terraform-provider-libvirt -- terraform apply ...
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	var (
		out     = flag.String("out", "", "file to write the key=value results to (default: stderr)")
		watch   = flag.String("watch", "", "process name (prefix) whose peak RSS (VmHWM) to sample, e.g. terraform-provider-libvirt")
		every   = flag.Duration("every", 20*time.Millisecond, "sampling interval for -watch")
		timeout = flag.Duration("timeout", 60*time.Minute, "kill the command's process group after this long")
	)
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: bench [-out FILE] [-watch NAME] [-timeout D] -- command [args...]")
		os.Exit(2)
	}
	res, err := run(flag.Args(), *watch, *every, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	text := res.String()
	if *out == "" {
		fmt.Fprint(os.Stderr, text)
	} else if err := os.WriteFile(*out, []byte(text), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	os.Exit(res.exit)
}

type result struct {
	wall, user, sys time.Duration
	rssPeakKiB      int64
	watched         int
	watchedCPU      time.Duration // user+sys of the watched processes, as last sampled
	exit            int
}

func (r result) String() string {
	return fmt.Sprintf("wall_s=%.3f\nuser_s=%.3f\nsys_s=%.3f\nrss_peak_kib=%d\nwatched=%d\nwatched_cpu_s=%.3f\nexit=%d\n",
		r.wall.Seconds(), r.user.Seconds(), r.sys.Seconds(), r.rssPeakKiB, r.watched, r.watchedCPU.Seconds(), r.exit)
}

func run(args []string, watch string, every, timeout time.Duration) (result, error) {
	var res result
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Its own process group, so that a timeout kills the provider plugins too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	s := &sampler{root: cmd.Process.Pid, name: watch, seen: map[int]bool{}, ticks: map[int]int64{}}
	if watch != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				s.sample()
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
	}
	err := cmd.Wait()
	res.wall = time.Since(start)
	close(stop)
	wg.Wait()

	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.exit = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && res.exit < 0 { // killed by a signal
			res.exit = 128 + int(ws.Signal())
		}
	default:
		return res, err
	}
	if ctx.Err() != nil {
		fmt.Fprintf(os.Stderr, "bench: %s killed after %s\n", args[0], timeout)
	}
	// wait4's rusage covers the child and all the descendants it reaped.
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.user = time.Duration(ru.Utime.Nano())
		res.sys = time.Duration(ru.Stime.Nano())
	}
	res.rssPeakKiB, res.watched = s.peak, len(s.seen)
	for _, t := range s.ticks {
		res.watchedCPU += time.Duration(t) * time.Second / clockTicks
	}
	return res, nil
}

// sampler finds the descendants of root named like name and keeps their highest VmHWM.
type sampler struct {
	root int
	name string
	peak int64
	seen map[int]bool
	// ticks is each watched process's user+sys CPU time at its last sample, in clock
	// ticks: what it spent after its last sample (up to one interval) is not counted.
	ticks map[int]int64
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times (100 on Linux).
const clockTicks = 100

// cpuTicks is a process's utime + stime from /proc/<pid>/stat, in clock ticks.
func cpuTicks(pid int) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (2nd field) may hold spaces: count from after its ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	return u + st, err1 == nil && err2 == nil
}

func (s *sampler) sample() {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(d + "/comm")
		if err != nil {
			continue
		}
		// comm is the executable's name cut to 15 characters.
		if c := strings.TrimSpace(string(comm)); c != s.name[:min(15, len(s.name))] {
			continue
		}
		if !s.descends(pid) {
			continue
		}
		st := status(pid)
		s.seen[pid] = true
		if t, ok := cpuTicks(pid); ok {
			s.ticks[pid] = t
		}
		for _, k := range []string{"VmHWM", "VmRSS"} {
			if v := st[k]; v > s.peak {
				s.peak = v
			}
		}
	}
}

// descends reports whether pid is root or one of its descendants.
func (s *sampler) descends(pid int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == s.root {
			return true
		}
		pid = int(status(pid)["PPid"])
	}
	return false
}

// status reads the numeric fields of /proc/<pid>/status (kB values in KiB).
func status(pid int) map[string]int64 {
	m := map[string]int64{}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}
