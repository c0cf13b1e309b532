package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// cliWork is a working directory in which the real CLI (TF_ACC_TERRAFORM_PATH, else
// terraform on PATH) runs the real provider binary, installed through dev_overrides the
// way a user runs a configuration: for what plugin-testing cannot drive (many instances
// at once, for_each instances with string keys, -generate-config-out, TF_LOG captures).
type cliWork struct {
	t   *testing.T
	dir string
	cli string
	env []string
}

// newCLIWork is a working directory with mainTF as its main.tf; env is added to the CLI's
// environment.
func newCLIWork(t *testing.T, mainTF string, env ...string) *cliWork {
	t.Helper()
	cli := acctest.Env("TF_ACC_TERRAFORM_PATH", "")
	if cli == "" {
		var err error
		if cli, err = exec.LookPath("terraform"); err != nil {
			t.Fatal("no terraform: set TF_ACC_TERRAFORM_PATH")
		}
	}
	w := &cliWork{t: t, dir: t.TempDir(), cli: cli}
	w.write("main.tf", mainTF)
	w.write("dev.tfrc", fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"kvmforge/libvirt\" = %q\n  }\n  direct {}\n}\n", filepath.Dir(providerBinary(t))))
	w.env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+w.path("dev.tfrc"), "CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1", "TF_REATTACH_PROVIDERS=", "NO_COLOR=1")
	w.env = append(w.env, env...)
	return w
}

// path is the path of the file name in the working directory.
func (w *cliWork) path(name string) string { return filepath.Join(w.dir, name) }

// write writes the file name into the working directory.
func (w *cliWork) write(name, content string) { writeTestFile(w.t, w.path(name), content) }

// run runs the CLI and returns its combined output and exit code. A CLI that does not
// finish within the limit is a hang: killed, and the test fails.
func (w *cliWork) run(args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.cli, append(args, "-no-color")...)
	cmd.Dir, cmd.Env = w.dir, w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		w.t.Fatalf("%s %s hung (killed after 10 minutes):\n%s", filepath.Base(w.cli), strings.Join(args, " "), out.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s: %v", w.cli, err)
	}
	return out.String(), 0
}

// mustRun runs the CLI and fails the test on a non-zero exit.
func (w *cliWork) mustRun(args ...string) string {
	w.t.Helper()
	out, code := w.run(args...)
	if code != 0 {
		w.t.Fatalf("%s %s (exit %d):\n%s", filepath.Base(w.cli), strings.Join(args, " "), code, out)
	}
	return out
}

// stateResource is a resource in the CLI's state, as `show -json` prints it.
type stateResource struct {
	Address string         `json:"address"`
	Type    string         `json:"type"`
	Mode    string         `json:"mode"`
	Values  map[string]any `json:"values"`
}

// state reads the resources of the root module from `show -json`.
func (w *cliWork) state() []stateResource {
	w.t.Helper()
	out := w.mustRun("show", "-json")
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []stateResource `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):strings.LastIndex(out, "}")+1]), &doc); err != nil {
		w.t.Fatalf("show -json: %v\n%s", err, out)
	}
	return doc.Values.RootModule.Resources
}

// stateIDs maps every resource address in the state to its id.
func (w *cliWork) stateIDs() map[string]string {
	ids := map[string]string{}
	for _, r := range w.state() {
		id, _ := r.Values["id"].(string)
		ids[r.Address] = id
	}
	return ids
}

// stateObjects returns the names of the domains and of the volumes (libvirt_volume and
// libvirt_cloudinit_iso) that the state tracks, sorted, duplicates kept.
func (w *cliWork) stateObjects() (domains, volumes []string) {
	for _, r := range w.state() {
		if r.Mode != "managed" {
			continue
		}
		name, _ := r.Values["name"].(string)
		switch r.Type {
		case "libvirt_domain":
			domains = append(domains, name)
		case "libvirt_volume", "libvirt_cloudinit_iso":
			volumes = append(volumes, name)
		}
	}
	sort.Strings(domains)
	sort.Strings(volumes)
	return domains, volumes
}

// checkHostMatchesState: every object of the test on the host is in state once, and every
// object in state is on the host. want (when not nil) is what the config asks for.
func (w *cliWork) checkHostMatchesState(prefix string, wantDomains, wantVolumes []string) {
	w.t.Helper()
	hostD, hostV := acctest.HostObjects(w.t, prefix)
	stateD, stateV := w.stateObjects()
	for _, c := range []struct {
		kind              string
		host, state, want []string
	}{{"domain", hostD, stateD, wantDomains}, {"volume", hostV, stateV, wantVolumes}} {
		if d := duplicates(c.state); len(d) > 0 {
			w.t.Errorf("%ss in state twice: %v", c.kind, d)
		}
		if d := missing(c.host, c.state); len(d) > 0 {
			w.t.Errorf("orphans: %ss on the host that no state tracks: %v", c.kind, d)
		}
		if d := missing(c.state, c.host); len(d) > 0 {
			w.t.Errorf("%ss in state that are not on the host: %v", c.kind, d)
		}
		if c.want != nil && !slices.Equal(slices.Compact(slices.Clone(c.state)), c.want) {
			w.t.Errorf("%ss in state %v, want what the config asks for: %v", c.kind, c.state, c.want)
		}
	}
}

func duplicates(s []string) []string {
	var d []string
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] && (len(d) == 0 || d[len(d)-1] != s[i]) {
			d = append(d, s[i])
		}
	}
	return d
}

// missing lists the elements of a that b lacks.
func missing(a, b []string) []string {
	var m []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			m = append(m, x)
		}
	}
	return m
}
