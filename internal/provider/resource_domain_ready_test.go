package provider_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// The must-show for readiness and the console, on one booted guest on a network
// without DHCP (no lease ever comes):
//  1. wait_for_ready with a passing command: applied, second plan empty;
//  2. libvirt_domain_console returns what the guest writes on its serial console (a
//     background loop in the guest, started through the agent, writes a line a second);
//  3. wait_for_ready whose command exits 3 fails with the command's exit and the console
//     tail (a line the command wrote on the console);
//  4. wait_for_ip on the DHCP-less network times out with the console tail.
//
// The domain stays in state after each failed wait (an update here; a create keeps it
// too, tainted, as wait_for_ip always did); CheckDestroy asks libvirt that the domain
// and the network are gone.
func TestAccDomainReady_consoleBooted(t *testing.T) {
	acctest.RequireAcc(t)
	name, disk := acctest.DomainDisk(t, "ready")
	net := name + "-n"
	v4 := fmt.Sprintf("10.%d.%d", 150+rand.IntN(50), rand.IntN(256))
	config := func(ready, nicWait string, console bool) string {
		nic := []string{attr("network", hcl("libvirt_network.n.name"))}
		if nicWait != "" {
			nic = append(nic, blockHCL("wait_for_ip", attr("timeout", nicWait), attr("source", "lease")))
		}
		c := acctest.ProviderBlock("") +
			// isolated, no dhcp block: no DHCP server on it
			resourceHCL("libvirt_network", "n", attr("name", net), attr("mode", "isolated"), attr("addresses", hcl(fmt.Sprintf("[%q]", v4+".0/24")))) +
			resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 128),
				`graphics = { type = "none" }`, blockHCL("disk", attr("volume_id", disk)), blockHCL("network_interface", nic...),
				"wait_for_ready = "+ready)
		if console {
			c += `
data "libvirt_domain_console" "c" {
  domain_id = libvirt_domain.test.id
  lines     = 5
  wait_sec  = 3
}
`
		}
		return c
	}
	passing := `{ timeout = "3m", command = ["/bin/true"] }`
	failing := `{ timeout = "1m", command = ["/bin/sh", "-c", "sleep 2; echo ready-probe-failed-here > /dev/ttyS0; exit 3"] }`
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name), "network " + net: acctest.NetworkLookup(net)}),
		Steps: []resource.TestStep{
			{
				Config:           config(passing, "", false),
				ConfigPlanChecks: acctest.Plans(),
				Check: acctest.HostCheck(func() error {
					// A line a second on the serial console, for the data source to read, once
					// the guest's init has written its last line there (its READY line: the agent
					// answers well before, while init still looks for a seed and a DHCP lease
					// this guest has not, and its lines would land between the ticks).
					if _, err := acctest.GuestExec(t, name, "/bin/sh", "-c",
						"n=0; while [ ! -f /run/tinyguest/ready ] && [ $n -lt 300 ]; do usleep 200000; n=$((n+1)); done; sleep 1"); err != nil {
						return err
					}
					_, err := acctest.GuestExec(t, name, "/bin/sh", "-c",
						"(n=0; while :; do n=$((n+1)); echo console-tick-$n; sleep 1; done) >/dev/ttyS0 2>&1 </dev/null &")
					return err
				}),
			},
			{
				Config:           config(passing, "", true),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeTestCheckFunc(
					resource.TestMatchResourceAttr("data.libvirt_domain_console.c", "output", regexp.MustCompile(`^(console-tick-[0-9]+\n){1,4}console-tick-[0-9]+$`)),
				),
			},
			{
				Config:      config(failing, "", false),
				ExpectError: regexp.MustCompile(`exited 3(.|\n)*Last [0-9]+ lines of the guest's console:(.|\n)*ready-probe-failed-here`),
			},
			{
				Config:      config(passing, "5s", false),
				ExpectError: regexp.MustCompile(`got no IP address(.|\n)*within 5s(.|\n)*Last [0-9]+ lines of the guest's console:(.|\n)*console-tick-[0-9]+`),
			},
		},
	})
}

// A wait that fails at create keeps the domain in state, tainted, as wait_for_ip does: the
// next plan replaces it, and destroy removes it (nothing on the host untracked). The
// domain is diskless (it idles in the firmware, no OS boots), so its agent never answers;
// the firmware writes nothing on the serial console, and the error says so.
func TestAccDomainReady_failedCreateTainted(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("notready")
	config := acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 64),
		`graphics = { type = "none" }`, `wait_for_ready = { timeout = "5s" }`,
		`shutdown = { timeout = "0s" }`) // the firmware ignores ACPI: force it off at once
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(strings.ReplaceAll(`domain `+name+`: the guest agent did not answer guest-ping \(last: [^)]*not connected`+
					`(.|\n)*within 5s(.|\n)*stays in state(.|\n)*\(the guest wrote nothing on its console while it was waited for\)`, " ", `\s+`)),
			},
			{
				// The domain is on the host and in state: the same configuration plans a
				// change only because the failed create tainted it (a replace).
				PreConfig: func() {
					if _, err := acctest.Client(t).LookupDomain(context.Background(), name); err != nil {
						t.Fatalf("the domain whose wait failed is not on the host: %v", err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				// The domain in state is the one on the host.
				ConfigPlanChecks: afterPlan(func(plan *tfjson.Plan) error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return fmt.Errorf("the domain whose wait failed is not on the host: %w", err)
					}
					if id := priorAttr(plan, "libvirt_domain.test", "id"); !strings.EqualFold(id, live.Inactive.UUID) {
						return fmt.Errorf("libvirt_domain.test has id %q in state, the domain %s on the host is %s", id, name, live.Inactive.UUID)
					}
					return nil
				}),
			},
		},
	})
}
