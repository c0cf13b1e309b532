// Command testsum reads `go test -json` (or `go tool test2json`) events on standard input
// and ends every test phase the same way: a plain closing line
//
//	LABEL: N passed, N failed, N skipped
//
// counting top-level tests, and a non-zero exit when a test failed, a package failed
// outside any test (build error, panic, timeout), no test ran, or a test was skipped that
// tools/ci/allowed-skips.txt does not name. A skipped test is not a passing one: a phase
// that skipped what it should have run must go red, not quietly green.
//
// With -v every line of output is passed through as it comes (acceptance runs: the log
// shows progress); without it only package results, the output of failed tests and the
// messages of skipped ones.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "pass every output line through")
	allowFile := flag.String("allow", "", "file of allowed skips: `TestName reason` a line")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go test -json ... | testsum [-v] [-allow FILE] LABEL")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	allowed := map[string]string{}
	if *allowFile != "" {
		var err error
		if allowed, err = readAllowed(*allowFile); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
	}
	s := newSummary(flag.Arg(0), allowed, *verbose, os.Stdout)
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	if !s.finish() {
		os.Exit(1)
	}
}

// readAllowed reads the allow-list: one test a line, its name then why its skip is right;
// blank lines and lines starting with # are comments. A name without a reason is refused.
func readAllowed(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		if strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason: every allowed skip says why", path, i+1, name)
		}
		out[name] = strings.TrimSpace(reason)
	}
	return out, nil
}

// event is one line of test2json's output.
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output / build-fail (Go 1.24+)
	Test       string
	Output     string
}

type summary struct {
	label   string
	allowed map[string]string
	verbose bool
	out     io.Writer

	passed, failed, skipped int
	buf                     map[string][]string // test output kept until its result (quiet mode)
	failedIn                map[string]bool     // packages with a failed test
	unexpected              []string            // skipped tests the allow-list does not name
	allowedSeen             []string
	packageFailures         []string
}

func newSummary(label string, allowed map[string]string, verbose bool, out io.Writer) *summary {
	return &summary{label: label, allowed: allowed, verbose: verbose, out: out,
		buf: map[string][]string{}, failedIn: map[string]bool{}}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (a test binary's stray output): pass it through.
			fmt.Fprintf(s.out, "%s\n", line)
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case "output", "build-output":
		switch {
		case s.verbose:
			fmt.Fprint(s.out, e.Output)
		case e.Test == "" && e.Action == "output":
			// Package lines: "ok  pkg 1.2s", "FAIL pkg", panics outside a test. Not the bare PASS.
			if t := strings.TrimSpace(e.Output); t != "PASS" && !strings.HasPrefix(t, "=== RUN") {
				fmt.Fprint(s.out, e.Output)
			}
		case e.Action == "build-output":
			fmt.Fprint(s.out, e.Output)
		default:
			s.buf[key] = append(s.buf[key], e.Output)
		}
	case "pass":
		if e.Test != "" && !strings.Contains(e.Test, "/") {
			s.passed++
		}
		delete(s.buf, key)
	case "fail":
		switch e.Test {
		case "":
			if !s.failedIn[e.Package] {
				s.packageFailures = append(s.packageFailures, e.Package)
				s.failed++
			}
		default:
			s.failedIn[e.Package] = true
			if !strings.Contains(e.Test, "/") {
				s.failed++
			}
			s.flush(key)
		}
	case "build-fail":
		s.packageFailures = append(s.packageFailures, e.ImportPath+" (build failed)")
		s.failed++
	case "skip":
		if e.Test == "" {
			return // a package without test files
		}
		top := !strings.Contains(e.Test, "/")
		if top {
			s.skipped++
		}
		reason, ok := s.allowed[e.Test]
		if !ok && !top {
			reason, ok = s.allowed[strings.SplitN(e.Test, "/", 2)[0]]
		}
		if ok {
			s.allowedSeen = append(s.allowedSeen, fmt.Sprintf("%s (%s)", e.Test, reason))
			delete(s.buf, key)
			return
		}
		s.unexpected = append(s.unexpected, e.Test+": "+skipMessage(s.buf[key]))
		s.flush(key)
	}
}

// flush prints what a test wrote, in quiet mode (verbose mode printed it already).
func (s *summary) flush(key string) {
	if !s.verbose {
		for _, o := range s.buf[key] {
			fmt.Fprint(s.out, o)
		}
	}
	delete(s.buf, key)
}

// skipMessage is the last line a skipped test logged before its result line: its reason.
func skipMessage(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "--- SKIP") && !strings.HasPrefix(l, "=== ") {
			return l
		}
	}
	return "(no message)"
}

// finish prints the verdict and the closing line; false when the phase failed.
func (s *summary) finish() bool {
	ok := true
	w := s.out
	for _, p := range s.packageFailures {
		fmt.Fprintf(w, "testsum: package %s failed outside any test (build error, panic or timeout: see above)\n", p)
	}
	if len(s.allowedSeen) > 0 {
		sort.Strings(s.allowedSeen)
		fmt.Fprintf(w, "testsum: %d skip(s) allowed by tools/ci/allowed-skips.txt:\n", len(s.allowedSeen))
		for _, a := range s.allowedSeen {
			fmt.Fprintf(w, "  %s\n", a)
		}
	}
	if len(s.unexpected) > 0 {
		ok = false
		fmt.Fprintf(w, "testsum: %d test(s) skipped that must run (a skipped test is not a passing one; make it run, or name it in tools/ci/allowed-skips.txt with the reason):\n", len(s.unexpected))
		for _, u := range s.unexpected {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	if s.failed > 0 {
		ok = false
	}
	if s.passed == 0 {
		ok = false
		fmt.Fprintln(w, "testsum: no test ran")
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped\n", s.label, s.passed, s.failed, s.skipped)
	return ok
}
