package provider_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A replaced network takes its running guests' bridge away: the plan warns (see
// ModifyPlan), the apply goes through, and the guest is no longer connected.
func TestAccNetwork_replaceInUse(t *testing.T) {
	acctest.RequireAcc(t)
	name, v4 := netTestName()
	config := func(mode string) string {
		return acctest.ProviderBlock("") + networkHCL(name, mode, v4, dhcpHCL(""))
	}
	connections := func(want int) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			st, err := acctest.Client(t).ReadNetwork(context.Background(), name)
			if err != nil {
				return err
			}
			if st.Connections != want {
				return fmt.Errorf("network %s has %d connections, want %d", name, st.Connections, want)
			}
			return nil
		})
	}
	netTest(t, name, []resource.TestStep{
		{Config: config("isolated"), Check: connections(0)},
		{
			// A diskless guest (it idles in the firmware) plugged into the network.
			PreConfig: func() { startGuestOn(t, name) },
			Config:    config("isolated"),
			PlanOnly:  true,
		},
		{
			Config:           config("open"),
			ConfigPlanChecks: acctest.Before(acctest.Planned("libvirt_network.n", acctest.Replace)),
			Check:            connections(0),
		},
	})
}

// startGuestOn starts a transient, diskless domain with one interface on network, and
// checks libvirt counts it; it is destroyed at cleanup.
func startGuestOn(t *testing.T, network string) {
	t.Helper()
	acctest.StartGuestOn(t, network)
	st, err := acctest.Client(t).ReadNetwork(context.Background(), network)
	if err != nil || st.Connections != 1 {
		t.Fatalf("network %s: connections %v (%v), want 1 with the guest running", network, st, err)
	}
}

// mode = "bridge" puts guests on an existing host bridge (made here inside the test host's
// network namespace).
func TestAccNetwork_bridgeMode(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("net")
	br := "tfaccbr" + strings.ToLower(name[len(name)-6:])
	if out, err := exec.Command("ip", "link", "add", br, "type", "bridge").CombinedOutput(); err != nil {
		t.Fatalf("create bridge %s (run inside the test host's netns): %v %s", br, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", br).Run() })
	config := acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_network" "n" {
  name      = %q
  mode      = "bridge"
  bridge    = %q
  autostart = true
}
`, name, br)
	netTest(t, name, []resource.TestStep{
		{
			Config: config,
			Check: checkLiveXML(t, name, func(x *libvirtxml.Network) error {
				if x.Forward == nil || x.Forward.Mode != "bridge" || x.Bridge == nil || x.Bridge.Name != br || len(x.IPs) > 0 {
					return fmt.Errorf("network %s: forward %+v bridge %+v ips %v; want mode bridge on %s, no addresses", name, x.Forward, x.Bridge, x.IPs, br)
				}
				return nil
			}),
			ConfigPlanChecks: acctest.Plans(),
		},
		{ResourceName: "libvirt_network.n", ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: name},
	})
}

// A network of that name exists already: the error says to import it, and the existing
// network is left as it was.
func TestAccNetwork_exists(t *testing.T) {
	acctest.RequireAcc(t)
	existing := acctest.CreateNetwork(t, true)
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config:      acctest.ProviderBlock("") + networkHCL(existing.Name, "isolated", "10.149.0"),
			ExpectError: acctest.ErrorText(fmt.Sprintf("exists on the host already: import it (terraform import libvirt_network.<name> %s)", existing.Name)),
		}},
	})
	st, err := acctest.Client(t).ReadNetwork(context.Background(), existing.Name)
	if err != nil || !st.Active || len(st.Def.IPs) != 1 || st.Def.IPs[0].Address != existing.Addr(1) {
		t.Fatalf("the existing network changed: %+v %v", st, err)
	}
}

// NAT (the default mode) with DNS forwarders: what libvirt adds to a NAT network (port
// ranges, bridge settings) is no diff, forwarders round-trip, import plans clean.
func TestAccNetwork_natForwarders(t *testing.T) {
	acctest.RequireAcc(t)
	name, v4 := netTestName()
	config := acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_network" "n" {
  name      = %q
  domain    = "nat.tfacc.test"
  addresses = ["%s.254/24"]
  dhcp {}
  dns {
    forwarders = [
      { addr = "192.0.2.53" },
      { domain = "corp.test", addr = "192.0.2.54" },
      { domain = "local.test" },
    ]
  }
}
`, name, v4)
	netTest(t, name, []resource.TestStep{
		{
			Config: config,
			Check: checkLiveXML(t, name, func(x *libvirtxml.Network) error {
				if x.Forward == nil || x.Forward.Mode != "nat" || x.IPs[0].Address != v4+".254" {
					return fmt.Errorf("network %s: forward %+v ip %+v, want nat with the host on .254", name, x.Forward, x.IPs)
				}
				if x.DNS == nil || len(x.DNS.Forwarders) != 3 || x.DNS.Forwarders[1].Domain != "corp.test" || x.DNS.Forwarders[2].Addr != "" {
					return fmt.Errorf("network %s: DNS %+v, want the three forwarders", name, x.DNS)
				}
				return nil
			}),
			ConfigStateChecks: acctest.State("libvirt_network.n",
				"mode", "nat",
				// The host sits on .254: the default range is everything below it.
				"dhcp.ranges", []any{map[string]any{"start": v4 + ".1", "end": v4 + ".253"}},
			),
			ConfigPlanChecks: acctest.Plans(),
		},
		{ResourceName: "libvirt_network.n", ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: name},
	})
}

// A network made by hand (virsh style: netmask form, a DHCP range of its own) is imported
// with a configuration that omits the ranges: the import plans clean, the network keeps
// its range, and from then on host entries are managed live.
func TestAccNetwork_importHandMade(t *testing.T) {
	acctest.RequireAcc(t)
	net := acctest.CreateNetwork(t, true) // .100-.199, netmask 255.255.255.0
	config := func(hosts string) string {
		return acctest.ProviderBlock("") + networkHCL(net.Name, "isolated", net.Prefix, dhcpHCL(hosts))
	}
	host := fmt.Sprintf(`[{ mac = "52:54:00:aa:cc:31", ip = "%s" }]`, net.Addr(31))
	netTest(t, net.Name, []resource.TestStep{
		{
			// import { } block: a no-op plan.
			Config:          config(""),
			ResourceName:    "libvirt_network.n",
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   net.Name,
		},
		{
			// terraform import, kept in state for the next steps.
			Config:             config(""),
			ResourceName:       "libvirt_network.n",
			ImportState:        true,
			ImportStateId:      net.Name,
			ImportStatePersist: true,
		},
		{
			Config:   config(""),
			PlanOnly: true,
		},
		{
			Config:           config(host),
			ConfigPlanChecks: acctest.Does("libvirt_network.n", acctest.Update),
			Check: checkNetworkXML(t, net.Name, "isolated", [][2]string{{net.Addr(1), "0"}}, []string{net.Addr(100), net.Addr(199)},
				[]netHost{{"52:54:00:aa:cc:31", net.Addr(31), ""}}, nil),
		},
	})
}
