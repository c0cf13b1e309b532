package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, allowed map[string]string, verbose bool, events string) (string, bool) {
	t.Helper()
	var out strings.Builder
	s := newSummary("unit", allowed, verbose, &out)
	if err := s.read(strings.NewReader(events)); err != nil {
		t.Fatal(err)
	}
	ok := s.finish()
	return out.String(), ok
}

const (
	passA = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
`
	subPass = `{"Action":"pass","Package":"p","Test":"TestA/sub"}
`
	skipB = `{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: qemu-img not installed\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
`
	failC = `{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: boom\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"--- FAIL: TestC (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
`
	pkgOK = `{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}
{"Action":"pass","Package":"p"}
`
)

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		name, events string
		allowed      map[string]string
		ok           bool
		closing      string
		has, hasNot  []string
	}{
		{name: "all pass", events: passA + subPass + pkgOK, ok: true, closing: "unit: 1 passed, 0 failed, 0 skipped",
			has: []string{"ok  \tp"}, hasNot: []string{"=== RUN", "--- PASS"}},
		{name: "a skip fails the phase", events: passA + skipB + pkgOK, closing: "unit: 1 passed, 0 failed, 1 skipped",
			has: []string{"TestB: b_test.go:9: qemu-img not installed", "skipped that must run"}},
		{name: "an allowed skip passes, and says why", events: passA + skipB + pkgOK, ok: true,
			allowed: map[string]string{"TestB": "no such tool on this kind of machine"}, closing: "unit: 1 passed, 0 failed, 1 skipped",
			has: []string{"TestB (no such tool on this kind of machine)"}},
		{name: "a failure shows the test's output", events: passA + failC, closing: "unit: 1 passed, 1 failed, 0 skipped",
			has: []string{"c_test.go:3: boom", "--- FAIL: TestC"}},
		{name: "a package failing outside a test counts", events: passA + `{"Action":"output","Package":"q","Output":"panic: init\n"}
{"Action":"fail","Package":"q"}
`, closing: "unit: 1 passed, 1 failed, 0 skipped", has: []string{"panic: init", "package q failed outside any test"}},
		{name: "a build failure counts", events: passA + `{"ImportPath":"r","Action":"build-output","Output":"r.go:1: syntax error\n"}
{"ImportPath":"r","Action":"build-fail"}
`, closing: "unit: 1 passed, 1 failed, 0 skipped", has: []string{"r.go:1: syntax error", "package r (build failed)"}},
		{name: "no test ran", events: pkgOK, closing: "unit: 0 passed, 0 failed, 0 skipped", has: []string{"no test ran"}},
		{name: "a skipped subtest fails too", events: passA + `{"Action":"skip","Package":"p","Test":"TestA/sub"}
` + pkgOK, closing: "unit: 1 passed, 0 failed, 0 skipped", has: []string{"TestA/sub"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := run(t, tc.allowed, false, tc.events)
			if ok != tc.ok {
				t.Errorf("ok = %t, want %t\n%s", ok, tc.ok, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if last := lines[len(lines)-1]; last != tc.closing {
				t.Errorf("closing line %q, want %q", last, tc.closing)
			}
			for _, h := range tc.has {
				if !strings.Contains(out, h) {
					t.Errorf("output lacks %q:\n%s", h, out)
				}
			}
			for _, h := range tc.hasNot {
				if strings.Contains(out, h) {
					t.Errorf("output has %q:\n%s", h, out)
				}
			}
		})
	}
}

func TestSummary_verbosePassesEverything(t *testing.T) {
	out, ok := run(t, nil, true, passA+pkgOK)
	if !ok || !strings.Contains(out, "=== RUN   TestA") || !strings.Contains(out, "--- PASS: TestA") {
		t.Errorf("ok %t, output:\n%s", ok, out)
	}
}

// The project's allow-list parses, and every entry names a test that exists and says why.
func TestAllowedSkipsFile(t *testing.T) {
	path := filepath.Join("..", "allowed-skips.txt")
	allowed, err := readAllowed(path)
	if err != nil {
		t.Fatal(err)
	}
	src := testSources(t)
	for name := range allowed {
		if !strings.Contains(src, "func "+strings.SplitN(name, "/", 2)[0]+"(") {
			t.Errorf("%s names %s, which no test file of the module defines", path, name)
		}
	}
	if _, err := readAllowed(writeTemp(t, "TestX\n")); err == nil {
		t.Error("an entry without a reason must be refused")
	}
}

func writeTemp(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "allow.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testSources is every _test.go file of the module, concatenated.
func testSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(filepath.Join("..", "..", ".."), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
