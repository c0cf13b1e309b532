package libvirt

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// procDomainOpenConsole is REMOTE_PROC_DOMAIN_OPEN_CONSOLE.
const procDomainOpenConsole = 201

func TestConsoleRingKeepsTheLastLines(t *testing.T) {
	r := NewConsoleRing(3)
	_, _ = r.Write([]byte("one\r\ntwo\r\n\x1b[0mthree\r\nfour\r\nfi"))
	if got, want := r.Tail(0), []string{"[0mthree", "four", "fi"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tail: %q, want %q (last 3 lines, the partial one included; CR and ESC dropped)", got, want)
	}
	_, _ = r.Write([]byte("ve\n"))
	if got, want := r.Tail(2), []string{"four", "five"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tail 2: %q, want %q", got, want)
	}
	if r.Written() != 32 {
		t.Fatalf("written %d bytes, want 32", r.Written())
	}
	long := NewConsoleRing(1)
	_, _ = long.Write([]byte(strings.Repeat("x", 3*consoleLineMax) + "\n"))
	if got := long.Tail(1); len(got) != 1 || len(got[0]) != consoleLineMax {
		t.Fatalf("a long line is cut at %d bytes, got %d", consoleLineMax, len(got[0]))
	}
	if got := NewConsoleRing(0).Tail(5); len(got) != 0 {
		t.Fatalf("empty ring: %q", got)
	}
}

// The console stream blocks until it ends; stopping it is closing its own connection.
// go-libvirt's mock daemon never answers DomainOpenConsole, as a quiet guest's console
// never ends: the reader must return when ctx ends, and the shared pool must neither lose
// a connection to it nor be held up by it.
func TestReadConsoleStopsOnCancel(t *testing.T) {
	md := startMockDaemon(t)
	c, err := NewClient(Config{URI: "qemu+unix:///system?socket=" + md.socket, DialAttempts: 1, MaxConnections: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ring := NewConsoleRing(5)
	go func() { done <- c.ReadConsole(ctx, "test", ring) }()
	waitUntil(t, "the console stream to open", func() bool { return md.count(procDomainOpenConsole) == 1 })

	// The only pooled connection is free meanwhile.
	lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer lcancel()
	if _, err := c.LookupDomain(lctx, "test"); err != nil {
		t.Fatalf("the pool is held up by the console stream: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a console read stopped by its caller returns nil, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the console reader did not stop when its context ended")
	}
	if s := c.Stats(); s.Open != 1 || s.InUse != 0 {
		t.Fatalf("pool after the console read: %+v; want its one connection, idle (the stream's is not the pool's)", s)
	}

	// WatchConsole stops the same way, and reports nothing as an error.
	w := c.WatchConsole(context.Background(), "test", 5)
	waitUntil(t, "the watch's console stream to open", func() bool { return md.count(procDomainOpenConsole) == 2 })
	start := time.Now()
	w.Stop()
	if time.Since(start) > 2*time.Second {
		t.Fatal("Stop waited for the stream")
	}
	if lines, err := w.Tail(20); err != nil || len(lines) != 0 {
		t.Fatalf("tail of a stopped, quiet console: %q, %v", lines, err)
	}
}
