package libvirt_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// freezeHookLog is the tiny guest's freeze hook log: "<n> <action> <uptime>" per line.
const freezeHookLog = "/run/tinyguest/fsfreeze.log"

// hookActions is what the guest's freeze hook logged so far, in order.
func hookActions(t *testing.T, name string) []string {
	t.Helper()
	out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", "cat "+freezeHookLog+" 2>/dev/null; true")
	if err != nil {
		t.Fatalf("read the freeze hook log of %s: %v", name, err)
	}
	var actions []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			actions = append(actions, f[1])
		}
	}
	return actions
}

// freezeStatus is what the guest agent of name says of its filesystems (acctest's own
// client, not the one under test).
func freezeStatus(t *testing.T, name string) string {
	t.Helper()
	s, err := acctest.Client(t).GuestFSFreezeStatus(acctest.Ctx(t), name)
	if err != nil {
		t.Fatalf("guest-fsfreeze-status of %s: %v", name, err)
	}
	return s
}

// agentConnected is libvirt's view of the agent channel of name (the live XML's state).
func agentConnected(t *testing.T, name string) bool {
	t.Helper()
	var live string
	err := acctest.Client(t).Read(acctest.Ctx(t), "live XML of "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		live, err = l.DomainGetXMLDesc(d, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := domainxml.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	return p.AgentConnected
}

// killAgentWhenFrozen arms the guest: at the next freeze the hook logs, qemu-ga is
// killed (SIGKILL, as a crash: SIGTERM would thaw on its way out) 2 s later, with the
// filesystems frozen, and is not started again for down (the tiny guest's agent loop
// waits while /run/tinyguest/no-qemu-ga exists). Armed beforehand: a frozen agent runs no
// guest-exec.
func killAgentWhenFrozen(t *testing.T, name string, down time.Duration) {
	t.Helper()
	script := fmt.Sprintf(`n=$(wc -l < %[1]s 2>/dev/null || echo 0)
while [ "$(wc -l < %[1]s 2>/dev/null || echo 0)" -le "$n" ]; do sleep 0.2; done
sleep 2; touch /run/tinyguest/no-qemu-ga; killall -9 qemu-ga; sleep %[2]d; rm -f /run/tinyguest/no-qemu-ga`,
		freezeHookLog, int(down.Seconds()))
	if _, err := acctest.GuestExec(t, name, "/bin/sh", "-c", "(sh -c '"+script+"') </dev/null >/dev/null 2>&1 &"); err != nil {
		t.Fatal(err)
	}
}

// waitAgentGone waits (inside the freeze) until libvirt sees the agent channel
// disconnected: the agent was killed while the guest is frozen.
func waitAgentGone(t *testing.T, name string) error {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if !agentConnected(t, name) {
			return nil
		}
	}
	return errors.New("the guest agent was not killed within a minute")
}

// TestAccQuiesce_faults: the freeze around a copy point against a booted tiny guest and
// the real daemon, with the provider's client (FreezeDuring) and faults put in at the
// exact moment, inside the copy point while the guest is frozen:
//
//   - every pooled connection is held by the "copy": the thaw goes on a connection of its
//     own and the guest is thawed at once (through the pool it would wait 30 s and fail);
//   - the daemon drops this process's connections mid-copy: the thaw dials afresh;
//   - the agent dies (SIGKILL) while frozen and the guest's init starts it again 8 s
//     later: the thaw is sent until it is taken (qemu-ga starts in its frozen state) and
//     the copy stands;
//   - the agent dies and stays away past the thaw's deadline: the error says the guest
//     may still be frozen and names `virsh domfsthaw`; it is frozen indeed, and that
//     command thaws it once the agent is back.
//
// One guest boot for all four.
func TestAccQuiesce_faults(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("qfault")
	disk := acctest.Overlay(t, name+".qcow2")
	acctest.DefineGuest(t, name, disk, true)
	boot := time.Now()
	acctest.WaitForAgent(t, name)
	t.Logf("guest %s: agent answered %s after the start", name, time.Since(boot).Round(time.Second))

	// The client under test: a pool of its own (3 connections), as the provider has one.
	c := newClient(t, libvirt.Config{URI: acctest.URI(), MaxConnections: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dom, err := c.LookupDomain(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logged []string
	logf := func(msg string, f map[string]any) {
		logMu.Lock()
		defer logMu.Unlock()
		logged = append(logged, fmt.Sprint(msg, f))
		t.Logf("provider log: %s %v", msg, f)
	}
	thawLogs := func() int {
		logMu.Lock()
		defer logMu.Unlock()
		n := 0
		for _, l := range logged {
			if strings.HasPrefix(l, "thaw failed") || strings.HasPrefix(l, "guest filesystems thawed") {
				n++
			}
		}
		logged = nil
		return n
	}
	want := []string{}
	expectHook := func(t *testing.T, more ...string) {
		t.Helper()
		want = append(want, more...)
		if got := hookActions(t, name); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("freeze hook logged %v, want %v", got, want)
		}
		if s := freezeStatus(t, name); s != "thawed" {
			t.Fatalf("guest-fsfreeze-status %q after FreezeDuring, want thawed", s)
		}
	}

	t.Run("pool exhausted", func(t *testing.T) {
		release := make(chan struct{})
		var held sync.WaitGroup
		start := time.Now()
		err := c.FreezeDuring(ctx, dom, logf, func() error {
			if s := freezeStatus(t, name); s != "frozen" {
				return fmt.Errorf("guest-fsfreeze-status %q inside the freeze", s)
			}
			// The copy holds every pooled connection, past the thaw.
			for range 3 {
				held.Add(1)
				go func() {
					defer held.Done()
					_ = c.Read(ctx, "hold a pooled connection", func(*golibvirt.Libvirt) error { <-release; return nil })
				}()
			}
			for deadline := time.Now().Add(30 * time.Second); c.Stats().InUse < 3; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					return fmt.Errorf("the pool never got exhausted: %+v", c.Stats())
				}
			}
			start = time.Now()
			return nil
		})
		thawed := time.Since(start)
		if s := c.Stats(); s.InUse != 3 {
			t.Errorf("pool during the thaw: %+v, want all 3 connections held", s)
		}
		close(release)
		held.Wait()
		t.Logf("FreezeDuring: %v; thaw took %s with the pool exhausted", err, thawed.Round(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if thawed > 10*time.Second {
			t.Errorf("the thaw took %s: it waited for the pool", thawed)
		}
		if n := thawLogs(); n != 1 {
			t.Errorf("%d thaw attempts logged, want 1", n)
		}
		expectHook(t, "freeze", "thaw")
	})

	t.Run("connections dropped mid-copy", func(t *testing.T) {
		dropped := 0
		err := c.FreezeDuring(ctx, dom, logf, func() error {
			// A pooled connection in use as the daemon drops them all.
			return c.Read(ctx, "mid-copy", func(*golibvirt.Libvirt) error { dropped = acctest.DropDaemonClients(t); return nil })
		})
		t.Logf("FreezeDuring: %v (%d connections dropped)", err, dropped)
		if dropped == 0 {
			t.Fatal("no connection dropped: the test proved nothing")
		}
		if err != nil && !libvirt.IsTransport(err) {
			t.Fatalf("want nil or the copy's connection error, got %v", err)
		}
		var frozen *libvirt.GuestFrozenError
		if errors.As(err, &frozen) {
			t.Fatalf("the thaw failed: %v", err)
		}
		expectHook(t, "freeze", "thaw")
	})

	t.Run("agent killed while frozen, restarted", func(t *testing.T) {
		killAgentWhenFrozen(t, name, 8*time.Second)
		var thawFrom time.Time
		err := c.FreezeDuring(ctx, dom, logf, func() error {
			err := waitAgentGone(t, name)
			thawFrom = time.Now()
			return err
		})
		took := time.Since(thawFrom)
		t.Logf("FreezeDuring: %v; thawed %s after the agent died", err, took.Round(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if n := thawLogs(); n < 2 {
			t.Errorf("%d thaw attempts logged: want the refused ones and the one that worked", n)
		}
		acctest.WaitForAgent(t, name)
		expectHook(t, "freeze", "thaw")
	})

	t.Run("agent killed while frozen, away past the deadline", func(t *testing.T) {
		libvirt.SetThawTimeout(t, 6*time.Second)
		killAgentWhenFrozen(t, name, 25*time.Second)
		err := c.FreezeDuring(ctx, dom, logf, func() error { return waitAgentGone(t, name) })
		t.Logf("FreezeDuring: %v", err)
		var frozen *libvirt.GuestFrozenError
		if !errors.As(err, &frozen) {
			t.Fatalf("want a GuestFrozenError, got %v", err)
		}
		for _, s := range []string{"may still be frozen", "virsh domfsthaw " + name, "not connected"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("the error does not say %q: %v", s, err)
			}
		}
		if n := thawLogs(); n < 3 {
			t.Errorf("%d thaw attempts logged, want one a second until the deadline", n)
		}
		// The error is true: once the agent is back, the guest is still frozen ...
		acctest.WaitForAgent(t, name)
		if s := freezeStatus(t, name); s != "frozen" {
			t.Fatalf("guest-fsfreeze-status %q after the agent came back, want frozen (the error said so)", s)
		}
		// ... and what the error says to do thaws it.
		m := regexp.MustCompile("`(virsh domfsthaw [^`]+)`").FindStringSubmatch(err.Error())
		args := append([]string{"-c", acctest.URI()}, strings.Fields(m[1])[1:]...)
		if out, err := exec.Command("virsh", args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", m[1], err, out)
		}
		expectHook(t, "freeze", "thaw")
	})
}
