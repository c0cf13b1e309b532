package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// TestAccPoolInactive_keepsState stops a pool under a volume, a cloud-init seed and an
// Ignition config, the way a host reboot without pool autostart (or an NFS share that did
// not mount) does. libvirt looks volumes up in running pools only, so a lookup by key
// answers "no such volume": that must never remove them from state, nor let destroy
// report success while the files stay. The real CLI runs the configuration, so that the
// state file itself is inspected after every failure.
func TestAccPoolInactive_keepsState(t *testing.T) {
	acctest.RequireAcc(t)
	pool := acctest.RandomName("stopped")
	dir := testPoolDir(pool)
	config := acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_pool" "p" {
  name        = %[1]q
  type        = "dir"
  target_path = %[2]q
}

resource "libvirt_volume" "v" {
  name           = "%[1]s-disk.qcow2"
  pool           = libvirt_pool.p.name
  capacity_bytes = 1048576
}

resource "libvirt_cloudinit_iso" "seed" {
  name        = "%[1]s-seed.iso"
  pool        = libvirt_pool.p.name
  user_data   = "#cloud-config\n"
  instance_id = "i-1"
  hostname    = "h1"
}

resource "libvirt_ignition" "ign" {
  name    = "%[1]s.ign"
  pool    = libvirt_pool.p.name
  content = jsonencode({ ignition = { version = "3.4.0" } })
}
`, pool, dir)
	w := newCLIWork(t, config)
	virsh := func(args ...string) {
		t.Helper()
		out, err := exec.Command("virsh", append([]string{"-c", acctest.URI()}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("virsh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		// Whatever happened: the pool running, everything destroyed, the pool gone. (What
		// a failed run leaves — volumes the state lost — goes with the pool's directory,
		// which is the test's own.)
		_ = exec.Command("virsh", "-c", acctest.URI(), "pool-start", pool).Run()
		if out, code := w.run("destroy", "-auto-approve", "-input=false"); code != 0 {
			t.Errorf("cleanup: destroy (exit %d):\n%s", code, out)
		}
		gone := acctest.CheckGone(map[string]acctest.Lookup{"pool " + pool: acctest.PoolLookup(pool)})
		if err := gone(nil); err != nil {
			t.Errorf("cleanup: %v", err)
			_ = exec.Command("virsh", "-c", acctest.URI(), "pool-destroy", pool).Run()
			_ = exec.Command("virsh", "-c", acctest.URI(), "pool-undefine", pool).Run()
		}
		_ = os.RemoveAll(dir)
	})

	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 {
		t.Fatalf("apply (exit %d):\n%s", code, out)
	}
	before := w.stateIDs()
	if len(before) != 4 {
		t.Fatalf("state after apply holds %v, want the pool, the volume, the seed and the ignition config", before)
	}
	stateFile := w.path("terraform.tfstate")
	beforeBytes := stateWithoutSerial(t, readFile(t, stateFile))
	files := []string{before["libvirt_volume.v"], before["libvirt_cloudinit_iso.seed"], before["libvirt_ignition.ign"]}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("volume file %s: %v", f, err)
		}
	}

	virsh("pool-destroy", pool)
	untouched := func(step string) {
		t.Helper()
		if got := w.stateIDs(); !sameIDs(got, before) {
			t.Fatalf("%s changed the state: %v, want %v", step, got, before)
		}
		// Terraform may write the file again with a new serial after a failed destroy
		// (seen with 1.11 once a resource has write-only attributes): the contents are what
		// must not change.
		if after := stateWithoutSerial(t, readFile(t, stateFile)); !bytes.Equal(after, beforeBytes) {
			t.Fatalf("%s changed the state file:\n--- before\n%s\n--- after\n%s", step, beforeBytes, after)
		}
		for _, f := range files {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("%s: volume file %s: %v", step, f, err)
			}
		}
	}
	// The message names the pool and what to do, for each of the three resources.
	namesPool := regexp.MustCompile(`storage pool "` + regexp.QuoteMeta(pool) + `" is not running`)
	saysStart := regexp.MustCompile(`virsh\s+pool-start\s+` + regexp.QuoteMeta(pool))
	wantFailure := func(step, out string, code int, resources ...string) {
		t.Helper()
		flat := flatten(out)
		if code == 0 || !namesPool.MatchString(flat) || !saysStart.MatchString(flat) {
			t.Fatalf("%s with the pool stopped: want a failure naming pool %s and `virsh pool-start %s` (exit %d):\n%s", step, pool, pool, code, out)
		}
		for _, r := range resources {
			if !strings.Contains(flat, r) {
				t.Errorf("%s: no error for %s:\n%s", step, r, out)
			}
		}
		if strings.Contains(flat, "Unable to read storage pool") {
			t.Errorf("%s: the libvirt_pool of a stopped pool must read fine:\n%s", step, out)
		}
	}

	// 1. A refresh fails, naming the pool; nothing leaves the state.
	out, code := w.run("apply", "-refresh-only", "-auto-approve", "-input=false")
	t.Logf("apply -refresh-only with the pool stopped (exit %d):\n%s", code, out)
	untouched("apply -refresh-only")
	wantFailure("apply -refresh-only", out, code, "Unable to read volume "+pool+"/", "Unable to read cloud-init seed "+pool+"/", "Unable to read ignition config "+pool+"/")

	// 2. Destroy fails clearly and removes nothing: first at its refresh, then, with
	// -refresh=false, at the deletes themselves.
	out, code = w.run("destroy", "-auto-approve", "-input=false")
	untouched("destroy")
	wantFailure("destroy", out, code)
	out, code = w.run("destroy", "-auto-approve", "-input=false", "-refresh=false")
	t.Logf("destroy -refresh=false with the pool stopped (exit %d):\n%s", code, out)
	untouched("destroy -refresh=false")
	wantFailure("destroy -refresh=false", out, code, "Unable to delete volume "+pool+"/", "Unable to delete cloud-init seed "+pool+"/", "Unable to delete ignition config "+pool+"/")
	if !strings.Contains(flatten(out), "Nothing was deleted, and the resource stays in state") {
		t.Errorf("destroy -refresh=false does not say that nothing was deleted:\n%s", out)
	}

	// 3. The libvirt_pool itself reads fine and says it is stopped (a plan refreshes only).
	out, code = w.run("plan", "-input=false", "-target=libvirt_pool.p", "-refresh-only", "-detailed-exitcode")
	t.Logf("refresh of libvirt_pool alone (exit %d):\n%s", code, out)
	if code == 1 || !strings.Contains(out, "is not running") {
		t.Errorf("refresh of the stopped libvirt_pool alone (exit %d): want it read, with a warning that it is not running:\n%s", code, out)
	}

	// 4. Once the pool runs again, nothing is to be done.
	virsh("pool-start", pool)
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after pool-start is not empty (exit %d):\n%s", code, out)
	}
	if got := w.stateIDs(); !sameIDs(got, before) {
		t.Fatalf("state after pool-start: %v, want %v", got, before)
	}
}

// flatten undoes the CLI's wrapping of diagnostics (lines framed by "│", broken at spaces).
func flatten(out string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(out, "│", " ")), " ")
}

func sameIDs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if a[k] != b[k] || a[k] == "" {
			return false
		}
	}
	return true
}

// stateWithoutSerial is a state file's JSON without its serial, re-encoded.
func stateWithoutSerial(t *testing.T, b []byte) []byte {
	t.Helper()
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("state file: %v", err)
	}
	delete(st, "serial")
	// Terraform writes an instance's sensitive_attributes in no fixed order (seen with
	// 1.11 rewriting the file after a failed destroy): the set is what must not change.
	resources, _ := st["resources"].([]any)
	for _, r := range resources {
		instances, _ := r.(map[string]any)["instances"].([]any)
		for _, i := range instances {
			if paths, ok := i.(map[string]any)["sensitive_attributes"].([]any); ok {
				sort.Slice(paths, func(a, b int) bool { return jsonText(t, paths[a]) < jsonText(t, paths[b]) })
			}
		}
	}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
