package libvirt

import (
	"strings"
	"sync"
)

// ConsoleRing keeps the last lines a guest wrote on its console: bounded in lines and in
// the length of one line, so a guest that writes without end (or without newlines) costs
// a fixed amount of memory. Safe for one writer and any number of readers.
type ConsoleRing struct {
	mu      sync.Mutex
	lines   []string // complete lines, oldest first, at most max
	partial strings.Builder
	max     int
	written int // bytes seen, for "did anything arrive"
}

// consoleLineMax bounds one line; longer lines are cut there.
const consoleLineMax = 1024

// NewConsoleRing keeps the last n lines (at least 1).
func NewConsoleRing(n int) *ConsoleRing { return &ConsoleRing{max: max(n, 1)} }

// Write takes console bytes: CR and other control characters but tab are dropped (a
// serial console writes CRLF and escape sequences), a newline ends a line.
func (r *ConsoleRing) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written += len(b)
	for _, c := range b {
		switch {
		case c == '\n':
			r.push(r.partial.String())
			r.partial.Reset()
		case c == '\t' || c >= 0x20 && c != 0x7f:
			if r.partial.Len() < consoleLineMax {
				r.partial.WriteByte(c)
			}
		}
	}
	return len(b), nil
}

func (r *ConsoleRing) push(line string) {
	if len(r.lines) == r.max {
		copy(r.lines, r.lines[1:])
		r.lines = r.lines[:r.max-1]
	}
	r.lines = append(r.lines, strings.TrimRight(line, " "))
}

// Tail returns the last n lines (all it keeps when n <= 0), with a line still being written as the
// last one.
func (r *ConsoleRing) Tail(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append([]string(nil), r.lines...)
	if p := strings.TrimRight(r.partial.String(), " "); p != "" {
		all = append(all, p)
	}
	if n <= 0 || n > r.max {
		n = r.max
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

// Written is how many bytes arrived so far.
func (r *ConsoleRing) Written() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written
}
