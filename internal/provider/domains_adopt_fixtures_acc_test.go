package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// The CLI half of the round-trip suite of issue #25 ("adopt anything, lose nothing"):
// every adopt fixture (internal/domainxml/testdata/adopt, domain adopt-NNN with a fixed
// uuid) is defined on the real libvirtd as written, and the real CLI with the real provider
// binary takes all of them through what a user does. No guest is ever started.
//
//  1. defined: libvirt accepts the fixture; what it prints back (dumpxml --inactive
//     --security-info) is this run's twin (the committed NNN-name.libvirt.xml but for
//     what libvirt generates anew on each definition: a MAC, a genid, an interfaceid).
//  2. imported: an import block for each, one `plan -generate-config-out`; a fixture
//     whose import or generation fails is found by its address and dropped, the rest go on.
//  3. plan clean: imports plus the generated configuration plan nothing but the import
//     (resource_changes of a saved plan, per address).
//  4. updated with nothing lost: the imports applied, a description set on every
//     resource and applied; the definition then equals the twin but for <description>,
//     the provider's metadata record, and what libvirt assigns or fills in (xmltree).
//  5. recreated identical: all destroyed (libvirt has no adopt-* left), the generated
//     configuration applied on the clean host; each definition equals the twin but for
//     what libvirt assigns or fills in. Then destroyed again, and nothing may be left.
//
// The per-fixture outcomes (one line a fixture that is not fully clean: its first failing
// column and why) must equal testdata/adopt-cli-outcomes.txt; ADOPT_UPDATE_LOSSY=1
// rewrites it. ADOPT_SUITE_REPORT=file writes the table and every failure as markdown.
// ADOPT_SUITE_FIXTURES runs a subset: numbers and ranges (001-040,152) or a regular
// expression on the fixture's name (virt-install); only their outcome lines are compared.
func TestAccDomainAdoptFixtures_cli(t *testing.T) {
	acctest.RequireAcc(t)
	t.Parallel()
	cases := adoptCLICases(t, adoptCLISubset(t))
	if len(cases) == 0 {
		t.Fatalf("%s=%q selects no fixture", adoptCLISubsetEnv, os.Getenv(adoptCLISubsetEnv))
	}
	runAdoptFixtures(t, cases)
}

// TestAccDomainAdopt_windows11 is issue #25's Windows 11 domain as virt-install makes it
// (fixture 251: q35, a Secure Boot pflash loader and nvram template chosen by hand, TPM
// 2.0 emulated, Hyper-V enlightenments, vmport off, smm, a user-mode NIC beside a network
// NIC, clock offset localtime with rtc / pit / hpet / hypervclock timers, libosinfo
// metadata, SPICE with two USB redirections) through the same steps as the fixture
// suite, alone: it must be fully clean (adopts, plans clean, keeps everything on a
// description change, recreated identical), under both CLIs.
func TestAccDomainAdopt_windows11(t *testing.T) {
	acctest.RequireAcc(t)
	cases := adoptCLICases(t, func(base string) bool { return strings.HasPrefix(base, "251-windows11") })
	if len(cases) != 1 {
		t.Fatalf("fixture 251-windows11-* not found (%d cases)", len(cases))
	}
	runAdoptFixtures(t, cases)
	if c := cases[0]; c.firstFailure() >= 0 {
		t.Fatalf("%s is not fully clean: %s", c.base, c.outcome())
	}
}

// runAdoptFixtures runs the steps over cases and compares their outcomes with the
// pinned ones.
func runAdoptFixtures(t *testing.T, cases []*adoptCase) {
	started := time.Now()
	s := &adoptSuite{t: t, cases: cases}

	// The names are the twins' (adopt-NNN), not RandomName: a leftover of an earlier run is
	// removed first, and the test refuses to run when it cannot be.
	acctest.LockNames(t, "adopt-")
	if removed, err := acctest.RemoveDomainsNamed(t, "adopt-"); err != nil {
		t.Fatalf("refusing to run: adopt-* domains are defined and cannot be removed: %v", err)
	} else if len(removed) > 0 {
		t.Logf("removed %d adopt-* domains left by an earlier run", len(removed))
	}
	t.Cleanup(func() {
		if removed, err := acctest.RemoveDomainsNamed(t, "adopt-"); err != nil {
			t.Errorf("cleanup: %v", err)
		} else if len(removed) > 0 && !t.Failed() {
			t.Errorf("cleanup had to remove %d adopt-* domains: %s", len(removed), strings.Join(removed, " "))
		}
	})

	s.step("define", s.define)
	w := newCLIWork(t, "")
	s.step("import (-generate-config-out)", func() { s.generate(w) })
	s.step("plan", func() { s.plan(w) })
	s.step("apply imports, update description", func() { s.update(w) })
	s.step("destroy", func() { s.destroy(w, colRecreated) })
	w2 := newCLIWork(t, "")
	s.step("recreate from the generated configuration", func() { s.recreate(w2) })
	s.step("destroy the recreated", func() { s.destroy(w2, -1) })

	s.report(time.Since(started))
	s.compareOutcomes()
}

const (
	adoptCLIFixtureDir  = "../domainxml/testdata/adopt"
	adoptCLIOutcomeFile = "testdata/adopt-cli-outcomes.txt"
	adoptCLISubsetEnv   = "ADOPT_SUITE_FIXTURES"
	adoptCLIReportEnv   = "ADOPT_SUITE_REPORT"
	adoptCLIUpdateEnv   = "ADOPT_UPDATE_LOSSY"
	adoptCLIParallelism = "-parallelism=10"
)

// The columns of the table, in the order a fixture goes through them.
const (
	colDefined = iota
	colImported
	colPlanClean
	colUpdated
	colRecreated
	colCount
)

var adoptCLIColumnNames = [colCount]string{"defined", "imported", "plan clean", "updated with nothing lost", "recreated identical"}

// adoptCase is one fixture and what happened to it.
type adoptCase struct {
	base    string // 001-minimal
	name    string // adopt-001, the domain
	res     string // adopt_001, the resource name
	written []byte // the fixture as written
	twin    string // libvirt's XML right after this run defined it
	block   string // its generated configuration
	planned bool   // in the saved plan of the imports (its plan did not fail)
	passed  [colCount]bool
	failed  [colCount]string // why the column failed ("" = passed or not reached)
}

func (c *adoptCase) fail(col int, reason string) {
	if c.failed[col] == "" {
		c.failed[col] = reason
	}
	c.passed[col] = false
}

func (c *adoptCase) pass(col int) {
	if c.failed[col] == "" {
		c.passed[col] = true
	}
}

// firstFailure is the first column that failed, or -1 when the fixture is fully clean.
func (c *adoptCase) firstFailure() int {
	for col := range colCount {
		if !c.passed[col] {
			return col
		}
	}
	return -1
}

func (c *adoptCase) outcome() string {
	col := c.firstFailure()
	reason := c.failed[col]
	if reason == "" {
		reason = "not reached"
	}
	return fmt.Sprintf("%s: %s: %s", c.base, adoptCLIColumnNames[col], reason)
}

type adoptSuite struct {
	t     *testing.T
	cases []*adoptCase
	steps []string // each step and its wall time
	notes []string
}

func (s *adoptSuite) step(name string, fn func()) {
	start := time.Now()
	fn()
	d := time.Since(start).Round(100 * time.Millisecond)
	s.steps = append(s.steps, fmt.Sprintf("%s: %s", name, d))
	s.t.Logf("step %s: %s", name, d)
}

// byRes is the case of resource name res (adopt_001), or nil.
func (s *adoptSuite) byRes(res string) *adoptCase {
	for _, c := range s.cases {
		if c.res == res {
			return c
		}
	}
	return nil
}

// adoptCLICases reads the fixtures pick selects.
func adoptCLICases(t *testing.T, pick func(base string) bool) []*adoptCase {
	t.Helper()
	entries, err := os.ReadDir(adoptCLIFixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*adoptCase
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".xml")
		if !ok || strings.HasSuffix(base, ".libvirt") || !regexp.MustCompile(`^[0-9]{3}-`).MatchString(base) || !pick(base) {
			continue
		}
		written, err := os.ReadFile(filepath.Join(adoptCLIFixtureDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name := "adopt-" + base[:3]
		if !bytes.Contains(written, []byte("<name>"+name+"</name>")) {
			t.Fatalf("%s: the domain is not named %s", e.Name(), name)
		}
		out = append(out, &adoptCase{base: base, name: name, res: "adopt_" + base[:3], written: written})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].base < out[j].base })
	return out
}

// adoptCLISubset reads ADOPT_SUITE_FIXTURES: empty selects all; numbers and ranges
// (001-040,152); else a regular expression on the fixture's base name.
func adoptCLISubset(t *testing.T) func(base string) bool {
	t.Helper()
	spec := os.Getenv(adoptCLISubsetEnv)
	if spec == "" {
		return func(string) bool { return true }
	}
	if regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`).MatchString(spec) {
		type span struct{ lo, hi int }
		var spans []span
		for _, part := range strings.Split(spec, ",") {
			lo, hi, found := strings.Cut(part, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if found {
				b, _ = strconv.Atoi(hi)
			}
			spans = append(spans, span{a, b})
		}
		return func(base string) bool {
			n, _ := strconv.Atoi(base[:3])
			return slices.ContainsFunc(spans, func(s span) bool { return n >= s.lo && n <= s.hi })
		}
	}
	re, err := regexp.Compile(spec)
	if err != nil {
		t.Fatalf("%s: %v", adoptCLISubsetEnv, err)
	}
	return re.MatchString
}

// define defines every fixture as written and keeps what libvirt prints back.
func (s *adoptSuite) define() {
	drift := 0
	for _, c := range s.cases {
		if err := acctest.TryDefineDomain(s.t, string(c.written)); err != nil {
			c.fail(colDefined, "refused: "+oneLine(err.Error()))
			continue
		}
		xml, err := acctest.DomainDefinitionXML(s.t, c.name)
		if err != nil {
			c.fail(colDefined, "dumpxml: "+oneLine(err.Error()))
			continue
		}
		c.twin = xml
		c.pass(colDefined)
		// The committed twin should be what libvirt printed now (a host with another
		// libvirt prints otherwise): noted, not failed.
		if committed, err := os.ReadFile(filepath.Join(adoptCLIFixtureDir, c.base+".libvirt.xml")); err == nil {
			if f, err := adoptCompare(string(committed), xml, c.written, false); err == nil && len(f) > 0 {
				drift++
				s.notes = append(s.notes, fmt.Sprintf("%s: libvirt printed it otherwise than the committed twin: %s", c.base, summarize(f)))
			}
		}
	}
	if drift > 0 {
		s.t.Logf("%d fixtures: libvirt printed them otherwise than their committed twins (see the report's notes)", drift)
	}
}

// active are the cases that passed column col.
func (s *adoptSuite) active(col int) []*adoptCase {
	var out []*adoptCase
	for _, c := range s.cases {
		if c.passed[col] {
			out = append(out, c)
		}
	}
	return out
}

// generate imports every defined domain with -generate-config-out; a fixture whose import
// or generation fails is dropped and the others tried again.
func (s *adoptSuite) generate(w *cliWork) {
	set := s.active(colDefined)
	for len(set) > 0 {
		main := adoptMainTF(set, true)
		w.write("main.tf", main.text)
		_ = os.Remove(w.path("generated.tf"))
		out, code := adoptRun(w, "plan", "-input=false", "-json", adoptCLIParallelism, "-generate-config-out=generated.tf")
		if code == 0 {
			break
		}
		for c, why := range s.attribute(out, main, adoptBlocks(readFileString(w.path("generated.tf")))) {
			c.fail(colImported, why)
		}
		n := len(set)
		if set = slices.DeleteFunc(set, func(c *adoptCase) bool { return c.failed[colImported] != "" }); len(set) == n {
			s.t.Fatalf("plan -generate-config-out fails for the fixtures already dropped:\n%s", tail(out))
		}
	}
	blocks := adoptBlocks(readFileString(w.path("generated.tf"))).blocks
	for _, c := range set {
		if b, ok := blocks[c.res]; ok {
			c.block = b
			c.pass(colImported)
		} else {
			c.fail(colImported, "no configuration generated")
		}
	}
}

// plan plans the imports with the generated configuration: per address, anything but the
// import is "not clean". A fixture whose plan fails is dropped.
func (s *adoptSuite) plan(w *cliWork) {
	set := s.active(colImported)
	for len(set) > 0 {
		main := adoptMainTF(set, true)
		w.write("main.tf", main.text)
		gen := adoptGeneratedTF(set)
		w.write("generated.tf", gen)
		out, code := adoptRun(w, "plan", "-input=false", "-json", adoptCLIParallelism, "-detailed-exitcode", "-out=plan.bin")
		if code == 0 || code == 2 {
			break
		}
		for c, why := range s.attribute(out, main, adoptBlocks(gen)) {
			c.fail(colPlanClean, "plan failed: "+why)
		}
		n := len(set)
		if set = slices.DeleteFunc(set, func(c *adoptCase) bool { return c.failed[colPlanClean] != "" }); len(set) == n {
			s.t.Fatalf("plan fails for the fixtures already dropped:\n%s", tail(out))
		}
	}
	if len(set) == 0 {
		return
	}
	for _, c := range set {
		c.planned = true
	}
	out, code := adoptRun(w, "show", "-json", "plan.bin")
	if code != 0 {
		s.t.Fatalf("show -json plan.bin (exit %d):\n%s", code, out)
	}
	var doc struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Name    string `json:"name"`
			Change  struct {
				Actions   []string        `json:"actions"`
				Before    json.RawMessage `json:"before"`
				After     json.RawMessage `json:"after"`
				Unknown   json.RawMessage `json:"after_unknown"`
				Importing json.RawMessage `json:"importing"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):strings.LastIndex(out, "}")+1]), &doc); err != nil {
		s.t.Fatalf("show -json plan.bin: %v", err)
	}
	seen := map[string]bool{}
	for _, rc := range doc.ResourceChanges {
		c := s.byRes(rc.Name)
		if c == nil || !c.passed[colImported] {
			continue
		}
		seen[c.res] = true
		switch {
		case len(rc.Change.Importing) == 0 || string(rc.Change.Importing) == "null":
			c.fail(colPlanClean, "not planned as an import: "+strings.Join(rc.Change.Actions, ","))
		case slices.Equal(rc.Change.Actions, []string{"no-op"}):
			c.pass(colPlanClean)
		default:
			var before, after, unknown any
			_ = json.Unmarshal(rc.Change.Before, &before)
			_ = json.Unmarshal(rc.Change.After, &after)
			_ = json.Unmarshal(rc.Change.Unknown, &unknown)
			var paths []string
			adoptJSONDiff("", before, after, unknown, 2, &paths)
			action := strings.Join(rc.Change.Actions, "+")
			if action == "delete+create" || action == "create+delete" {
				action = "replace"
			}
			if len(paths) == 0 {
				paths = []string{"only attributes known after apply"}
			}
			c.fail(colPlanClean, action+": "+summarize(paths))
		}
	}
	for _, c := range set {
		if !seen[c.res] {
			c.fail(colPlanClean, "not in the plan")
		}
	}
}
