package provider_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// These tests put libvirt_cluster_machine's create through lost answers: the daemon
// carries out a write (the address reservation, the domain's define) but its answer never
// reaches the provider, because the link is cut after it (acctest.FaultProxy between the
// provider and libvirtd's TCP listener). Whatever the create may have made must then be
// rolled back or kept in state: never left on the host untracked. Each test makes one
// stopped machine (running = false: no guest boots).

// cmFaultSetup is a fault test's machine name on a network of its own, and the proxy
// between the provider and libvirtd's TCP listener.
func cmFaultSetup(t *testing.T, name string) (cmEnv, cmParts, *acctest.FaultProxy) {
	e := cmSetup(t)
	return e, cmPartsOf(e.namespace, name), acctest.StartFaultProxy(t, "127.0.0.1:16509")
}

// cmFaultConfig is one stopped machine (running = false: no guest boots) whose provider
// talks to libvirt through proxy.
func cmFaultConfig(proxy *acctest.FaultProxy, e cmEnv, name, extra string) string {
	provider := strings.Replace(acctest.ProviderBlock(""), fmt.Sprintf("%q", acctest.URI()), fmt.Sprintf("%q", "qemu+tcp://"+proxy.Addr+"/system"), 1)
	return provider + e.machine(name, e.network.Name, "  running = false\n"+extra)
}

// lostHappened fails when the armed answer was never lost (the test would prove nothing).
func lostHappened(what string, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	default:
		return fmt.Errorf("the answer to the %s was never lost: the test proved nothing", what)
	}
}

// cmDomainsOf lists the domains on the host whose name starts with namespace, with
// their UUIDs.
func cmDomainsOf(t *testing.T, namespace string) map[string]string {
	t.Helper()
	ctx := acctest.Ctx(t)
	out := map[string]string{}
	names, _ := acctest.HostObjects(t, namespace+"-")
	for _, name := range names {
		d, err := acctest.Client(t).LookupDomain(ctx, name)
		if err != nil {
			t.Fatalf("look up domain %s: %v", name, err)
		}
		out[name] = libvirt.UUIDString(d)
	}
	return out
}

// The answer to the reservation's network-update is lost: the daemon added the host entry,
// the provider never heard so, and the create fails there. The rollback must remove the
// entry too (not only the two volumes made before it); the next apply then makes the
// machine (no "already has a DHCP host entry for MAC" from the leftover).
func TestAccClusterMachineFault_reservationReplyLost(t *testing.T) {
	e, m, proxy := cmFaultSetup(t, "resv")
	network, pool := e.network, e.pool
	config := cmFaultConfig(proxy, e, "resv", "")
	var lost <-chan struct{}
	e.test(t, m, []resource.TestStep{
		{
			PreConfig: func() { lost = proxy.LoseReplyTo(acctest.ProcNetworkUpdate, time.Second) },
			Config:    config,
			// What is left on the host is checked below (ddbae63 failed the same way,
			// but left the host entry).
			ExpectError: acctest.Wrapped(`reserving an address for ` + m.mac + ` in network ` + network.Name + ` failed: .*Rolled back`),
		},
		{
			PreConfig: func() {
				if err := lostHappened("reservation's network update", lost); err != nil {
					t.Fatal(err)
				}
				if err := cmCheckGone(t, network.Name, pool, m); err != nil {
					t.Errorf("after the failed create, the host still holds parts of the machine: %v", err)
				}
			},
			Config:           config,
			ConfigPlanChecks: acctest.Plans(),
		},
	})
}

// The answer to the domain's define is lost once: the define names the UUID the provider
// chose, so it is sent again on a fresh connection, and the create succeeds with exactly
// one domain, the one in state.
func TestAccClusterMachineFault_defineReplyLostOnce(t *testing.T) {
	e, m, proxy := cmFaultSetup(t, "def")
	var lost <-chan struct{}
	e.test(t, m, []resource.TestStep{{
		PreConfig:        func() { lost = proxy.LoseReplyTo(acctest.ProcDomainDefineXMLFlags, time.Second) },
		Config:           cmFaultConfig(proxy, e, "def", ""),
		ConfigPlanChecks: acctest.Plans(),
		Check: func(s *terraform.State) error {
			if err := lostHappened("domain define", lost); err != nil {
				return err
			}
			doms := cmDomainsOf(t, e.namespace)
			if len(doms) != 1 || doms[m.domain] == "" {
				return fmt.Errorf("host holds domains %v; want exactly %s", doms, m.domain)
			}
			uid := s.RootModule().Resources["libvirt_cluster_machine.test"].Primary.Attributes["uid"]
			if doms[m.domain] != uid {
				return fmt.Errorf("domain %s has UUID %s; state says uid %s", m.domain, doms[m.domain], uid)
			}
			return nil
		},
	}})
}

// The answer to the define is lost and the daemon then stays unreachable (the proxy
// refuses every connection) past the create's deadline: whether the domain was defined
// is unknown when the create gives up. The rollback must treat it as made: once the
// daemon answers again it removes the domain with everything else, and the host holds
// nothing of the machine. The next apply makes it.
func TestAccClusterMachineFault_defineOutcomeUnknown(t *testing.T) {
	e, m, proxy := cmFaultSetup(t, "unk")
	network, pool := e.network, e.pool
	const createTimeout = 40 * time.Second
	failing := cmFaultConfig(proxy, e, "unk",
		fmt.Sprintf("  timeouts {\n    create = %q\n  }", createTimeout.String()))
	var lost <-chan struct{}
	healed := make(chan struct{})
	e.test(t, m, []resource.TestStep{
		{
			PreConfig: func() {
				lost = proxy.LoseReplyTo(acctest.ProcDomainDefineXMLFlags, time.Second)
				go func() {
					defer close(healed)
					select {
					case <-lost:
					case <-time.After(5 * time.Minute):
						return
					}
					// The daemon "goes down" right after the define (before the
					// provider's first retry, 500 ms later): every link cut, every
					// new one refused. It comes back only after the create's deadline
					// (the create began before the define, so this is past it).
					proxy.Refuse()
					proxy.Cut()
					time.Sleep(createTimeout)
					proxy.Accept()
				}()
			},
			Config: failing,
			// What is left on the host is checked below.
			ExpectError: acctest.Wrapped(`defining domain ` + m.domain + ` failed: `),
		},
		{
			PreConfig: func() {
				<-healed
				if err := lostHappened("domain define", lost); err != nil {
					t.Fatal(err)
				}
				errs := []error{cmCheckGone(t, network.Name, pool, m)}
				if doms := cmDomainsOf(t, e.namespace); len(doms) > 0 {
					errs = append(errs, fmt.Errorf("domains left: %v", slices.Sorted(maps.Keys(doms))))
				}
				if err := errors.Join(errs...); err != nil {
					t.Errorf("after the failed create, the host still holds parts of the machine: %v", err)
				}
			},
			Config:           cmFaultConfig(proxy, e, "unk", ""),
			ConfigPlanChecks: acctest.Plans(),
		},
	})
}
