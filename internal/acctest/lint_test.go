package acctest_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestAcceptanceTestsAskTheHost is a lint over the acceptance tests (func TestAcc* of
// internal/provider and internal/libvirt): each must check the real object, not only what
// Terraform wrote in its state. It parses the sources; it needs no daemon.
//
// The rule, in short:
//
//   - Some calls "ask the host": acctest.Client; a method of *libvirt.Client that takes a
//     context (it talks to the daemon); a function literal or function with a
//     *golibvirt.Libvirt parameter (it runs on a live connection); exec.Command /
//     exec.CommandContext (virsh, qemu-img, qemu-io, lvs...); os.Stat, os.Lstat,
//     os.ReadFile, os.ReadDir (files on the host). Any function, method or closure whose
//     body makes such a call, or calls or names a function that does, asks the host too:
//     within the test package, and through acctest's functions and methods (CheckGone,
//     DomainLookup, InspectDomain, HostCheck(func...), ...). Methods are matched by name,
//     which over-approximates. The gate (RequireAcc, PreCheck, Run, RunSerial) is no check.
//   - The checks of a test are the checks its resource.TestStep literals run: Check,
//     ConfigStateChecks and ConfigPlanChecks (a PlanOnly step runs only the plan checks,
//     an ImportState step only ImportStateCheck and ImportPlanChecks, a step that expects
//     an error none); and the statements that follow the test case's run (acctest.Run,
//     RunSerial, resource.Test) in the same block: `if err := gone(nil); ...`. Literals
//     count wherever the test reaches them: its body, or a function of its package it
//     calls. A local variable counts through its definition (check := func(...)...,
//     gone := acctest.CheckGone(...)) when it holds a function, not a name or a path.
//   - A test is "real object" when one of its checks asks the host; "error path" when
//     every step expects an error and its CheckDestroy (or a statement after the run)
//     asks the host; otherwise "state-only", and the lint fails naming it. A TestAcc* that
//     runs no test case (internal/libvirt's tests call the client themselves) is real
//     object when its body asks the host.
//
// It also fails for a TestAcc* that does not reach the gate (acctest.RequireAcc, Run,
// RunSerial or PreCheck), which would run without TF_ACC, and for a test of another name
// that reaches acctest.RequireAcc, Run or RunSerial: the unit phase runs it without TF_ACC
// (it skips) and the acceptance phase, which runs ^TestAcc, never does.
func TestAcceptanceTestsAskTheHost(t *testing.T) {
	root := filepath.Join("..", "..")
	a, err := newLint(root)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[testKind]int{}
	total := 0
	for _, dir := range []string{"internal/provider", "internal/libvirt"} {
		files, err := parseDir(a.fset, filepath.Join(root, dir), func(n string) bool { return strings.HasSuffix(n, "_test.go") })
		if err != nil {
			t.Fatal(err)
		}
		res := a.check(files)
		for _, r := range res.tests {
			total++
			counts[r.kind]++
			why, pending := pendingStateOnly[r.name]
			switch {
			case r.kind == stateOnly && pending:
				t.Logf("%s: %s checks only Terraform state (pending: %s)", a.pos(r.pos), r.name, why)
			case r.kind == stateOnly:
				t.Errorf("%s: %s checks only Terraform state: give it a check that asks libvirt or the host (acctest.Client, InspectDomain, CheckVolume, HostCheck...)", a.pos(r.pos), r.name)
			case pending:
				t.Errorf("%s: %s asks the host now: remove it from pendingStateOnly", a.pos(r.pos), r.name)
			}
			if !r.gated {
				t.Errorf("%s: %s does not call acctest.RequireAcc, Run, RunSerial or PreCheck: it would run without TF_ACC", a.pos(r.pos), r.name)
			}
		}
		for _, r := range res.misnamed {
			t.Errorf("%s: %s runs an acceptance test (acctest.RequireAcc, Run or RunSerial) but is not named TestAcc...: no phase would run it", a.pos(r.pos), r.name)
		}
	}
	t.Logf("acceptance tests: %d check the real object, %d error path with CheckDestroy, %d state-only", counts[realObject], counts[errorPath], counts[stateOnly])
	if total < 150 {
		t.Errorf("found only %d acceptance tests, want at least 150: is the parser broken?", total)
	}
}

// pendingStateOnly are state-only tests that another change, by their owner, is to give
// real checks: the lint logs them instead of failing, and fails once one of them asks the
// host (then its line goes). Keep it empty otherwise.
var pendingStateOnly = map[string]string{}

// TestLintClassifier runs the lint's classifier on small test packages.
func TestLintClassifier(t *testing.T) {
	a, err := newLint(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const header = `package provider_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func cfg() string { return "" }

// exists asks libvirt through a package helper.
func exists(t *testing.T, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		_, err := acctest.Client(t).LookupDomain(acctest.Ctx(t), name)
		return err
	}
}
`
	cases := []struct {
		name, src string
		kind      testKind
		gated     bool
	}{
		{"state only", `
func TestAccX(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config:            cfg(),
			ConfigPlanChecks:  acctest.Plans(),
			ConfigStateChecks: acctest.State("libvirt_domain.d", "name", "x"),
			Check:             resource.TestCheckResourceAttr("libvirt_domain.d", "name", "x"),
		}},
	})
}`, stateOnly, true},
		{"state only with a setup that asks", `
func TestAccX(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "x")
	check := resource.TestCheckResourceAttr("libvirt_domain.d", "name", name)
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{Config: cfg() + disk, Check: check}},
	})
}`, stateOnly, true},
		{"CheckDestroy only, no error expected", `
func TestAccX(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"d": acctest.DomainLookup("d")}),
		Steps: []resource.TestStep{
			{Config: cfg(), ExpectError: regexp.MustCompile("x")},
			{Config: cfg(), ConfigStateChecks: acctest.State("libvirt_domain.d", "name", "x")},
		},
	})
}`, stateOnly, true},
		{"error path with a CheckDestroy asking libvirt", `
func TestAccX(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone("v"),
		Steps: []resource.TestStep{{Config: cfg(), ExpectError: regexp.MustCompile("x")}},
	})
}`, errorPath, true},
		{"error path with a CheckDestroy that does not ask", `
func TestAccX(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error { return nil },
		Steps: []resource.TestStep{{Config: cfg(), ExpectError: regexp.MustCompile("x")}},
	})
}`, stateOnly, true},
		{"Check calls acctest.Client", `
func TestAccX(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: cfg(),
			Check: func(*terraform.State) error {
				_, err := acctest.Client(t).HostInfo(acctest.Ctx(t))
				return err
			},
		}},
	})
}`, realObject, true},
		{"Check through a local closure and a package helper", `
func TestAccX(t *testing.T) {
	here := exists(t, "d")
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{Config: cfg(), Check: resource.ComposeTestCheckFunc(here)}},
	})
}`, realObject, true},
		{"direct check after the run", `
func TestAccX(t *testing.T) {
	gone := acctest.CheckGone(map[string]acctest.Lookup{"d": acctest.DomainLookup("d")})
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{Config: cfg(), ExpectError: regexp.MustCompile("x")}},
	})
	if err := gone(nil); err != nil {
		t.Fatal(err)
	}
}`, errorPath, true},
		{"no test case, asks the client itself", `
func TestAccX(t *testing.T) {
	acctest.RequireAcc(t)
	if _, err := acctest.Client(t).ListDomains(acctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
}`, realObject, true},
		{"a Check on a PlanOnly step does not run", `
func TestAccX(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{Config: cfg(), PlanOnly: true, Check: exists(t, "d")}},
	})
}`, stateOnly, true},
		{"a custom plan check of a PlanOnly step", `
type onHost func() error

func (c onHost) CheckPlan(context.Context, plancheck.CheckPlanRequest, *plancheck.CheckPlanResponse) { _ = c() }

func TestAccX(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{Config: cfg(), PlanOnly: true, ConfigPlanChecks: resource.ConfigPlanChecks{
			PostApplyPostRefresh: []plancheck.PlanCheck{onHost(func() error { _, err := acctest.InspectDomain(t, "d"); return err })},
		}}},
	})
}`, realObject, true},
		{"a check from a table of cases", `
func TestAccX(t *testing.T) {
	for _, c := range []struct{ check resource.TestCheckFunc }{{check: exists(t, "d")}} {
		acctest.Run(t, resource.TestCase{Steps: []resource.TestStep{{Config: cfg(), Check: c.check}}})
	}
}`, realObject, true},
		{"not gated", `
func TestAccX(t *testing.T) {
	resource.Test(t, resource.TestCase{
		Steps: []resource.TestStep{{Config: cfg(), Check: exists(t, "d")}},
	})
}`, realObject, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := parser.ParseFile(a.fset, "x_test.go", header+c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			res := a.check([]*ast.File{f})
			if len(res.tests) != 1 {
				t.Fatalf("found %d acceptance tests, want 1", len(res.tests))
			}
			if r := res.tests[0]; r.kind != c.kind || r.gated != c.gated {
				t.Errorf("kind %s, gated %v; want %s, %v", r.kind, r.gated, c.kind, c.gated)
			}
		})
	}

	// A test of another name that runs an acceptance case is misnamed.
	f, err := parser.ParseFile(a.fset, "y_test.go", header+`
func TestDomain_live(t *testing.T) { acctest.RequireAcc(t) }
func TestUnit(t *testing.T) { acctest.RunUnit(t, resource.TestCase{}) }
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := a.check([]*ast.File{f})
	if len(res.misnamed) != 1 || res.misnamed[0].name != "TestDomain_live" {
		t.Errorf("misnamed = %v, want TestDomain_live only", res.misnamed)
	}
}

type testKind int

const (
	stateOnly testKind = iota
	realObject
	errorPath
)

func (k testKind) String() string {
	return [...]string{"state-only", "real object", "error path"}[k]
}

// Import paths the lint knows.
const (
	acctestPath   = "github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	goLibvirtPath = "github.com/digitalocean/go-libvirt"
	resourcePath  = "github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// rootCalls are the package functions that ask the host by themselves.
var rootCalls = map[string]map[string]bool{
	"os/exec":   {"Command": true, "CommandContext": true},
	"os":        {"Stat": true, "Lstat": true, "ReadFile": true, "ReadDir": true},
	acctestPath: {"Client": true},
}

// gate are acctest's functions that gate a test on TF_ACC (a test must reach one); they
// ask the host but are not checks. runs are the calls that run a test case.
var (
	gate      = map[string]bool{"RequireAcc": true, "RequireHostB": true, "PreCheck": true, "Run": true, "RunSerial": true}
	accGate   = map[string]bool{"RequireAcc": true, "RequireHostB": true, "Run": true, "RunSerial": true} // only acceptance tests call these
	runs      = map[string]map[string]bool{acctestPath: {"Run": true, "RunSerial": true}, resourcePath: {"Test": true, "ParallelTest": true}}
	checkKeys = map[string]bool{"Check": true, "ConfigStateChecks": true, "ConfigPlanChecks": true, "ImportStateCheck": true, "ImportPlanChecks": true}
)

// lint holds what the lint knows of acctest and of the libvirt client.
type lint struct {
	fset    *token.FileSet
	root    string
	acc     *pkg           // acctest's non-test files
	methods map[string]int // *libvirt.Client methods that take a context: their parameter count
}

func newLint(root string) (*lint, error) {
	a := &lint{fset: token.NewFileSet(), root: root, methods: map[string]int{}}
	nonTest := func(n string) bool { return !strings.HasSuffix(n, "_test.go") }
	lv, err := parseDir(a.fset, filepath.Join(root, "internal", "libvirt"), nonTest)
	if err != nil {
		return nil, err
	}
	for _, f := range lv {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() || recvName(fd) != "Client" {
				continue
			}
			params := fd.Type.Params.List
			if len(params) == 0 || types(params[0].Type) != "context.Context" {
				continue
			}
			n := 0
			for _, p := range params {
				n += max(1, len(p.Names))
			}
			a.methods[fd.Name.Name] = n
		}
	}
	if len(a.methods) < 20 {
		return nil, fmt.Errorf("found only %d methods of *libvirt.Client that take a context", len(a.methods))
	}
	acc, err := parseDir(a.fset, filepath.Join(root, "internal", "acctest"), nonTest)
	if err != nil {
		return nil, err
	}
	a.acc = a.index(acc, acctestPath)
	return a, nil
}

// pos is p as file:line, relative to the module root.
func (a *lint) pos(p token.Pos) string {
	at := a.fset.Position(p)
	if rel, err := filepath.Rel(a.root, at.Filename); err == nil {
		at.Filename = rel
	}
	return at.Filename + ":" + strconv.Itoa(at.Line)
}

func parseDir(fset *token.FileSet, dir string, keep func(string) bool) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || !keep(e.Name()) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// pkg is one package's functions, methods, variables and types, and which of them ask
// the host.
type pkg struct {
	a       *lint
	path    string           // import path, or "" for a test package
	funcs   map[string]*fn   // package functions
	methods map[string][]*fn // methods, by name
	vars    map[string]*def  // package variables
	checks  map[string][]*fn // CheckState/CheckPlan methods, by receiver type
	imports map[*ast.File]map[string]string
}

// fn is a function or method declaration, and whether it asks the host.
type fn struct {
	decl *ast.FuncDecl
	file *ast.File
	asks bool
	gate bool // reaches acctest's gate
	acc  bool // reaches acctest.RequireAcc, Run or RunSerial
	runs bool // runs a test case
}

// def is what a variable is set to: expr, the index-th of its results (-1: all of it),
// or, for a range variable, an element of expr; or nothing yet, with a function type.
type def struct {
	expr  ast.Expr
	index int
	elem  bool
	typed bool
}

func recvName(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// types is a type expression as written (context.Context, *golibvirt.Libvirt).
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + types(e.X)
	}
	return ""
}

// index reads files of one package and works out which functions ask the host.
func (a *lint) index(files []*ast.File, path string) *pkg {
	p := &pkg{a: a, path: path, funcs: map[string]*fn{}, methods: map[string][]*fn{}, vars: map[string]*def{},
		checks: map[string][]*fn{}, imports: map[*ast.File]map[string]string{}}
	for _, f := range files {
		im := map[string]string{}
		for _, s := range f.Imports {
			ip, _ := strconv.Unquote(s.Path.Value)
			name := ip[strings.LastIndex(ip, "/")+1:]
			if ip == goLibvirtPath {
				name = "libvirt"
			}
			if s.Name != nil {
				name = s.Name.Name
			}
			im[name] = ip
		}
		p.imports[f] = im
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				x := &fn{decl: d, file: f}
				if d.Recv == nil {
					p.funcs[d.Name.Name] = x
					continue
				}
				p.methods[d.Name.Name] = append(p.methods[d.Name.Name], x)
				if d.Name.Name == "CheckState" || d.Name.Name == "CheckPlan" {
					p.checks[recvName(d)] = append(p.checks[recvName(d)], x)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								p.vars[n.Name] = &def{expr: vs.Values[i], index: -1}
							} else if len(vs.Values) == 1 {
								p.vars[n.Name] = &def{expr: vs.Values[0], index: i}
							}
						}
					}
				}
			}
		}
	}
	// Until nothing changes: a function asks the host when its body does.
	all := p.all()
	for changed := true; changed; {
		changed = false
		for _, x := range all {
			s := p.scope(x.decl, x.file)
			if !x.asks && s.asks(x.decl) {
				x.asks, changed = true, true
			}
			if !x.gate && s.reaches(x.decl.Body, gate, func(f *fn) bool { return f.gate }) {
				x.gate, changed = true, true
			}
			if !x.acc && s.reaches(x.decl.Body, accGate, func(f *fn) bool { return f.acc }) {
				x.acc, changed = true, true
			}
			if !x.runs && s.runsCase(x.decl.Body) {
				x.runs, changed = true, true
			}
		}
	}
	return p
}

func (p *pkg) all() []*fn {
	var all []*fn
	for _, x := range p.funcs {
		all = append(all, x)
	}
	for _, ms := range p.methods {
		all = append(all, ms...)
	}
	return all
}

// scope is a function being read: its package, its file's imports, and its local
// variables (of all its blocks and closures at once).
type scope struct {
	p       *pkg
	imports map[string]string
	locals  map[string][]*def
	seen    map[*def]bool
}

func (p *pkg) scope(fd *ast.FuncDecl, f *ast.File) *scope {
	s := &scope{p: p, imports: p.imports[f], locals: map[string][]*def{}, seen: map[*def]bool{}}
	add := func(lhs []ast.Expr, rhs []ast.Expr) {
		for i, l := range lhs {
			id, ok := l.(*ast.Ident)
			if !ok || id.Name == "_" {
				continue
			}
			switch {
			case len(rhs) == len(lhs):
				s.locals[id.Name] = append(s.locals[id.Name], &def{expr: rhs[i], index: -1})
			case len(rhs) == 1:
				s.locals[id.Name] = append(s.locals[id.Name], &def{expr: rhs[0], index: i})
			}
		}
	}
	params := func(ft *ast.FuncType) {
		for _, l := range ft.Params.List {
			for _, n := range l.Names {
				s.locals[n.Name] = append(s.locals[n.Name], nil) // a parameter: not known here
			}
		}
	}
	params(fd.Type)
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			add(n.Lhs, n.Rhs)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
				if len(n.Values) == 0 && n.Type != nil && isFuncType(n.Type) {
					s.locals[id.Name] = append(s.locals[id.Name], &def{typed: true}) // var checks []resource.TestCheckFunc
				}
			}
			add(lhs, n.Values)
		case *ast.RangeStmt:
			if id, ok := n.Value.(*ast.Ident); ok {
				s.locals[id.Name] = append(s.locals[id.Name], &def{expr: n.X, index: -1, elem: true})
			}
		case *ast.FuncLit:
			params(n.Type)
		}
		return true
	})
	return s
}

// pkgOf tells which package the selector x.Sel names (its import path), if x is an import.
func (s *scope) pkgOf(e ast.Expr) (path, name string, ok bool) {
	sel, isSel := e.(*ast.SelectorExpr)
	if !isSel {
		return "", "", false
	}
	id, isID := sel.X.(*ast.Ident)
	if !isID {
		return "", "", false
	}
	if _, local := s.locals[id.Name]; local {
		return "", "", false
	}
	path, ok = s.imports[id.Name]
	return path, sel.Sel.Name, ok
}

// callee is what a call calls: a function of acctest or of this package, by name.
func (s *scope) callee(call *ast.CallExpr) (path, name string) {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		if _, local := s.locals[f.Name]; !local {
			return s.p.path, f.Name
		}
	case *ast.SelectorExpr:
		if path, name, ok := s.pkgOf(f); ok {
			return path, name
		}
	}
	return "", ""
}

// fnOf is the function of acctest or of this package that path.name names, if any.
func (s *scope) fnOf(path, name string) *fn {
	switch {
	case path == s.p.path:
		return s.p.funcs[name]
	case path == acctestPath && s.p.a.acc != nil && ast.IsExported(name):
		return s.p.a.acc.funcs[name]
	}
	return nil
}

// reaches tells whether n calls one of acctest's names, or a function of this package
// for which reached says so.
func (s *scope) reaches(n ast.Node, names map[string]bool, reached func(*fn) bool) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !found {
			path, name := s.callee(call)
			if path == acctestPath && names[name] {
				found = true
			} else if f := s.fnOf(path, name); f != nil && path == s.p.path && reached(f) {
				found = true
			}
		}
		return !found
	})
	return found
}

// runsCase tells whether n runs a test case (acctest.Run, resource.Test...), itself or
// through a function of this package.
func (s *scope) runsCase(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !found {
			path, name := s.callee(call)
			if runs[path][name] {
				found = true
			} else if f := s.fnOf(path, name); f != nil && path == s.p.path && f.runs {
				found = true
			}
		}
		return !found
	})
	return found
}

// asks tells whether n asks the host: it calls, or names as a value, something that does.
func (s *scope) asks(n ast.Node) bool {
	if n == nil {
		return false
	}
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			if s.callAsks(n) {
				found = true
			}
			// The callee itself, when an identifier, is not a value: read only the
			// arguments (and a callee that is not a name).
			switch n.Fun.(type) {
			case *ast.Ident, *ast.SelectorExpr:
				for _, arg := range n.Args {
					if s.asks(arg) {
						found = true
						break
					}
				}
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && !found {
					if _, _, isPkg := s.pkgOf(sel); !isPkg && s.asks(sel.X) {
						found = true
					}
				}
				return false
			}
		case *ast.FuncLit:
			if hasConn(n.Type, s.imports) {
				found = true
			}
		case *ast.FuncDecl:
			if hasConn(n.Type, s.imports) {
				found = true
			}
		case *ast.Ident:
			if s.valueAsks(n.Name) {
				found = true
			}
		case *ast.SelectorExpr:
			if path, name, ok := s.pkgOf(n); ok {
				// A function of acctest named as a value (CheckDestroy: acctest.X).
				if f := s.fnOf(path, name); f != nil && f.asks && !(path == acctestPath && gate[name]) {
					found = true
				}
				return false
			}
			if s.fieldAsks(n) {
				found = true
			}
		case *ast.CompositeLit:
			// A custom state or plan check of this package.
			if id, ok := n.Type.(*ast.Ident); ok {
				for _, m := range s.p.checks[id.Name] {
					if m.asks {
						found = true
					}
				}
			}
		}
		return !found
	})
	return found
}

// callAsks tells whether the function a call calls asks the host (its arguments aside).
func (s *scope) callAsks(call *ast.CallExpr) bool {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		if ds, local := s.locals[f.Name]; local {
			for _, d := range ds {
				if s.defAsks(d) {
					return true
				}
			}
			return false
		}
		if x := s.p.funcs[f.Name]; x != nil {
			return x.asks
		}
		if d := s.p.vars[f.Name]; d != nil {
			return s.defAsks(d)
		}
		return s.p.path == acctestPath && rootCalls[acctestPath][f.Name]
	case *ast.SelectorExpr:
		if path, name, ok := s.pkgOf(f); ok {
			if rootCalls[path][name] {
				return true
			}
			if path == acctestPath && gate[name] {
				return false
			}
			if x := s.fnOf(path, name); x != nil {
				return x.asks
			}
			return false
		}
		// A method, by name: of *libvirt.Client, of this package, of acctest.
		name := f.Sel.Name
		if n, ok := s.p.a.methods[name]; ok && (len(call.Args) == n || call.Ellipsis.IsValid()) {
			return true
		}
		for _, m := range s.p.methods[name] {
			if m.asks {
				return true
			}
		}
		if s.p.a.acc != nil && s.p != s.p.a.acc && ast.IsExported(name) {
			for _, m := range s.p.a.acc.methods[name] {
				if m.asks {
					return true
				}
			}
		}
		return s.fieldAsks(f)
	case *ast.FuncLit:
		return s.asks(f)
	case *ast.CallExpr:
		// f(x)(y): what f(x) returns is called.
		return s.asks(f)
	}
	return false
}

// valueAsks tells whether the variable or function name, used as a value, asks the host:
// a local variable holding a function that does, or a function of this package that does.
func (s *scope) valueAsks(name string) bool {
	if ds, local := s.locals[name]; local {
		for _, d := range ds {
			if d != nil && s.holdsFunc(d) && s.defAsks(d) {
				return true
			}
		}
		return false
	}
	if x := s.p.funcs[name]; x != nil {
		return x.asks
	}
	if d := s.p.vars[name]; d != nil {
		return s.holdsFunc(d) && s.defAsks(d)
	}
	return false
}

// fieldAsks tells whether x.f, x a local variable, is a function that asks the host: a
// field f set, where x comes from, to something that does (a table of test cases).
func (s *scope) fieldAsks(sel *ast.SelectorExpr) bool {
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	for _, d := range s.locals[id.Name] {
		if d == nil || s.seen[d] {
			continue
		}
		s.seen[d] = true
		found := false
		ast.Inspect(d.expr, func(n ast.Node) bool {
			if kv, ok := n.(*ast.KeyValueExpr); ok && !found {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == sel.Sel.Name && s.asks(kv.Value) {
					found = true
				}
			}
			return !found
		})
		if !found && d.elem {
			// A table named by a variable: look where it is set.
			if x, ok := d.expr.(*ast.Ident); ok {
				found = s.fieldAsks(&ast.SelectorExpr{X: x, Sel: sel.Sel})
			}
		}
		delete(s.seen, d)
		if found {
			return true
		}
	}
	return false
}

// defAsks tells whether what a variable is set to asks the host.
func (s *scope) defAsks(d *def) bool {
	if d == nil || d.expr == nil || s.seen[d] {
		return false
	}
	s.seen[d] = true
	defer delete(s.seen, d)
	return s.asks(d.expr)
}

// holdsFunc tells whether a variable set so holds a function (or a check): a function
// literal, a function, or the result of a call declared to return one. A variable that
// holds a name or a path (name, disk := acctest.DomainDisk(...)) does not carry its
// definition's host calls into a check that reads it.
func (s *scope) holdsFunc(d *def) bool {
	if d.elem || d.typed {
		return true // an element of a table (its fields are read through fieldAsks), or declared a function
	}
	switch e := d.expr.(type) {
	case *ast.FuncLit:
		return true
	case *ast.Ident:
		if _, local := s.locals[e.Name]; !local {
			return s.p.funcs[e.Name] != nil
		}
		for _, dd := range s.locals[e.Name] {
			if dd != nil && !s.seen[dd] {
				s.seen[dd] = true
				ok := s.holdsFunc(dd)
				delete(s.seen, dd)
				if ok {
					return true
				}
			}
		}
	case *ast.SelectorExpr:
		if path, name, ok := s.pkgOf(e); ok {
			return s.fnOf(path, name) != nil
		}
		return true // a method value
	case *ast.CallExpr:
		var results *ast.FieldList
		switch f := e.Fun.(type) {
		case *ast.FuncLit:
			results = f.Type.Results
		case *ast.Ident:
			if f.Name == "append" {
				// append(checks, ...): what the slice appended to holds.
				return len(e.Args) > 0 && s.holdsFunc(&def{expr: e.Args[0], index: -1})
			}
			if ds, local := s.locals[f.Name]; local {
				for _, dd := range ds {
					if dd != nil {
						if lit, ok := dd.expr.(*ast.FuncLit); ok {
							results = lit.Type.Results
						}
					}
				}
			} else if x := s.p.funcs[f.Name]; x != nil {
				results = x.decl.Type.Results
			}
		case *ast.SelectorExpr:
			path, name, ok := s.pkgOf(f)
			if !ok {
				return false
			}
			if x := s.fnOf(path, name); x != nil {
				results = x.decl.Type.Results
			} else {
				// resource.ComposeTestCheckFunc, ComposeAggregateTestCheckFunc.
				return strings.HasPrefix(name, "Compose")
			}
		}
		if results == nil {
			return false
		}
		i := 0
		for _, r := range results.List {
			for range max(1, len(r.Names)) {
				if d.index < 0 || d.index == i {
					if isFuncType(r.Type) {
						return true
					}
				}
				i++
			}
		}
	}
	return false
}

// isFuncType tells whether a result type is a function or a check: func(...), a
// TestCheckFunc, an acctest.Lookup, a StateCheck or PlanCheck (or a slice of them).
func isFuncType(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.FuncType:
		return true
	case *ast.ArrayType:
		return isFuncType(t.Elt)
	case *ast.SelectorExpr:
		return isFuncType(t.Sel)
	case *ast.Ident:
		return t.Name == "TestCheckFunc" || t.Name == "Lookup" || strings.HasSuffix(t.Name, "Check") || t.Name == "ConfigPlanChecks"
	}
	return false
}

// hasConn tells whether a function takes a live go-libvirt connection.
func hasConn(ft *ast.FuncType, imports map[string]string) bool {
	for _, p := range ft.Params.List {
		t := p.Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		if sel, ok := t.(*ast.SelectorExpr); ok && sel.Sel.Name == "Libvirt" {
			if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] == goLibvirtPath {
				return true
			}
		}
	}
	return false
}

// result is one test function's verdict.
type result struct {
	name  string
	pos   token.Pos
	kind  testKind
	gated bool
}

type results struct {
	tests    []result // the TestAcc* functions
	misnamed []result // other tests that reach acctest.RequireAcc, Run or RunSerial
}

// check classifies the tests of one package's test files.
func (a *lint) check(files []*ast.File) results {
	p := a.index(files, "")
	var res results
	for _, x := range p.funcs {
		d := x.decl
		if !strings.HasPrefix(d.Name.Name, "Test") || d.Recv != nil || len(d.Type.Params.List) != 1 || types(d.Type.Params.List[0].Type) != "*testing.T" {
			continue
		}
		if !strings.HasPrefix(d.Name.Name, "TestAcc") {
			if x.acc {
				res.misnamed = append(res.misnamed, result{name: d.Name.Name, pos: d.Pos()})
			}
			continue
		}
		res.tests = append(res.tests, result{name: d.Name.Name, pos: d.Pos(), kind: p.classify(x), gated: x.gate})
	}
	sort.Slice(res.tests, func(i, j int) bool { return res.tests[i].pos < res.tests[j].pos })
	sort.Slice(res.misnamed, func(i, j int) bool { return res.misnamed[i].pos < res.misnamed[j].pos })
	return res
}

// classify says what a test checks.
func (p *pkg) classify(test *fn) testKind {
	s := p.scope(test.decl, test.file)
	if !test.runs {
		if s.asks(test.decl.Body) {
			return realObject
		}
		return stateOnly
	}
	hostChecked, destroy, steps, errorSteps := false, false, 0, 0
	// The step and case literals of the test and of the functions of its package it calls.
	visited := map[*fn]bool{}
	var visit func(x *fn)
	visit = func(x *fn) {
		if visited[x] {
			return
		}
		visited[x] = true
		s := p.scope(x.decl, x.file)
		ast.Inspect(x.decl.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				switch s.literal(n.Type) {
				case "TestCase":
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok && key(kv) == "CheckDestroy" && s.asks(kv.Value) {
							destroy = true
						}
					}
				case "TestStep":
					steps++
					errs, r := s.step(n)
					if errs {
						errorSteps++
					}
					hostChecked = hostChecked || r
				case "[]TestStep":
					for _, e := range n.Elts {
						if lit, ok := e.(*ast.CompositeLit); ok && lit.Type == nil {
							steps++
							errs, r := s.step(lit)
							if errs {
								errorSteps++
							}
							hostChecked = hostChecked || r
						}
					}
				}
			case *ast.AssignStmt:
				// step.Check = ..., c.CheckDestroy = ...
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && i < len(n.Rhs) {
						switch {
						case checkKeys[sel.Sel.Name] && s.asks(n.Rhs[i]):
							hostChecked = true
						case sel.Sel.Name == "CheckDestroy" && s.asks(n.Rhs[i]):
							destroy = true
						}
					}
				}
			case *ast.BlockStmt:
				// Statements after a test case ran, in the same block.
				ran := false
				for _, st := range n.List {
					if ran && s.asks(st) {
						hostChecked, destroy = true, true // a direct check: of the object, or that it is gone
					}
					ran = ran || s.runsCase(st)
				}
			case *ast.CallExpr:
				if path, name := s.callee(n); path == "" && name != "" {
					if f := p.funcs[name]; f != nil && f.runs {
						visit(f)
					}
				}
			}
			return true
		})
	}
	visit(test)
	if steps > 0 && errorSteps == steps {
		// The checks of a step that fails do not run: what is left is the destroy check.
		if destroy {
			return errorPath
		}
		return stateOnly
	}
	if hostChecked {
		return realObject
	}
	return stateOnly
}

// literal names the type of a composite literal of the resource package: TestCase,
// TestStep or []TestStep ("" otherwise).
func (s *scope) literal(t ast.Expr) string {
	if t == nil {
		return ""
	}
	if arr, ok := t.(*ast.ArrayType); ok {
		if n := s.literal(arr.Elt); n == "TestStep" {
			return "[]TestStep"
		}
		return ""
	}
	if path, name, ok := s.pkgOf(t); ok && path == resourcePath && (name == "TestCase" || name == "TestStep") {
		return name
	}
	return ""
}

func key(kv *ast.KeyValueExpr) string {
	if id, ok := kv.Key.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// step reads a TestStep literal: whether it expects an error, and whether one of the
// checks it runs asks the host. A step that expects an error runs none; a PlanOnly step
// runs only its plan checks; an import step its import checks.
func (s *scope) step(lit *ast.CompositeLit) (expectsError, hostChecked bool) {
	fields := map[string]ast.Expr{}
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			fields[key(kv)] = kv.Value
		}
	}
	isTrue := func(k string) bool { id, ok := fields[k].(*ast.Ident); return ok && id.Name == "true" }
	if e, ok := fields["ExpectError"]; ok {
		if id, isID := e.(*ast.Ident); !isID || id.Name != "nil" {
			return true, false
		}
	}
	runs := []string{"Check", "ConfigStateChecks", "ConfigPlanChecks"}
	switch {
	case isTrue("ImportState"):
		runs = []string{"ImportStateCheck", "ImportPlanChecks"}
	case isTrue("PlanOnly"):
		runs = []string{"ConfigPlanChecks"}
	}
	for _, k := range runs {
		if fields[k] != nil && s.asks(fields[k]) {
			hostChecked = true
		}
	}
	return false, hostChecked
}
