package workflow

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// readyFake is a guest whose agent fails the first pingFails pings, then answers; each
// command run returns the next of runs (the last one again once they are used up).
type readyFake struct {
	mu        sync.Mutex
	pingFails int
	pings     int
	runs      []readyRun
	execs     []string
}

type readyRun struct {
	out  string
	code int
	err  error
}

func (f *readyFake) PingDomainAgent(context.Context, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pings++
	if f.pings <= f.pingFails {
		return errors.New("Guest agent is not responding: QEMU guest agent is not connected")
	}
	return nil
}

func (f *readyFake) ExecInDomain(_ context.Context, _ string, limit time.Duration, path string, args ...string) (string, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execs = append(f.execs, strings.Join(append([]string{path}, args...), " "))
	if len(f.runs) == 0 {
		return "", 0, nil
	}
	r := f.runs[0]
	if len(f.runs) > 1 {
		f.runs = f.runs[1:]
	}
	return r.out, r.code, r.err
}

type fakeConsole struct {
	lines []string
	err   error
}

func (c fakeConsole) Tail(n int) ([]string, error) {
	if len(c.lines) > n {
		return c.lines[len(c.lines)-n:], c.err
	}
	return c.lines, c.err
}

var bootConsole = fakeConsole{lines: []string{"tinyguest: [1.2] modules loaded", "TINYGUEST READY hostname=web ip=none agent=vport1p1"}}

func TestWaitReadyPingFailsThenSucceeds(t *testing.T) {
	f := &readyFake{pingFails: 2, runs: []readyRun{{err: errors.New("agent busy")}, {out: "status: done"}}}
	err := WaitReady(context.Background(), f, Ready{ID: "u", Name: "web", Timeout: 5 * time.Second,
		Command: []string{"cloud-init", "status", "--wait"}, Every: 10 * time.Millisecond}, bootConsole)
	if err != nil {
		t.Fatal(err)
	}
	if f.pings != 3 {
		t.Errorf("%d pings; want 3 (two fail, the third answers)", f.pings)
	}
	if len(f.execs) != 2 || f.execs[1] != "cloud-init status --wait" {
		t.Errorf("command runs: %q; want it run again after an agent error, then done", f.execs)
	}
}

func TestWaitReadyAgentOnly(t *testing.T) {
	f := &readyFake{}
	if err := WaitReady(context.Background(), f, Ready{ID: "u", Name: "web", Timeout: time.Second}, nil); err != nil {
		t.Fatal(err)
	}
	if f.pings != 1 || len(f.execs) != 0 {
		t.Errorf("pings %d, runs %q; want one ping and no command", f.pings, f.execs)
	}
}

// A command that runs and exits non-zero fails at once (not retried), with its output
// and the console's tail.
func TestWaitReadyCommandExitsNonZero(t *testing.T) {
	f := &readyFake{runs: []readyRun{{out: "status: error", code: 1}}}
	err := WaitReady(context.Background(), f, Ready{ID: "u", Name: "web", Timeout: time.Minute,
		Command: []string{"cloud-init", "status", "--wait"}, Every: 10 * time.Millisecond}, bootConsole)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`domain web: wait_for_ready command "cloud-init status --wait" exited 1`, "status: error",
		"Last 2 lines of the guest's console:\ntinyguest: [1.2] modules loaded\nTINYGUEST READY"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if len(f.execs) != 1 {
		t.Errorf("ran %d times; a non-zero exit is not retried", len(f.execs))
	}
}

func TestWaitReadyTimeout(t *testing.T) {
	f := &readyFake{pingFails: 1 << 30}
	start := time.Now()
	err := WaitReady(context.Background(), f, Ready{ID: "u", Name: "web", Timeout: 200 * time.Millisecond, Every: 20 * time.Millisecond},
		fakeConsole{err: errors.New("cannot read the guest console: another client (virsh console?) holds the console")})
	if err == nil {
		t.Fatal("want a timeout")
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 2*time.Second {
		t.Errorf("took %s for a 200ms timeout", took)
	}
	for _, want := range []string{"domain web: the guest agent did not answer guest-ping (last: Guest agent is not responding", "within 200ms",
		"stays in state", "(no console output: cannot read the guest console: another client (virsh console?) holds the console)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// The command's agent errors are retried until the timeout, which names the last one.
	f = &readyFake{runs: []readyRun{{err: errors.New("Failed to execute child process \"nope\"")}}}
	err = WaitReady(context.Background(), f, Ready{ID: "u", Name: "web", Timeout: 200 * time.Millisecond, Command: []string{"nope"},
		Every: 20 * time.Millisecond}, fakeConsole{})
	if err == nil || !strings.Contains(err.Error(), `command "nope" did not complete (last: Failed to execute child process "nope") within 200ms`) ||
		!strings.Contains(err.Error(), "the guest wrote nothing on its console") {
		t.Errorf("error %v", err)
	}
	if len(f.execs) < 2 {
		t.Errorf("ran %d times; agent errors are retried", len(f.execs))
	}
}

func TestWithConsoleTail(t *testing.T) {
	if WithConsoleTail(nil, bootConsole) != nil {
		t.Error("nil stays nil")
	}
	base := errors.New("no address")
	if err := WithConsoleTail(base, nil); err == nil || err.Error() != base.Error() {
		t.Errorf("no console: %v", err)
	}
	if err := WithConsoleTail(base, fakeConsole{lines: []string{"", " ", "SYSLINUX 6.04"}}); !strings.HasSuffix(err.Error(), "Last 1 lines of the guest's console:\nSYSLINUX 6.04") {
		t.Errorf("leading blank lines are dropped: %v", err)
	}
	many := fakeConsole{}
	for i := range 30 {
		many.lines = append(many.lines, strings.Repeat("x", i))
	}
	err := WithConsoleTail(base, many)
	if !errors.Is(err, base) || !strings.Contains(err.Error(), "Last 20 lines") || strings.Contains(err.Error(), "\n"+strings.Repeat("x", 9)+"\n") {
		t.Errorf("tail of 30 lines: %v", err)
	}
}

// TestWithConsoleTailRedacts: what the guest printed that looks like a secret is masked
// in the error (names kept), the rest of the tail is quoted as it was; a readiness
// command's output is masked the same way.
func TestWithConsoleTailRedacts(t *testing.T) {
	console := fakeConsole{lines: []string{
		"cloud-init[512]: Set the following 'random' passwords",
		"root:Xk2pQ9vZ",
		"db: password=hunter2 user=app",
		"-----BEGIN SSH HOST KEY KEYS-----",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl root@web",
		"-----END SSH HOST KEY KEYS-----",
		"web login: ",
	}}
	err := WithConsoleTail(errors.New("no address"), console)
	for _, s := range []string{"Xk2pQ9vZ", "hunter2", "AAAAC3NzaC1"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("the error shows %q: %v", s, err)
		}
	}
	for _, s := range []string{"Last 7 lines", "root:***", "password=*** user=app", "-----END SSH HOST KEY KEYS-----", "web login: "} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the error lost %q: %v", s, err)
		}
	}
	api := &readyFake{runs: []readyRun{{out: "status: error\ntoken: abc.def.ghi\n", code: 1}}}
	err = WaitReady(context.Background(), api, Ready{ID: "u", Name: "web", Timeout: time.Second,
		Command: []string{"check"}, Every: 10 * time.Millisecond}, nil)
	if err == nil || strings.Contains(err.Error(), "abc.def.ghi") || !strings.Contains(err.Error(), "token: ***") {
		t.Errorf("command output: %v", err)
	}
}
