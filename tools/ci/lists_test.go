package ci

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testFuncs maps every top-level test function of the module to its source text.
func testFuncs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root(t), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				out[fn.Name.Name] = string(src[fset.Position(fn.Pos()).Offset:fset.Position(fn.End()).Offset])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found only %d test functions in the module: the walk is broken", len(out))
	}
	return out
}

// listEntries reads a tools/ci list: the first word of every line that is not a comment,
// and the rest of the line.
func listEntries(t *testing.T, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, line := range strings.Split(readFile(t, filepath.Join(root(t), "tools", "ci", name)), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		first, rest, _ := strings.Cut(line, " ")
		if _, dup := out[first]; dup {
			t.Errorf("tools/ci/%s:%d: %s is listed twice", name, i+1, first)
		}
		if strings.TrimSpace(rest) == "" {
			t.Errorf("tools/ci/%s:%d: %s has no reason", name, i+1, first)
		}
		out[first] = strings.TrimSpace(rest)
	}
	return out
}

// Every name in opentofu-skip.txt is a test (by exact name: the OpenTofu pass leaves out
// exactly these, so a misspelt or renamed one would silently run, or a prefix drop more).
func TestOpenTofuSkipFile(t *testing.T) {
	funcs := testFuncs(t)
	entries := listEntries(t, "opentofu-skip.txt")
	if len(entries) == 0 {
		t.Fatal("tools/ci/opentofu-skip.txt lists no test")
	}
	for name := range entries {
		if _, ok := funcs[name]; !ok {
			t.Errorf("tools/ci/opentofu-skip.txt names %s, which no test file defines", name)
		}
		if !strings.HasPrefix(name, "TestAcc") {
			t.Errorf("tools/ci/opentofu-skip.txt names %s: only acceptance tests (TestAcc*) run under a CLI", name)
		}
	}
}

// cli-versions.txt lists exactly the tests that ask tfversion.SkipBelow or
// acctest.SkipBelowCLI for a version,
// with the highest version each asks for: the list make check's version check and the old
// CLIs' legs rely on.
func TestCLIVersionsFile(t *testing.T) {
	// tfversion.SkipBelow with a tfversion.VersionX_Y_Z in resource.Test cases, and
	// acctest.SkipBelowCLI with "X.Y.Z" in tests that drive the CLI themselves.
	skipBelow := regexp.MustCompile(`SkipBelow\(tfversion\.Version(\d+)_(\d+)_(\d+)\)|SkipBelowCLI\(t, "(\d+)\.(\d+)\.(\d+)"`)
	want := map[string]string{}
	for name, src := range testFuncs(t) {
		for _, m := range skipBelow.FindAllStringSubmatch(src, -1) {
			v := m[1] + "." + m[2] + "." + m[3]
			if m[1] == "" {
				v = m[4] + "." + m[5] + "." + m[6]
			}
			if old, ok := want[name]; !ok || versionLess(old, v) {
				want[name] = v
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no test calls tfversion.SkipBelow: the search is broken, or cli-versions.txt should be empty")
	}
	got := map[string]string{}
	for name, rest := range listEntries(t, "cli-versions.txt") {
		got[name] = strings.Fields(rest)[0]
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s asks tfversion.SkipBelow(%s); tools/ci/cli-versions.txt says %q: list it as `%s %s <why>`", name, v, got[name], name, v)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("tools/ci/cli-versions.txt lists %s, which asks for no CLI version (tfversion.SkipBelow)", name)
		}
	}
}

func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range pa {
		if len(pa[i]) != len(pb[i]) {
			return len(pa[i]) < len(pb[i])
		}
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}
