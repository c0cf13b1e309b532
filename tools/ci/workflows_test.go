// Package ci holds checks on the GitHub workflows in .github/workflows. They cannot run on
// this machine, so these tests keep them parseable and in step with the GNUmakefile they
// call: a renamed make target or variable fails here, not on the first push.
package ci

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The keys of GitHub's workflow syntax that we use; decoding with KnownFields turns any
// other (misspelt) key into an error.
type workflow struct {
	Name        string            `yaml:"name"`
	On          yaml.Node         `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency yaml.Node         `yaml:"concurrency"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]job    `yaml:"jobs"`
}

type job struct {
	Name           string            `yaml:"name"`
	RunsOn         string            `yaml:"runs-on"`
	Needs          yaml.Node         `yaml:"needs"`
	If             string            `yaml:"if"`
	TimeoutMinutes int               `yaml:"timeout-minutes"`
	Container      yaml.Node         `yaml:"container"`
	Strategy       yaml.Node         `yaml:"strategy"`
	Env            map[string]string `yaml:"env"`
	Permissions    map[string]string `yaml:"permissions"`
	Steps          []step            `yaml:"steps"`
}

type step struct {
	Name            string            `yaml:"name"`
	ID              string            `yaml:"id"`
	If              string            `yaml:"if"`
	Uses            string            `yaml:"uses"`
	Run             string            `yaml:"run"`
	With            map[string]string `yaml:"with"`
	Env             map[string]string `yaml:"env"`
	TimeoutMinutes  int               `yaml:"timeout-minutes"`
	ContinueOnError bool              `yaml:"continue-on-error"`
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found from tools/ci: %v", err)
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func loadWorkflows(t *testing.T) map[string]workflow {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root(t), ".github", "workflows", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]workflow{}
	for _, f := range files {
		var w workflow
		dec := yaml.NewDecoder(strings.NewReader(readFile(t, f)))
		dec.KnownFields(true) // a misspelt key is an error, not silently ignored
		if err := dec.Decode(&w); err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		all[filepath.Base(f)] = w
	}
	for _, want := range []string{"test.yml", "acceptance.yml", "release.yml"} {
		if _, ok := all[want]; !ok {
			t.Errorf(".github/workflows/%s is missing", want)
		}
	}
	return all
}

// makeTargets returns the targets the GNUmakefile defines (rules at the start of a line).
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	targets := map[string]bool{}
	rule := regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:([^=]|$)`)
	for _, line := range strings.Split(readFile(t, filepath.Join(root(t), "GNUmakefile")), "\n") {
		if m := rule.FindStringSubmatch(line); m != nil {
			targets[m[1]] = true
		}
	}
	return targets
}

// makeCalls returns the targets of every `make ...` in a run block (VAR=value and flags skipped).
func makeCalls(run string) [][]string {
	var calls [][]string
	re := regexp.MustCompile(`(?m)(?:^|[;&|]\s*)make\s+([^;&|\n]*)`)
	assign := regexp.MustCompile(`\w+=("[^"]*"|'[^']*'|\S*)`)
	for _, m := range re.FindAllStringSubmatch(run, -1) {
		var targets []string
		for _, w := range strings.Fields(assign.ReplaceAllString(m[1], "")) {
			if strings.HasPrefix(w, "-") {
				continue
			}
			targets = append(targets, w)
		}
		calls = append(calls, targets)
	}
	return calls
}

func TestWorkflowsParseAndPinActions(t *testing.T) {
	pinned := regexp.MustCompile(`^[\w.-]+/[\w.-]+@v\d+$`)
	for file, w := range loadWorkflows(t) {
		if w.Name == "" || w.On.Kind == 0 || len(w.Jobs) == 0 {
			t.Errorf("%s: needs name, on and jobs", file)
		}
		for name, j := range w.Jobs {
			if j.RunsOn == "" || len(j.Steps) == 0 {
				t.Errorf("%s: job %s needs runs-on and steps", file, name)
			}
			for i, s := range j.Steps {
				if (s.Uses == "") == (s.Run == "") {
					t.Errorf("%s: job %s step %d: exactly one of uses and run", file, name, i)
				}
				if s.Uses != "" && !pinned.MatchString(s.Uses) {
					t.Errorf("%s: job %s: %q is not pinned to a major tag (owner/repo@vN)", file, name, s.Uses)
				}
				if strings.HasPrefix(s.Uses, "actions/setup-go@") && s.With["go-version-file"] != "go.mod" {
					t.Errorf("%s: job %s: setup-go must take the Go version from go.mod", file, name)
				}
			}
		}
	}
}

func TestWorkflowsCallExistingMakeTargets(t *testing.T) {
	targets := makeTargets(t)
	for file, w := range loadWorkflows(t) {
		for name, j := range w.Jobs {
			for _, s := range j.Steps {
				for _, call := range makeCalls(s.Run) {
					for _, target := range call {
						if !targets[target] {
							t.Errorf("%s: job %s runs make %s, which the GNUmakefile does not define", file, name, target)
						}
					}
				}
			}
		}
	}
}

// The acceptance workflow must run what .ci/run runs (make check: testhost-up, image,
// testacc-terraform, testacc-opentofu), passing the downloaded CLIs through TERRAFORM/TOFU.
func TestAcceptanceUsesTheCIScripts(t *testing.T) {
	mk := readFile(t, filepath.Join(root(t), "GNUmakefile"))
	check := regexp.MustCompile(`(?m)^check:([^=]*)$`).FindStringSubmatch(mk) // not `check: export X := y`
	if check == nil {
		t.Fatal("GNUmakefile has no check target")
	}
	for _, dep := range []string{"testhost-up", "image"} {
		if !slices.Contains(strings.Fields(check[1]), dep) {
			t.Errorf("make check no longer depends on %s; update acceptance.yml to match", dep)
		}
	}
	if strings.Contains(mk, "check: export KVMFORGE_HOSTS := 2") &&
		!strings.Contains(readFile(t, filepath.Join(root(t), ".github", "workflows", "acceptance.yml")), "KVMFORGE_HOSTS=2 make testhost-up") {
		t.Error("make check brings up both test hosts (KVMFORGE_HOSTS=2) but acceptance.yml does not")
	}
	if !strings.Contains(mk, "$(MAKE) testacc") {
		t.Error("make check no longer runs testacc; update acceptance.yml to match")
	}
	if !strings.Contains(mk, "$(or $(TOFU),") || !regexp.MustCompile(`(?m)^TERRAFORM\s*\?=`).MatchString(mk) {
		t.Error("GNUmakefile no longer takes TERRAFORM / TOFU from the caller; acceptance.yml passes them")
	}

	var runs []string
	for _, j := range loadWorkflows(t)["acceptance.yml"].Jobs {
		for _, s := range j.Steps {
			runs = append(runs, s.Run)
		}
	}
	all := strings.Join(runs, "\n")
	for _, want := range []string{
		"make testhost-up image",
		`make testacc-terraform TERRAFORM="$(command -v terraform)"`,
		`make testacc-opentofu TOFU="$(command -v tofu)"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("acceptance.yml does not run %q", want)
		}
	}
}

// test.yml reads the pinned golangci-lint version out of the GNUmakefile with sed for its
// cache key; the line must keep the shape that sed expects.
func TestLintVersionIsReadable(t *testing.T) {
	mk := readFile(t, filepath.Join(root(t), "GNUmakefile"))
	m := regexp.MustCompile(`(?m)^GOLANGCI_LINT_VERSION *:= *(v\d+\.\d+\.\d+)$`).FindStringSubmatch(mk)
	if m == nil {
		t.Fatal("GNUmakefile: no line `GOLANGCI_LINT_VERSION := vX.Y.Z` (test.yml's cache key reads it with sed)")
	}
	if !strings.Contains(readFile(t, filepath.Join(root(t), ".github", "workflows", "test.yml")), `s/^GOLANGCI_LINT_VERSION *:= *//p`) {
		t.Error("test.yml no longer reads GOLANGCI_LINT_VERSION from the GNUmakefile")
	}
}

func TestReleaseSignsWithTheImportedKey(t *testing.T) {
	var gpgID string
	var release *step
	for _, j := range loadWorkflows(t)["release.yml"].Jobs {
		for i, s := range j.Steps {
			switch {
			case strings.HasPrefix(s.Uses, "crazy-max/ghaction-import-gpg@"):
				gpgID = s.ID
			case strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@"):
				release = &j.Steps[i]
			}
		}
	}
	if gpgID == "" || release == nil {
		t.Fatal("release.yml needs a GPG import step with an id and a goreleaser step")
	}
	if release.With["args"] != "release --clean" {
		t.Errorf("goreleaser args = %q, want release --clean", release.With["args"])
	}
	if want := "${{ steps." + gpgID + ".outputs.fingerprint }}"; release.Env["GPG_FINGERPRINT"] != want {
		t.Errorf("GPG_FINGERPRINT = %q, want %q (.goreleaser.yml signs with it)", release.Env["GPG_FINGERPRINT"], want)
	}
	if !strings.Contains(readFile(t, filepath.Join(root(t), ".goreleaser.yml")), "{{ .Env.GPG_FINGERPRINT }}") {
		t.Error(".goreleaser.yml no longer signs with GPG_FINGERPRINT")
	}
}
