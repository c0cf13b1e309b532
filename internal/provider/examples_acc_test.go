package provider_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
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

// examples/multi-host with its two provider aliases pointed at the one test host through
// two transports (the unix socket and TCP) and two pools: a machine on each "host" boots
// from its host's own base volume and takes a lease of its own; the next plan is empty;
// removing a machine from var.machines removes only that machine's objects; destroy
// leaves nothing. The example keys machines by name (for_each over a map), which
// plugin-testing's legacy state cannot hold, so the real CLI drives it, as users do.
func TestAccExample_multiHost(t *testing.T) {
	acctest.RequireAcc(t)
	prefix := acctest.RandomName("mh")
	poolA, poolB := acctest.Pool(), acctest.DefineDirPool(t, true)
	network := acctest.CreateNetwork(t, true)
	web1, web2, base := prefix+"-web-1", prefix+"-web-2", prefix+"-base.qcow2"
	main, err := os.ReadFile(filepath.Join("..", "..", "examples", "multi-host", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	vars := func(machines ...string) string {
		m := map[string]any{}
		for i, name := range machines {
			m[name] = map[string]any{"host": fmt.Sprintf("hv%d", i+1), "memory_mib": 256}
		}
		b, _ := json.Marshal(map[string]any{
			"hosts":       map[string]string{"hv1": acctest.URI(), "hv2": acctest.Env("LIBVIRT_TEST_TCP_URI", "qemu+tcp://127.0.0.1/system")},
			"pools":       map[string]string{"hv1": poolA, "hv2": poolB},
			"machines":    m,
			"base_volume": base,
			"image_url":   "file://" + acctest.GuestImage(t),
			"network":     network.Name,
			"disk_gib":    1,
		})
		return string(b)
	}
	w := newCLIWork(t, string(main))
	setVars := func(machines ...string) { w.write("terraform.tfvars.json", vars(machines...)) }
	setVars(web1, web2)
	all := map[string]acctest.Lookup{
		"domain " + web1:           acctest.DomainLookup(web1),
		"domain " + web2:           acctest.DomainLookup(web2),
		"volume " + web1 + "-root": acctest.VolumeLookup(poolA, web1+"-root.qcow2"),
		"volume " + web2 + "-root": acctest.VolumeLookup(poolB, web2+"-root.qcow2"),
		"volume " + web1 + "-seed": acctest.VolumeLookup(poolA, web1+"-seed.iso"),
		"volume " + web2 + "-seed": acctest.VolumeLookup(poolB, web2+"-seed.iso"),
		"base volume in " + poolA:  acctest.VolumeLookup(poolA, base),
		"base volume in " + poolB:  acctest.VolumeLookup(poolB, base),
	}
	t.Cleanup(func() {
		if out, code := w.run("destroy", "-auto-approve", "-input=false"); code != 0 {
			t.Errorf("destroy (exit %d):\n%s", code, out)
		}
		if err := acctest.CheckGone(all)(nil); err != nil {
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
	if m[web1].IP == m[web2].IP {
		t.Errorf("both machines report the address %s", m[web1].IP)
	}
	for _, name := range []string{web1, web2} {
		if err := checkExists(t, "domain "+name, acctest.DomainLookup(name))(nil); err != nil {
			t.Error(err)
		}
	}

	// web-2 leaves hv2: only its domain, overlay and seed go; hv2's base volume stays.
	setVars(web1)
	apply("without web-2")
	if err := acctest.CheckGone(map[string]acctest.Lookup{
		"domain " + web2:           all["domain "+web2],
		"volume " + web2 + "-root": all["volume "+web2+"-root"],
		"volume " + web2 + "-seed": all["volume "+web2+"-seed"],
	})(nil); err != nil {
		t.Error(err)
	}
	for _, what := range []string{"domain " + web1, "volume " + web1 + "-root", "base volume in " + poolB} {
		if err := checkExists(t, what, all[what])(nil); err != nil {
			t.Error(err)
		}
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
