package provider_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// The examples users copy are applied here as they are (their directory, unchanged),
// against the test host, with variables pointing them at it and at the tiny guest
// image. examples/quickstart is applied by `make quickstart`; examples/modules/cluster by
// TestAccClusterMachine_module.

// exampleDir is the absolute path of examples/<name>.
func exampleDir(t *testing.T, name string) config.TestStepConfigFunc {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "main.tf")); err != nil {
		t.Fatalf("example %s: %v", name, err)
	}
	return config.StaticDirectory(dir)
}

// imageURL is the tiny guest image as a file:// URL, the way users give source_url.
func imageURL(t *testing.T) config.Variable {
	return config.StringVariable("file://" + acctest.GuestImage(t))
}

// examples/multi-host on the two test hosts (hv1 = the test host, hv2 = host b) through
// one provider's `hosts`: a machine on each host boots from its host's own base volume and
// takes a lease there (asked of each libvirt: on its host, not on the other); the next plan
// is empty; moving web-2 to hv1 (a change of its `host`) makes its domain, overlay and seed
// on hv1 and removes them from hv2, and plans clean after; destroy leaves nothing on
// either host. The example keys machines by name (for_each over a map), which
// plugin-testing's legacy state cannot hold, so the real CLI drives it, as users do.
func TestAccExample_multiHost(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.RequireHostB(t)
	if acctest.Pool() != acctest.PoolB() || acctest.Network() != acctest.NetworkB() {
		t.Fatalf("the example wants one pool and one network name on every host: pools %s / %s, networks %s / %s",
			acctest.Pool(), acctest.PoolB(), acctest.Network(), acctest.NetworkB())
	}
	prefix := acctest.RandomName("mh")
	pool := acctest.Pool()
	web1, web2, base := prefix+"-web-1", prefix+"-web-2", prefix+"-base.qcow2"
	main, err := os.ReadFile(filepath.Join("..", "..", "examples", "multi-host", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	vars := func(machines map[string]string) string {
		m := map[string]any{}
		for name, host := range machines {
			m[name] = map[string]any{"host": host, "memory_mib": 256}
		}
		b, _ := json.Marshal(map[string]any{
			"hosts": map[string]any{
				"hv1": map[string]string{"uri": acctest.URI(), "peer_uri": acctest.URIAForB()},
				"hv2": map[string]string{"uri": acctest.URIB()},
			},
			"pool":        pool,
			"machines":    m,
			"base_volume": base,
			"image_url":   "file://" + acctest.GuestImage(t),
			"network":     acctest.Network(),
			"disk_gib":    1,
		})
		return string(b)
	}
	a, b := acctest.Client(t), acctest.ClientB(t)
	objects := func(name string) map[string]acctest.Lookup {
		return map[string]acctest.Lookup{
			"domain " + name:           acctest.DomainLookup(name),
			"volume " + name + "-root": acctest.VolumeLookup(pool, name+"-root.qcow2"),
			"volume " + name + "-seed": acctest.VolumeLookup(pool, name+"-seed.iso"),
		}
	}
	everything := func() map[string]acctest.Lookup {
		all := map[string]acctest.Lookup{"base volume": acctest.VolumeLookup(pool, base)}
		maps.Copy(all, objects(web1))
		maps.Copy(all, objects(web2))
		return all
	}
	w := newCLIWork(t, string(main))
	setVars := func(machines map[string]string) { w.write("terraform.tfvars.json", vars(machines)) }
	setVars(map[string]string{web1: "hv1", web2: "hv2"})
	t.Cleanup(func() {
		if out, code := w.run("destroy", "-auto-approve", "-input=false"); code != 0 {
			t.Errorf("destroy (exit %d):\n%s", code, out)
		}
		if err := acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{acctest.URI(): everything(), acctest.URIB(): everything()})(nil); err != nil {
			t.Errorf("after destroy: %v", err)
		}
	})
	apply := func(what string) {
		t.Helper()
		if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 {
			t.Fatalf("apply %s (exit %d):\n%s", what, code, out)
		}
		if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
			t.Fatalf("the plan after apply %s is not empty (exit %d):\n%s", what, code, out)
		}
	}
	machines := func() map[string]struct{ Host, UUID, IP string } {
		t.Helper()
		out, code := w.run("output", "-json", "machines")
		var m map[string]struct{ Host, UUID, IP string }
		if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil {
			t.Fatalf("output machines (exit %d, %v):\n%s", code, err, out)
		}
		return m
	}
	// on checks that name's domain, overlay and seed are on the host c talks to and that
	// its domain and overlay are not on the other (both pools are at the same path, so
	// an object's absence is asked of the other host's libvirt).
	on := func(name string, c, other *libvirt.Client) {
		t.Helper()
		for what, lookup := range objects(name) {
			if err := c.Read(acctest.Ctx(t), "look up "+what, lookup); err != nil {
				t.Errorf("%s is not on %s: %v", what, c.URI(), err)
			}
		}
		if err := acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{other.URI().String(): objects(name)})(nil); err != nil {
			t.Errorf("%s left on the other host: %v", name, err)
		}
	}

	apply("of two machines on two hosts")
	m := machines()
	if len(m) != 2 || m[web1].Host != "hv1" || m[web2].Host != "hv2" {
		t.Fatalf("machines output: %+v", m)
	}
	for name, x := range m {
		if !ipv4.MatchString(x.IP) {
			t.Errorf("machine %s has no IPv4 address: %+v", name, x)
		}
	}
	on(web1, a, b)
	on(web2, b, a)
	for what, c := range map[string]*libvirt.Client{"on hv1": a, "on hv2": b} {
		if err := c.Read(acctest.Ctx(t), "look up the base volume", acctest.VolumeLookup(pool, base)); err != nil {
			t.Errorf("base volume %s: %v", what, err)
		}
	}

	// web-2 moves to hv1: made again there, removed from hv2; hv2's base volume stays.
	setVars(map[string]string{web1: "hv1", web2: "hv1"})
	apply("with web-2 moved to hv1")
	if m := machines(); m[web2].Host != "hv1" || !ipv4.MatchString(m[web2].IP) {
		t.Errorf("web-2 after the move: %+v", m[web2])
	}
	on(web2, a, b)
	if err := b.Read(acctest.Ctx(t), "look up the base volume", acctest.VolumeLookup(pool, base)); err != nil {
		t.Errorf("hv2's base volume after the move: %v", err)
	}
}

// examples/uefi: the host precondition passes (the test host has OVMF), the domain is
// defined with firmware auto-selection and runs with an nvram varstore of its own, which
// is gone after destroy. (The tiny guest boots only from BIOS; OVMF runs, which is what
// this checks.)
func TestAccExample_uefi(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("uefi")
	var nvram string
	acctest.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGone(map[string]acctest.Lookup{
				"domain " + name:           acctest.DomainLookup(name),
				"volume " + name + "-root": acctest.VolumeLookup(acctest.Pool(), name+"-root.qcow2"),
				"volume " + name + "-base": acctest.VolumeLookup(acctest.Pool(), name+"-base.qcow2"),
				"volume " + name + "-seed": acctest.VolumeLookup(acctest.Pool(), name+"-seed.iso"),
			}),
			func(*terraform.State) error {
				if nvram == "" {
					return fmt.Errorf("no nvram path was recorded")
				}
				if _, err := os.Stat(nvram); !os.IsNotExist(err) {
					return fmt.Errorf("nvram %s is still there after destroy (stat: %v)", nvram, err)
				}
				return nil
			},
		),
		Steps: []resource.TestStep{{
			ConfigDirectory: exampleDir(t, "uefi"),
			ConfigVariables: config.Variables{
				"uri":       config.StringVariable(acctest.URI()),
				"name":      config.StringVariable(name),
				"image_url": imageURL(t),
				"pool":      config.StringVariable(acctest.Pool()),
				"network":   config.StringVariable(acctest.Network()),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("libvirt_domain.vm", "firmware", "uefi"),
				func(*terraform.State) error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if live.Live.OS == nil || live.Live.OS.NVRam == nil || live.Live.OS.NVRam.NVRam == "" {
						return fmt.Errorf("domain %s has no nvram in its live XML", name)
					}
					nvram = live.Live.OS.NVRam.NVRam
					if _, err := os.Stat(nvram); err != nil {
						return fmt.Errorf("nvram of %s: %v", name, err)
					}
					return nil
				},
			),
			ConfigStateChecks: append(acctest.State("libvirt_domain.vm", "state", "running"),
				acctest.OutputIs("firmware_offered", map[int]any{0: regexp.MustCompile(`(?i)ovmf|edk2`)})),
			ConfigPlanChecks: acctest.Plans(),
		}},
	})
}

// examples/snapshot-before-upgrade: release 1.0 boots the machine and snapshots it;
// release 1.1 replaces the snapshot by before-1.1 and then runs the upgrade command with
// the machine's IP and the release; rollback = true reverts to before-1.1 and the
// machine is running again.
func TestAccExample_snapshotBeforeUpgrade(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("upg")
	network := acctest.CreateNetwork(t, true)
	marks := t.TempDir()
	vars := func(release string, rollback bool) config.Variables {
		return config.Variables{
			"uri":             config.StringVariable(acctest.URI()),
			"name":            config.StringVariable(name),
			"image_url":       imageURL(t),
			"pool":            config.StringVariable(acctest.Pool()),
			"network":         config.StringVariable(network.Name),
			"memory_mib":      config.IntegerVariable(128),
			"release":         config.StringVariable(release),
			"upgrade_command": config.StringVariable(`echo "$IP" > ` + marks + `/upgraded-to-$RELEASE`),
			"rollback":        config.BoolVariable(rollback),
		}
	}
	upgraded := func(release string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			b, err := os.ReadFile(filepath.Join(marks, "upgraded-to-"+release))
			if err != nil {
				return fmt.Errorf("the upgrade command did not run for %s: %v", release, err)
			}
			ip := s.RootModule().Outputs["ip_address"].Value.(string)
			if got := strings.TrimSpace(string(b)); got != ip || ip == "" {
				return fmt.Errorf("upgrade command got IP %q, the machine has %q", got, ip)
			}
			return nil
		}
	}
	snapshot := func(release string) string { return "before-" + release }
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name:           acctest.DomainLookup(name),
			"volume " + name + "-root": acctest.VolumeLookup(acctest.Pool(), name+"-root.qcow2"),
			"volume " + name + "-base": acctest.VolumeLookup(acctest.Pool(), name+"-base.qcow2"),
			"volume " + name + "-seed": acctest.VolumeLookup(acctest.Pool(), name+"-seed.iso"),
		}),
		Steps: []resource.TestStep{
			{
				ConfigDirectory: exampleDir(t, "snapshot-before-upgrade"),
				ConfigVariables: vars("1.0", false),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchOutput("ip_address", ipv4),
					checkExists(t, "snapshot "+snapshot("1.0"), snapLookup(name, snapshot("1.0"))),
					upgraded("1.0"),
				),
				ConfigPlanChecks: acctest.Plans(),
			},
			{
				// The upgrade: before-1.1 replaces before-1.0, then the command runs.
				ConfigDirectory: exampleDir(t, "snapshot-before-upgrade"),
				ConfigVariables: vars("1.1", false),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkExists(t, "snapshot "+snapshot("1.1"), snapLookup(name, snapshot("1.1"))),
					acctest.CheckGone(map[string]acctest.Lookup{"snapshot " + snapshot("1.0"): snapLookup(name, snapshot("1.0"))}),
					upgraded("1.1"),
				),
				ConfigPlanChecks: acctest.Plans(),
			},
			{
				// The rollback: back to before-1.1, running.
				ConfigDirectory:   exampleDir(t, "snapshot-before-upgrade"),
				ConfigVariables:   vars("1.1", true),
				ConfigPlanChecks:  acctest.Does("libvirt_snapshot_revert.rollback[0]", acctest.Create),
				ConfigStateChecks: acctest.State("libvirt_domain.app", "state", "running"),
			},
		},
	})
}

// checkExists asks libvirt that an object is there.
func checkExists(t *testing.T, what string, lookup acctest.Lookup) resource.TestCheckFunc {
	return func(*terraform.State) error {
		err := acctest.Client(t).Read(acctest.Ctx(t), "look up "+what, lookup)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}
