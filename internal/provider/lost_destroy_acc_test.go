package provider_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// TestAccLostWrites_domainDestroy: the destroy of a running domain loses the answers to
// its force-off and to its undefine, each carried out by the daemon, which then seems
// down for a few seconds (every link cut), as across a libvirtd restart. Once the daemon
// answers again the provider looks the domain up: off already, then gone, so the destroy
// succeeds and nothing is left. Before, the destroy failed with "force off domain …:
// connection to … failed: procedure interrupted while awaiting response" (seen in CI
// after TestAccClone_runningSource) and the domain stayed in state.
func TestAccLostWrites_domainDestroy(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartCallProxy(t, "127.0.0.1:16509")
	name := acctest.RandomName("lostdestroy")
	config := proxiedProvider(proxy.Addr) + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1),
		attr("memory_mib", 128), attr("qemu_agent", false), `graphics = { type = "none" }`, `shutdown = { timeout = "0s" }`)
	faults := map[string]<-chan struct{}{}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			return errors.Join(lostAll(faults), acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})(s))
		},
		Steps: []resource.TestStep{{
			Config:            config,
			ConfigStateChecks: acctest.State(domRes, "state", "running"),
			Check: resource.ComposeTestCheckFunc(
				acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err == nil && !d.Active {
						err = fmt.Errorf("domain %s is not running: its destroy would not force it off", name)
					}
					return err
				}),
				// Armed for the destroy that ends the test (the plans in between only read).
				func(*terraform.State) error {
					faults["force off"] = proxy.RestartAt(acctest.ProcDomainDestroy, 3*time.Second)
					faults["undefine"] = proxy.RestartAt(acctest.ProcDomainUndefineFlags, 3*time.Second)
					return nil
				}),
		}},
	})
}
