package provider_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// hostsProvider is the provider block of a test of two hosts: the test host is
// `default`, the second test host is `b`. peer_uri is the
// test host as b's daemon reaches it (in b's mount namespace qemu:///system is b).
func hostsProvider() string {
	return acctest.ProviderBlock(fmt.Sprintf(`  peer_uri = %q
  hosts = {
    b = { uri = %q }
  }`, acctest.URIAForB(), acctest.URIB()))
}

// onlyOn checks that a domain named name is on the host c talks to and not on the other.
func onlyOn(name string, on, off *libvirt.Client) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		if _, err := on.LookupDomain(ctx, name); err != nil {
			return fmt.Errorf("domain %s is not on %s: %w", name, on.URI(), err)
		}
		if _, err := off.LookupDomain(ctx, name); !errors.Is(err, libvirt.ErrNotFound) {
			return fmt.Errorf("domain %s is on %s too (or that host cannot tell: %v)", name, off.URI(), err)
		}
		return nil
	}
}

// One configuration, two hosts: a volume and a domain using it on host b, a domain on
// the default host; each lands on its own host (asked of each libvirt), a second plan is
// empty, the domain on b imports by `b/<name>` and plans clean, and libvirt_domains lists
// both hosts with the import ids that bring them back.
func TestAccHosts_placementImportAndList(t *testing.T) {
	acctest.RequireHostB(t)
	onB, onA := acctest.RandomName("hb"), acctest.RandomName("ha")
	vol := onB + ".qcow2"
	cfg := hostsProvider() + fmt.Sprintf(`
resource "libvirt_volume" "b" {
  host     = "b"
  name     = %[1]q
  pool     = %[2]q
  capacity_bytes = 1048576
  format   = "qcow2"
}

resource "libvirt_domain" "b" {
  host       = "b"
  name       = %[3]q
  vcpu       = 1
  memory_mib = 64
  running    = false
  disk {
    volume_id = libvirt_volume.b.id
  }
  network_interface {
    network = %[4]q
  }
}

resource "libvirt_domain" "a" {
  name       = %[5]q
  vcpu       = 1
  memory_mib = 64
  running    = false
  network_interface {
    network = %[6]q
  }
}
`, vol, acctest.PoolB(), onB, acctest.NetworkB(), onA, acctest.Network())
	list := cfg + fmt.Sprintf(`
data "libvirt_domains" "all" {
  all_hosts   = true
  name_prefix = %q
  depends_on  = [libvirt_domain.a, libvirt_domain.b]
}
`, acctest.NamePrefix+"h")
	a, b := acctest.Client(t), acctest.ClientB(t)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI():  {"domain " + onA: acctest.DomainLookup(onA)},
			acctest.URIB(): {"domain " + onB: acctest.DomainLookup(onB), "volume " + vol: acctest.VolumeLookup(acctest.PoolB(), vol)},
		}),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  resource.ComposeTestCheckFunc(onlyOn(onB, b, a), onlyOn(onA, a, b)),
				ConfigStateChecks: acctest.State("libvirt_domain.b",
					"host", "b",
					"state", "shutoff",
				),
			},
			{
				Config:           cfg,
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
			},
			{
				// Import by `b/<name>` with an import block: the plan is a clean import
				// (nothing to change), host b in the imported state.
				Config:          cfg,
				ResourceName:    "libvirt_domain.b",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   "b/" + onB,
			},
			{
				Config:        cfg,
				ResourceName:  "libvirt_domain.b",
				ImportState:   true,
				ImportStateId: "b/" + onB,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["host"] != "b" || states[0].Attributes["name"] != onB {
						return fmt.Errorf("imported: %v", states)
					}
					return nil
				},
			},
			{
				Config:           list,
				ConfigPlanChecks: acctest.Plans(),
				Check: func(s *terraform.State) error {
					ds := s.RootModule().Resources["data.libvirt_domains.all"].Primary.Attributes
					want := map[string]string{onA: "default", onB: "b"}
					for i := 0; ds[fmt.Sprintf("domains.%d.name", i)] != ""; i++ {
						name := ds[fmt.Sprintf("domains.%d.name", i)]
						host, uuid := ds[fmt.Sprintf("domains.%d.host", i)], ds[fmt.Sprintf("domains.%d.uuid", i)]
						id := ds[fmt.Sprintf("domains.%d.import_id", i)]
						if w, ok := want[name]; ok {
							wantID := uuid
							if w != "default" {
								wantID = w + "/" + uuid
							}
							if host != w || id != wantID {
								return fmt.Errorf("%s: host %q import_id %q, want %q %q", name, host, id, w, wantID)
							}
							delete(want, name)
						}
					}
					if len(want) > 0 {
						return fmt.Errorf("libvirt_domains misses %v", want)
					}
					return nil
				},
			},
		},
	})
}

// A host that cannot be reached fails only what is placed on it. With host b's URI
// pointing at a socket nobody listens on (b is down): the plan's refresh fails for b's
// domain alone, naming it and the host, while the default host's domain refreshes; an
// apply that does not refresh (`-refresh=false`, as Terraform offers for this) makes a
// new domain on the default host while b is down; b back, everything plans clean.
// Through the real CLI: plugin-testing cannot plan without refreshing.
func TestAccHosts_oneHostDown(t *testing.T) {
	acctest.RequireHostB(t)
	acctest.Parallel(t)
	onB, onA, more := acctest.RandomName("hb"), acctest.RandomName("ha"), acctest.RandomName("ha")
	domain := func(res, host, name, network string) string {
		h := ""
		if host != "" {
			h = fmt.Sprintf("  host = %q\n", host)
		}
		return fmt.Sprintf(`
resource "libvirt_domain" %q {
%s  name       = %q
  vcpu       = 1
  memory_mib = 64
  running    = false
  network_interface {
    network = %q
  }
}
`, res, h, name, network)
	}
	domains := domain("b", "b", onB, acctest.NetworkB()) + domain("a", "", onA, acctest.Network())
	up := hostsProvider() + domains
	down := strings.Replace(up, acctest.URIB(), "qemu+unix:///system?socket=/nonexistent/kvmforge-b/libvirt-sock", 1)
	a, b := acctest.Client(t), acctest.ClientB(t)
	w := newCLIWork(t, up)
	t.Cleanup(func() {
		w.write("main.tf", up+domain("more", "", more, acctest.Network()))
		w.mustRun("destroy", "-auto-approve", "-input=false")
		if err := acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI():  {"domain " + onA: acctest.DomainLookup(onA), "domain " + more: acctest.DomainLookup(more)},
			acctest.URIB(): {"domain " + onB: acctest.DomainLookup(onB)},
		})(nil); err != nil {
			t.Error(err)
		}
	})
	w.mustRun("apply", "-auto-approve", "-input=false")
	if err := resource.ComposeTestCheckFunc(onlyOn(onB, b, a), onlyOn(onA, a, b))(nil); err != nil {
		t.Fatal(err)
	}

	w.write("main.tf", down)
	out, code := w.run("plan", "-input=false")
	if code != 1 || !acctest.ErrorText("libvirt_domain.b").MatchString(out) || strings.Contains(out, "with libvirt_domain.a") ||
		strings.Count(out, "Error: ") != 1 {
		t.Fatalf("plan with host b down: exit %d, want 1 with one error, for libvirt_domain.b:\n%s", code, out)
	}

	w.write("main.tf", down+domain("more", "", more, acctest.Network()))
	w.mustRun("apply", "-auto-approve", "-input=false", "-refresh=false")
	if err := onlyOn(more, a, b)(nil); err != nil {
		t.Fatal(err)
	}

	w.write("main.tf", up+domain("more", "", more, acctest.Network()))
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan with b back: exit %d, want 0:\n%s", code, out)
	}
}

// A volume moves to a host that has a volume of the same pool and name of its own (not the
// same storage): refused at plan time, naming it; nothing on either host changes. Once
// that one is gone, the move copies the volume over and removes it from the default host.
func TestAccHosts_volumeMoveRefusesAnotherVolume(t *testing.T) {
	acctest.RequireHostB(t)
	name := acctest.RandomName("hv") + ".raw"
	a, b := acctest.Client(t), acctest.ClientB(t)
	theirs, err := b.CreateVolume(acctest.Ctx(t), libvirt.VolumeSpec{Pool: acctest.PoolB(), Name: name, Format: "raw", Capacity: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = b.RemoveVolumesAt(context.Background(), []string{theirs.Path}) })
	cfg := func(host string) string {
		h := ""
		if host != "" {
			h = fmt.Sprintf("  host = %q\n", host)
		}
		return hostsProvider() + fmt.Sprintf(`
resource "libvirt_volume" "v" {
%s  name           = %q
  pool           = %q
  format         = "raw"
  capacity_bytes = 1048576
}
`, h, name, acctest.Pool())
	}
	var path string
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI():  {"volume " + name: acctest.VolumeLookup(acctest.Pool(), name)},
			acctest.URIB(): {"volume " + name: acctest.VolumeLookup(acctest.PoolB(), name)},
		}),
		Steps: []resource.TestStep{
			{
				Config: cfg(""),
				Check: func(s *terraform.State) error {
					path = s.RootModule().Resources["libvirt_volume.v"].Primary.Attributes["path"]
					return nil
				},
			},
			{
				Config:      cfg("b"),
				PlanOnly:    true,
				ExpectError: acctest.ErrorText("has a volume " + acctest.Pool() + "/" + name + " of its own"),
			},
			{
				PreConfig: func() {
					if _, left := b.RemoveVolumesAt(context.Background(), []string{theirs.Path}); len(left) > 0 {
						t.Fatal(left)
					}
				},
				Config:           cfg("b"),
				ConfigPlanChecks: acctest.Plans(acctest.Planned("libvirt_volume.v", acctest.Update)),
				Check: resource.ComposeTestCheckFunc(noVolumeAt(a, path), func(*terraform.State) error {
					info, err := b.VolumeInfo(context.Background(), libvirt.VolumeRef{Key: path})
					if err != nil || info.Capacity != 1048576 {
						return fmt.Errorf("volume on b: %+v, %v (want 1 MiB at %s)", info, err, path)
					}
					return nil
				}),
			},
		},
	})
}

// A host not known at plan time (here terraform_data's output, known at apply) is no
// host to check against: the plan asks no libvirt. The domain's NIC names a network
// filter that only host b has; the plan used to look for it on the default host and
// refuse the domain. Now the plan leaves the check to apply, which Terraform plans again
// with the host known: the domain is made on b behind b's filter, and a second plan is
// empty.
func TestAccHosts_hostUnknownAtPlan(t *testing.T) {
	acctest.RequireHostB(t)
	name := acctest.RandomName("hu")
	filter := name + "-on-b-only"
	virshB := func(args ...string) ([]byte, error) {
		return exec.Command("virsh", append([]string{"-c", acctest.URIB()}, args...)...).CombinedOutput()
	}
	def := filepath.Join(t.TempDir(), "filter.xml")
	if err := os.WriteFile(def, []byte(fmt.Sprintf(`<filter name=%q chain='root'><rule action='accept' direction='inout' priority='500'><all/></rule></filter>`, filter)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := virshB("nwfilter-define", def); err != nil {
		t.Fatalf("nwfilter-define on b: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = virshB("nwfilter-undefine", filter) })
	a, b := acctest.Client(t), acctest.ClientB(t)
	if err := a.LookupNWFilter(acctest.Ctx(t), filter); !errors.Is(err, libvirt.ErrNotFound) {
		t.Fatalf("the default host has filter %s too (or cannot tell: %v)", filter, err)
	}
	cfg := hostsProvider() + fmt.Sprintf(`
resource "terraform_data" "placement" {
  input = "b"
}

resource "libvirt_domain" "d" {
  host       = terraform_data.placement.output
  name       = %q
  vcpu       = 1
  memory_mib = 64
  running    = false
  network_interface {
    network = %q
    filter  = { name = %q }
  }
}
`, name, acctest.NetworkB(), filter)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
			acctest.URI():  {"domain " + name: acctest.DomainLookup(name)},
			acctest.URIB(): {"domain " + name: acctest.DomainLookup(name)},
		}),
		Steps: []resource.TestStep{
			{
				Config:            cfg,
				Check:             onlyOn(name, b, a),
				ConfigStateChecks: acctest.State("libvirt_domain.d", "host", "b"),
			},
			{
				Config:           cfg,
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
			},
		},
	})
}
