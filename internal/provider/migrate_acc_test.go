package provider_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// migratingDomain is libvirt_domain.test for the migration tests: on host (“ for the
// default host), migrate = true, the migration group's lines, and more lines.
func migratingDomain(name, host, migration string, more ...string) string {
	h := ""
	if host != "" {
		h = fmt.Sprintf("  host = %q\n", host)
	}
	return fmt.Sprintf(`
resource "libvirt_domain" "test" {
%s  name       = %q
  vcpu       = 1
  memory_mib = 256
  migrate    = true
  migration  = {
%s
  }
  graphics = { type = "none" }
%s
  network_interface {
    network = %q
  }
}
`, h, name, migration, strings.Join(more, "\n"), acctest.Network())
}

// guestUptime is the guest's /proc/uptime (seconds) through its agent, on the host c.
func guestUptime(c *libvirt.Client, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := c.LookupDomain(ctx, name)
	if err != nil {
		return 0, err
	}
	out, code, err := c.GuestExec(ctx, d, "/bin/cat", "/proc/uptime")
	if err != nil || code != 0 {
		return 0, fmt.Errorf("cat /proc/uptime in %s: exit %d, %v", name, code, err)
	}
	return strconv.ParseFloat(strings.Fields(out)[0], 64)
}

// runningOnlyOn checks that domain name runs on the host c talks to and is not defined on
// other, that its uuid is still uuid, and that the guest's uptime went on counting from
// *uptime (which it then advances).
func runningOnlyOn(name string, c, other *libvirt.Client, uuid *string, uptime *float64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if err := onlyOn(name, c, other)(nil); err != nil {
			return err
		}
		st, err := c.GetDomainStatus(context.Background(), name)
		if err != nil {
			return err
		}
		if got := libvirt.UUIDString(st.Domain); st.State != "running" || (*uuid != "" && got != *uuid) {
			return fmt.Errorf("domain %s on %s: %s, uuid %s (want running, uuid %s)", name, c.URI(), st.State, got, *uuid)
		}
		*uuid = libvirt.UUIDString(st.Domain)
		up, err := guestUptime(c, name)
		if err != nil {
			return err
		}
		if up <= *uptime {
			return fmt.Errorf("guest uptime %.1f s on %s, not more than the %.1f s before: the guest restarted", up, c.URI(), *uptime)
		}
		*uptime = up
		return nil
	}
}

// noVolumeAt checks that host c has no volume at path (a migration's old disk copy).
func noVolumeAt(c *libvirt.Client, path string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		err := c.Read(context.Background(), "look up "+path, acctest.VolumeKeyLookup(path))
		if !errors.Is(err, libvirt.ErrNotFound) {
			return fmt.Errorf("host %s still has a volume at %s (or cannot tell: %v)", c.URI(), path, err)
		}
		return nil
	}
}

// The tiny guest, booted on the default host, migrates live to host b with a copy of its
// disk: the plan says migrate (an update, not a replace), the guest keeps its uuid and
// MAC and its uptime goes on counting, the old host keeps neither the domain nor the disk,
// and the next plan is empty. Back towards the default host with the transfer capped at
// 1 MiB/s and a 2 s timeout that aborts: the apply fails, saying so, the guest still runs
// on b and the state says b; the same move without the cap then succeeds.
func TestAccDomainMigrate_liveCopyAbortRetry(t *testing.T) {
	acctest.RequireHostB(t)
	name, disk := acctest.DomainDisk(t, "mig")
	a, b := acctest.Client(t), acctest.ClientB(t)
	t.Cleanup(func() { _, _ = b.RemoveVolumesAt(context.Background(), []string{disk}) })
	ready := `  wait_for_ready = { timeout = "3m", command = ["/bin/true"] }` + fmt.Sprintf("\n  disk {\n    volume_id = %q\n  }", disk)
	copyAll := `    copy_storage = "all"`
	capped := copyAll + "\n    bandwidth_mib = 1\n    timeout = \"2s\"\n    on_timeout = \"abort\""
	var uuid, mac string
	var uptime float64
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI():  {"domain " + name: acctest.DomainLookup(name)},
			acctest.URIB(): {"domain " + name: acctest.DomainLookup(name)},
		}),
		Steps: []resource.TestStep{
			{
				Config: hostsProvider() + migratingDomain(name, "", copyAll, ready),
				Check: resource.ComposeTestCheckFunc(runningOnlyOn(name, a, b, &uuid, &uptime),
					func(s *terraform.State) error {
						mac = s.RootModule().Resources[domRes].Primary.Attributes["network_interface.0.mac"]
						return nil
					}),
			},
			{
				Config:           hostsProvider() + migratingDomain(name, "b", copyAll, ready),
				ConfigPlanChecks: acctest.Updates(domRes, "migrate"),
				Check: resource.ComposeTestCheckFunc(runningOnlyOn(name, b, a, &uuid, &uptime), noVolumeAt(a, disk),
					func(s *terraform.State) error {
						at := s.RootModule().Resources[domRes].Primary.Attributes
						if at["host"] != "b" || at["uuid"] != uuid || at["network_interface.0.mac"] != mac {
							return fmt.Errorf("state after the move: host %q uuid %q mac %q (want b, %s, %s)", at["host"], at["uuid"], at["network_interface.0.mac"], uuid, mac)
						}
						return nil
					}),
			},
			{
				Config:      hostsProvider() + migratingDomain(name, "", capped, ready),
				ExpectError: acctest.ErrorText(`did not finish within 2s (on_timeout = "abort")`),
			},
			{
				// The failed move left the guest running on b and the state saying b: the plan
				// moves it again, and this time it goes.
				PreConfig:        func() { runningOrFail(t, name, b, a, &uuid, &uptime) },
				Config:           hostsProvider() + migratingDomain(name, "", copyAll, ready),
				ConfigPlanChecks: acctest.Updates(domRes, "migrate"),
				Check:            resource.ComposeTestCheckFunc(runningOnlyOn(name, a, b, &uuid, &uptime), noVolumeAt(b, disk)),
			},
		},
	})
}

func runningOrFail(t *testing.T, name string, on, off *libvirt.Client, uuid *string, uptime *float64) {
	t.Helper()
	if err := runningOnlyOn(name, on, off, uuid, uptime)(nil); err != nil {
		t.Fatal(err)
	}
}

// A stopped domain moves its definition: defined on b, gone from the default host, plan
// empty after. A move to a host that cannot run the domain's CPU model is refused at plan
// time, naming the model and the host.
func TestAccDomainMigrate_stoppedAndRefused(t *testing.T) {
	acctest.RequireHostB(t)
	name := acctest.RandomName("migs")
	a, b := acctest.Client(t), acctest.ClientB(t)
	stopped := func(host, migration string, more ...string) string {
		return hostsProvider() + migratingDomain(name, host, migration, append([]string{"  running = false"}, more...)...)
	}
	// A model QEMU knows but TCG cannot provide (usable = no on both hosts): a stopped
	// domain may be defined with it.
	const model = `  cpu = { mode = "custom", model = "Skylake-Server-IBRS" }`
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI():  {"domain " + name: acctest.DomainLookup(name)},
			acctest.URIB(): {"domain " + name: acctest.DomainLookup(name)},
		}),
		Steps: []resource.TestStep{
			{Config: stopped("", "")},
			{
				Config:           stopped("b", ""),
				ConfigPlanChecks: acctest.Updates(domRes, "migrate"),
				Check:            onlyOn(name, b, a),
				ConfigStateChecks: acctest.State(domRes,
					"host", "b",
					"state", "shutoff",
				),
			},
			{Config: stopped("b", "", model)},
			{
				Config:      stopped("", "", model),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Host default cannot run libvirt_domain.*cannot run CPU model\s+Skylake-Server-IBRS`),
			},
		},
	})
}

// A quickstart-shaped machine moves whole: its base image, its overlay and the booted
// guest all change host in one apply. The plan moves the volumes (updates, never a
// destroy) and migrates the domain; the guest keeps running (its uptime counts on) on b
// with its disk copied there, the base image copied beside it, and the default host keeps
// nothing: neither the domain, nor the overlay, nor the base image. Plan empty after.
func TestAccDomainMigrate_withItsVolumes(t *testing.T) {
	acctest.RequireHostB(t)
	name := acctest.RandomName("migv")
	base, root := name+"-base.qcow2", name+"-root.qcow2"
	a, b := acctest.Client(t), acctest.ClientB(t)
	machine := func(host string) string { return movingMachine(t, name, host, true) }
	var uuid string
	var uptime float64
	var basePath, rootPath string
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI(): {"domain " + name: acctest.DomainLookup(name), "volume " + base: acctest.VolumeLookup(acctest.Pool(), base),
				"volume " + root: acctest.VolumeLookup(acctest.Pool(), root)},
			acctest.URIB(): {"domain " + name: acctest.DomainLookup(name), "volume " + base: acctest.VolumeLookup(acctest.PoolB(), base),
				"volume " + root: acctest.VolumeLookup(acctest.PoolB(), root)},
		}),
		Steps: []resource.TestStep{
			{
				Config: machine(""),
				Check: resource.ComposeTestCheckFunc(runningOnlyOn(name, a, b, &uuid, &uptime), func(s *terraform.State) error {
					basePath = s.RootModule().Resources["libvirt_volume.base"].Primary.Attributes["path"]
					rootPath = s.RootModule().Resources["libvirt_volume.root"].Primary.Attributes["path"]
					return nil
				}),
			},
			{
				Config: machine("b"),
				ConfigPlanChecks: acctest.Plans(acctest.Planned(domRes, acctest.Update), acctest.PlanIs(domRes, "update_method", "migrate"),
					acctest.Planned("libvirt_volume.base", acctest.Update), acctest.Planned("libvirt_volume.root", acctest.Update)),
				Check: resource.ComposeTestCheckFunc(runningOnlyOn(name, b, a, &uuid, &uptime),
					func(*terraform.State) error {
						if err := noVolumeAt(a, rootPath)(nil); err != nil {
							return err
						}
						return noVolumeAt(a, basePath)(nil)
					},
					func(*terraform.State) error {
						for _, p := range []string{rootPath, basePath} {
							if err := b.Read(context.Background(), "look up "+p, acctest.VolumeKeyLookup(p)); err != nil {
								return fmt.Errorf("host b has no volume at %s: %w", p, err)
							}
						}
						return nil
					}),
				ConfigStateChecks: append(acctest.State("libvirt_volume.root", "host", "b"), acctest.State("libvirt_volume.base", "host", "b")...),
			},
		},
	})
}

// movingMachine is a quickstart-shaped machine on host ("" for the default host): a base
// volume of the tiny guest image, an overlay on it and a domain on the overlay with
// migrate = true and copy_storage = "all", booted (waiting for its agent) when running.
func movingMachine(t *testing.T, name, host string, running bool) string {
	h := ""
	if host != "" {
		h = fmt.Sprintf("  host = %q\n", host)
	}
	more := []string{"  disk {\n    volume_id = libvirt_volume.root.id\n  }"}
	if running {
		more = append(more, `  wait_for_ready = { timeout = "3m", command = ["/bin/true"] }`)
	} else {
		more = append(more, "  running = false")
	}
	return hostsProvider() + fmt.Sprintf(`
resource "libvirt_volume" "base" {
%[1]s  name        = %[2]q
  pool        = %[3]q
  source_file = %[4]q
}

resource "libvirt_volume" "root" {
%[1]s  name           = %[5]q
  pool           = %[3]q
  backing_volume = libvirt_volume.base.id
}
`, h, name+"-base.qcow2", acctest.Pool(), acctest.GuestImage(t), name+"-root.qcow2") + migratingDomain(name, host, `    copy_storage = "all"`, more...)
}

// A stopped machine moves whole too: its volumes are copied to b through the provider
// (nothing writes them while the domain is stopped), the definition moves, and the default
// host keeps nothing; the overlay on b still has its base under it. Back again the same way.
func TestAccDomainMigrate_stoppedWithItsVolumes(t *testing.T) {
	acctest.RequireHostB(t)
	name := acctest.RandomName("migsv")
	base, root := name+"-base.qcow2", name+"-root.qcow2"
	a, b := acctest.Client(t), acctest.ClientB(t)
	var basePath, rootPath string
	onlyFilesOn := func(on, off *libvirt.Client) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for _, p := range []string{rootPath, basePath} {
				if err := on.Read(context.Background(), "look up "+p, acctest.VolumeKeyLookup(p)); err != nil {
					return fmt.Errorf("%s has no volume at %s: %w", on.URI(), p, err)
				}
				if err := noVolumeAt(off, p)(nil); err != nil {
					return err
				}
			}
			info, err := on.VolumeInfo(context.Background(), libvirt.VolumeRef{Key: rootPath})
			if err != nil || info.Backing != basePath {
				return fmt.Errorf("overlay on %s: backing %v, want %s (%v)", on.URI(), info, basePath, err)
			}
			return nil
		}
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI(): {"domain " + name: acctest.DomainLookup(name), "volume " + base: acctest.VolumeLookup(acctest.Pool(), base),
				"volume " + root: acctest.VolumeLookup(acctest.Pool(), root)},
			acctest.URIB(): {"domain " + name: acctest.DomainLookup(name), "volume " + base: acctest.VolumeLookup(acctest.PoolB(), base),
				"volume " + root: acctest.VolumeLookup(acctest.PoolB(), root)},
		}),
		Steps: []resource.TestStep{
			{
				Config: movingMachine(t, name, "", false),
				Check: func(s *terraform.State) error {
					basePath = s.RootModule().Resources["libvirt_volume.base"].Primary.Attributes["path"]
					rootPath = s.RootModule().Resources["libvirt_volume.root"].Primary.Attributes["path"]
					return nil
				},
			},
			{
				Config: movingMachine(t, name, "b", false),
				ConfigPlanChecks: acctest.Plans(acctest.PlanIs(domRes, "update_method", "migrate"),
					acctest.Planned("libvirt_volume.base", acctest.Update), acctest.Planned("libvirt_volume.root", acctest.Update)),
				Check: resource.ComposeTestCheckFunc(onlyOn(name, b, a), onlyFilesOn(b, a)),
			},
			{
				Config:           movingMachine(t, name, "", false),
				ConfigPlanChecks: acctest.Updates(domRes, "migrate"),
				Check:            resource.ComposeTestCheckFunc(onlyOn(name, a, b), onlyFilesOn(a, b)),
			},
		},
	})
}
