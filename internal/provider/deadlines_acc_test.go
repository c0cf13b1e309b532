package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

// A daemon that accepts the connection and then never answers (wedged, or a link that
// went silent under an established connection: acctest.FaultProxy frozen) must not hold
// a plan or an import forever. The pool bounds only its dials; a call on a live pooled
// connection is bounded by its context alone, and Terraform gives ModifyPlan and
// ImportState none. Each case first uses the connection (so the pool holds a live idle
// connection through the proxy, as after any earlier call), then freezes the proxy and
// runs the plan or the import, which must fail within seconds with an error naming the
// object and the bound; on ddbae63 it hangs until the go test -timeout.
//
// Covered: ModifyPlan of libvirt_domain, libvirt_clone, libvirt_secret (its uuid and usage
// look-ups), libvirt_dhcp_reservation (its default bound, shortened), libvirt_network (a destroy plan of a network in state);
// ImportState of libvirt_volume, libvirt_cloudinit_iso, libvirt_ignition,
// libvirt_snapshot and libvirt_clone. Nothing is made on the host but the network of the
// network case (isolated, inactive, named tfacc-...).
func TestAccDeadline_frozenDaemon(t *testing.T) {
	acctest.RequireAcc(t)
	const planDefault, importDefault = 4 * time.Second, 3 * time.Second
	restore := provider.SetPlanAndImportTimeoutsForTest(planDefault, importDefault)
	t.Cleanup(restore)
	pool := acctest.Pool()

	type tc struct {
		name string
		// before is applied while the proxy forwards (it warms the pool); frozen is planned
		// (PlanOnly, no refresh) or imported with the proxy frozen.
		before, frozen string
		importAddr     string // set for an import: the resource address; frozen then holds its config
		importID       string
		want           string // the error, words separated by spaces
	}
	host := `data "libvirt_host" "h" {}`
	// inPool is resource "<typ>" "x" named name in the test pool.
	inPool := func(typ, name string, lines ...string) string {
		return resourceHCL(typ, "x", append([]string{attr("name", name), attr("pool", pool)}, lines...)...)
	}
	n := func(kind string) string { return acctest.RandomName(kind) }
	dom, clone, vol, seed, ign, net := n("dom"), n("clone"), n("vol"), n("seed"), n("ign"), n("net")
	secret, secretID := n("secret"), uuid.NewString()
	t.Cleanup(func() { removeNetworkIfLeft(t, net) })
	cases := []tc{
		{
			// Warmed with a listing, not libvirt_host: the client keeps the host's
			// capabilities for a minute, and a plan must still reach the daemon for them.
			name: "plan domain", before: `data "libvirt_domains" "all" {}`,
			frozen: fmt.Sprintf(`resource "libvirt_domain" "x" {
  name       = %q
  vcpu       = 1
  memory_mib = 128
  running    = false
  timeouts {
    read = "3s"
  }
}`, dom),
			want: "Unable to plan libvirt_domain " + dom + " .*The libvirt daemon did not answer within 3s",
		},
		{
			name: "plan clone", before: host,
			frozen: fmt.Sprintf(`resource "libvirt_clone" "x" {
  source_domain_id = "%s-src"
  name             = %q
  mode             = "linked"
  timeouts {
    read = "3s"
  }
}`, clone, clone),
			want: "Unable to plan libvirt clone " + clone + " .*context deadline exceeded.*The libvirt daemon did not answer within 3s",
		},
		{
			name: "plan dhcp reservation (default bound)", before: host,
			frozen: `resource "libvirt_dhcp_reservation" "x" {
  network = "tfacc-frozen-no-such-net"
  mac     = "52:54:00:fe:ed:01"
  ip      = "10.99.99.10"
}`,
			want: "Unable to plan libvirt_dhcp_reservation tfacc-frozen-no-such-net/52:54:00:fe:ed:01 .*The libvirt daemon did not answer within " +
				planDefault.String(),
		},
		{
			// A destroy plan: the network's ModifyPlan asks whether running guests use it.
			name: "plan network destroy",
			before: fmt.Sprintf(`resource "libvirt_network" "x" {
  name      = %q
  mode      = "isolated"
  addresses = ["10.98.%d.0/24"]
  active    = false
  timeouts {
    read = "3s"
  }
}`, net, time.Now().Nanosecond()%250),
			frozen: "",
			want:   "Unable to plan libvirt_network " + net + " .*The libvirt daemon did not answer within 3s",
		},
		{
			// The secret's ModifyPlan looks up the configured uuid and the usage.
			name: "plan secret", before: host,
			frozen: fmt.Sprintf(`resource "libvirt_secret" "x" {
  uuid       = %q
  usage_type = "ceph"
  usage_name = %q
  timeouts {
    read = "3s"
  }
}`, secretID, secret),
			want: "Unable to plan libvirt_secret ceph/" + secret + " .*The libvirt daemon did not answer within 3s",
		},
		{
			name: "import volume", before: host,
			frozen:     inPool("libvirt_volume", vol, attr("capacity_bytes", 1048576)),
			importAddr: "libvirt_volume.x", importID: pool + "/" + vol,
			want: "Unable to import volume " + pool + "/" + vol + " .*context deadline exceeded.*did not answer within " + importDefault.String(),
		},
		{
			name: "import cloudinit_iso", before: host,
			frozen:     inPool("libvirt_cloudinit_iso", seed, attr("user_data", "#cloud-config\n")),
			importAddr: "libvirt_cloudinit_iso.x", importID: pool + "/" + seed,
			want: "Unable to import cloud-init seed " + pool + "/" + seed + " .*did not answer within " + importDefault.String(),
		},
		{
			name: "import ignition", before: host,
			frozen:     inPool("libvirt_ignition", ign, attr("content", "{}")),
			importAddr: "libvirt_ignition.x", importID: pool + "/" + ign,
			want: "Unable to import ignition config " + pool + "/" + ign + " .*did not answer within " + importDefault.String(),
		},
		{
			name: "import snapshot", before: host,
			frozen: fmt.Sprintf(`resource "libvirt_snapshot" "x" {
  domain_id = %q
}`, dom),
			importAddr: "libvirt_snapshot.x", importID: dom + "/snap-1",
			want: "Unable to import snapshot snap-1 of domain " + dom + " .*did not answer within " + importDefault.String(),
		},
		{
			name: "import clone", before: host,
			frozen: fmt.Sprintf(`resource "libvirt_clone" "x" {
  source_domain_id = "%s-src"
  name = %q
  mode = "linked"
}`, clone, clone),
			importAddr: "libvirt_clone.x", importID: clone,
			want: "Unable to import libvirt clone " + clone + " .*did not answer within " + importDefault.String(),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
			cfg := func(body string) string {
				return proxiedProvider(proxy.Addr) + body + "\n"
			}
			var started time.Time
			frozen := resource.TestStep{
				PreConfig: func() {
					proxy.Freeze()
					started = time.Now()
					// Should the step not fail as expected, the post-test destroy must
					// not meet a frozen daemon too.
					time.AfterFunc(30*time.Second, proxy.Thaw)
				},
				Config:      cfg(c.frozen),
				ExpectError: acctest.Wrapped(c.want),
			}
			if c.importAddr != "" {
				frozen.ImportState, frozen.ResourceName, frozen.ImportStateId = true, c.importAddr, c.importID
			} else {
				frozen.PlanOnly = true
			}
			acctest.RunSerial(t, resource.TestCase{
				CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"network " + net: acctest.NetworkLookup(net)}),
				Steps: []resource.TestStep{
					{Config: cfg(c.before)},
					frozen,
					{
						PreConfig: func() {
							took := time.Since(started)
							t.Logf("the frozen step failed after %s", took.Round(100*time.Millisecond))
							if took > 20*time.Second {
								t.Errorf("the frozen step took %s: the bound is a few seconds", took)
							}
							proxy.Thaw()
						},
						Config: cfg(c.before),
						// Asked of libvirt after the thaw: the frozen plan or import made
						// nothing, and the network of the network case is still there, stopped.
						Check: acctest.HostCheck(func() error {
							if err := acctest.CheckGone(map[string]acctest.Lookup{
								"domain " + dom:      acctest.DomainLookup(dom),
								"domain " + clone:    acctest.DomainLookup(clone),
								"volume " + vol:      acctest.VolumeLookup(pool, vol),
								"volume " + seed:     acctest.VolumeLookup(pool, seed),
								"volume " + ign:      acctest.VolumeLookup(pool, ign),
								"secret " + secretID: acctest.SecretLookup(secretID),
							})(nil); err != nil {
								return err
							}
							if !strings.Contains(c.before, "libvirt_network") {
								return nil
							}
							active, err := acctest.Client(t).NetworkActive(acctest.Ctx(t), net)
							if err != nil {
								return fmt.Errorf("network %s on the host: %w", net, err)
							}
							if active {
								return fmt.Errorf("network %s is active, want it as made: inactive", net)
							}
							return nil
						}),
					},
				},
			})
		})
	}
}

// Ctrl-C (Terraform's StopProvider cancels the request's context) ends an import that
// waits on a frozen daemon at once, long before its bound, and adds no "did not answer"
// explanation: it was interrupted, not timed out.
func TestAccDeadline_interrupted(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	c, err := libvirt.NewClient(libvirt.Config{URI: "qemu+tcp://" + proxy.Addr + "/system"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := acctest.Ctx(t)
	if _, err := c.HostInfo(ctx); err != nil { // the pool now holds a live connection
		t.Fatal(err)
	}
	proxy.Freeze()
	ctx, stop := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, stop)
	start := time.Now()
	diags := provider.ImportCloneForTest(ctx, c, acctest.RandomName("clone"))
	took := time.Since(start)
	if took > 5*time.Second {
		t.Errorf("the interrupted import took %s", took)
	}
	if !diags.HasError() {
		t.Fatalf("no error from the interrupted import: %v", diags)
	}
	for _, d := range diags {
		if strings.Contains(d.Detail(), "did not answer within") {
			t.Errorf("an interrupted import is reported as a timeout: %s", d.Detail())
		}
	}
	t.Logf("interrupted after %s: %s: %s", took.Round(10*time.Millisecond), diags[0].Summary(), diags[0].Detail())
}

// removeNetworkIfLeft removes a network a failed run left behind.
func removeNetworkIfLeft(t *testing.T, name string) {
	ctx := acctest.Ctx(t)
	if err := acctest.Client(t).DeleteNetwork(ctx, name); err == nil {
		t.Logf("removed leftover network %s", name)
	}
}
