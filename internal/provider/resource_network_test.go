package provider_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// networkXML asks libvirt for a network's XML: live (of a running network) or persistent.
func networkXML(t *testing.T, name string, live bool) (*libvirtxml.Network, error) {
	ctx := acctest.Ctx(t)
	st, err := acctest.Client(t).ReadNetwork(ctx, name)
	switch {
	case err != nil:
		return nil, err
	case live && st.Live == nil:
		return nil, fmt.Errorf("network %s does not run: it has no live XML", name)
	case live:
		return st.Live, nil
	}
	return st.Def, nil
}

// checkLiveXML checks the live XML of network name with check.
func checkLiveXML(t *testing.T, name string, check func(*libvirtxml.Network) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		x, err := networkXML(t, name, true)
		if err != nil {
			return err
		}
		return check(x)
	}
}

// netLiveness is what changes when a network is restarted: dnsmasq's pid and the bridge's
// ifindex (a restart makes a new bridge device).
type netLiveness struct {
	pid     string
	ifindex int
}

func readLiveness(name, bridge string) (netLiveness, error) {
	b, err := os.ReadFile("/run/libvirt/network/" + name + ".pid")
	if err != nil {
		return netLiveness{}, fmt.Errorf("dnsmasq pid of network %s: %w", name, err)
	}
	ifc, err := net.InterfaceByName(bridge)
	if err != nil {
		return netLiveness{}, fmt.Errorf("bridge %s of network %s (run the test inside the test host's netns): %w", bridge, name, err)
	}
	return netLiveness{pid: strings.TrimSpace(string(b)), ifindex: ifc.Index}, nil
}

type netHost struct{ mac, ip, name string }
type dnsEntry struct {
	ip    string
	names []string
}

// checkNetworkXML compares the parts of a network's XML the test configured, in the live
// and the persistent XML.
func checkNetworkXML(t *testing.T, name, mode string, addrs [][2]string, rng []string, hosts []netHost, dns []dnsEntry) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for what, live := range map[string]bool{"live": true, "persistent": false} {
			x, err := networkXML(t, name, live)
			if err != nil {
				return err
			}
			gotMode := "isolated"
			if x.Forward != nil {
				gotMode = x.Forward.Mode
			}
			if gotMode != mode {
				return fmt.Errorf("%s XML of %s: forward mode %q, want %q", what, name, gotMode, mode)
			}
			if len(x.IPs) != len(addrs) {
				return fmt.Errorf("%s XML of %s: %d <ip> elements, want %d", what, name, len(x.IPs), len(addrs))
			}
			for i, a := range addrs {
				if got := fmt.Sprintf("%s/%d", x.IPs[i].Address, x.IPs[i].Prefix); got != a[0]+"/"+a[1] {
					return fmt.Errorf("%s XML of %s: ip[%d] %s, want %s/%s", what, name, i, got, a[0], a[1])
				}
			}
			d := x.IPs[0].DHCP
			if d == nil || len(d.Ranges) != 1 || d.Ranges[0].Start != rng[0] || d.Ranges[0].End != rng[1] {
				return fmt.Errorf("%s XML of %s: DHCP %+v, want one range %s-%s", what, name, d, rng[0], rng[1])
			}
			if len(addrs) > 1 && len(rng) > 2 {
				d6 := x.IPs[1].DHCP
				if d6 == nil || len(d6.Ranges) != 1 || d6.Ranges[0].Start != rng[2] || d6.Ranges[0].End != rng[3] {
					return fmt.Errorf("%s XML of %s: IPv6 DHCP %+v, want one range %s-%s", what, name, d6, rng[2], rng[3])
				}
			}
			var gotHosts []netHost
			for _, h := range d.Hosts {
				gotHosts = append(gotHosts, netHost{h.MAC, h.IP, h.Name})
			}
			// hosts are sets: the order libvirt keeps is the order they were added in.
			slices.SortFunc(gotHosts, func(a, b netHost) int { return strings.Compare(a.mac, b.mac) })
			if !slices.Equal(gotHosts, hosts) {
				return fmt.Errorf("%s XML of %s: DHCP hosts %v, want %v", what, name, gotHosts, hosts)
			}
			var gotDNS []dnsEntry
			if x.DNS != nil {
				for _, h := range x.DNS.Host {
					e := dnsEntry{ip: h.IP}
					for _, n := range h.Hostnames {
						e.names = append(e.names, n.Hostname)
					}
					gotDNS = append(gotDNS, e)
				}
			}
			slices.SortFunc(gotDNS, func(a, b dnsEntry) int { return strings.Compare(a.ip, b.ip) })
			if !slices.EqualFunc(gotDNS, dns, func(a, b dnsEntry) bool { return a.ip == b.ip && slices.Equal(a.names, b.names) }) {
				return fmt.Errorf("%s XML of %s: DNS hosts %v, want %v", what, name, gotDNS, dns)
			}
		}
		return nil
	}
}

// networkHCL is libvirt_network.n named name, of mode, on v4.0/24, with more lines.
func networkHCL(name, mode, v4 string, lines ...string) string {
	return resourceHCL("libvirt_network", "n", append([]string{attr("name", name), attr("mode", mode),
		attr("addresses", hcl(fmt.Sprintf("[%q]", v4+".0/24")))}, lines...)...)
}

// dhcpHCL is a dhcp block with the host entries hosts (an HCL list; "" leaves them
// unmanaged).
func dhcpHCL(hosts string) string {
	if hosts == "" {
		return "dhcp {}"
	}
	return "dhcp {\n    hosts = " + hosts + "\n  }"
}

type netConf struct {
	name, mode, v4, v6 string
	autostart          bool
	dhcpHosts          string // HCL list, "" = omitted
	dnsHosts           string
}

func (c netConf) String() string {
	hosts := ""
	if c.dhcpHosts != "" {
		hosts = "hosts = " + c.dhcpHosts
	}
	return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_network" "n" {
  name      = %q
  mode      = %q
  domain    = "tfacc.test"
  addresses = ["%s.0/24", "%s::/64"]
  autostart = %t
  dhcp {
    ranges = [{ start = "%s.100", end = "%s.199" }, { start = "%s::100", end = "%s::1ff" }]
    %s
  }
  dns {
    hosts = %s
  }
}
`, c.name, c.mode, c.v4, c.v6, c.autostart, c.v4, c.v4, c.v6, c.v6, hosts, c.dnsHosts)
}

func TestAccNetwork_lifecycle(t *testing.T) {
	acctest.RequireAcc(t)
	name, v4 := netTestName()
	v6 := fmt.Sprintf("fd00:%x:%x", rand.IntN(0xffff)+1, rand.IntN(0xffff)+1)
	addrs := [][2]string{{v4 + ".1", "24"}, {v6 + "::1", "64"}}
	rng := []string{v4 + ".100", v4 + ".199", v6 + "::100", v6 + "::1ff"}
	conf := netConf{name: name, mode: "isolated", v4: v4, v6: v6,
		dnsHosts: fmt.Sprintf(`[{ ip = "%s.10", hostnames = ["db"] }]`, v4)}
	withHosts := conf
	withHosts.autostart = true
	withHosts.dhcpHosts = fmt.Sprintf(`[{ mac = "52:54:00:aa:cc:01", ip = "%s.50", hostname = "web" }]`, v4)
	withHosts.dnsHosts = fmt.Sprintf(`[{ ip = "%s.10", hostnames = ["db"] }, { ip = "%s::11", hostnames = ["cache", "cache6"] }]`, v4, v6)
	modified := withHosts
	// 01 loses its hostname (network-update modify), 02 is added.
	modified.dhcpHosts = fmt.Sprintf(`[{ mac = "52:54:00:aa:cc:01", ip = "%s.50" }, { mac = "52:54:00:aa:cc:02", ip = "%s.52", hostname = "api" }]`, v4, v4)
	modified.dnsHosts = fmt.Sprintf(`[{ ip = "%s.10", hostnames = ["db", "db1"] }]`, v4)
	moved := modified
	// 01 moves to another address (delete + add).
	moved.dhcpHosts = fmt.Sprintf(`[{ mac = "52:54:00:aa:cc:01", ip = "%s.51" }, { mac = "52:54:00:aa:cc:02", ip = "%s.52", hostname = "api" }]`, v4, v4)
	open := moved
	open.mode = "open"

	var before netLiveness
	var bridge string
	remember := func(s *terraform.State) error {
		bridge = s.RootModule().Resources["libvirt_network.n"].Primary.Attributes["bridge"]
		var err error
		before, err = readLiveness(name, bridge)
		return err
	}
	notRestarted := func(*terraform.State) error {
		now, err := readLiveness(name, bridge)
		if err != nil {
			return err
		}
		if now != before {
			return fmt.Errorf("network %s was restarted: dnsmasq pid / bridge ifindex %+v before, %+v after", name, before, now)
		}
		return nil
	}
	checkAutostart := func(want bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			st, err := acctest.Client(t).ReadNetwork(context.Background(), name)
			if err != nil {
				return err
			}
			if st.Autostart != want || !st.Active {
				return fmt.Errorf("network %s: autostart %t active %t, want autostart %t and active", name, st.Autostart, st.Active, want)
			}
			return nil
		}
	}
	hostStep := func(c netConf, hosts []netHost, dns []dnsEntry, more ...resource.TestCheckFunc) resource.TestStep {
		return resource.TestStep{Config: c.String(), ConfigPlanChecks: acctest.Does("libvirt_network.n", acctest.Update),
			Check: resource.ComposeAggregateTestCheckFunc(append(more, checkNetworkXML(t, name, "isolated", addrs, rng, hosts, dns), notRestarted)...)}
	}
	netTest(t, name, []resource.TestStep{
		{
			Config: conf.String(),
			Check: resource.ComposeAggregateTestCheckFunc(
				checkNetworkXML(t, name, "isolated", addrs, rng, nil, []dnsEntry{{v4 + ".10", []string{"db"}}}),
				checkAutostart(false),
				remember,
			),
			ConfigStateChecks: acctest.State("libvirt_network.n",
				"bridge", regexp.MustCompile(`^virbr\d+$`),
				"id", regexp.MustCompile(`^[0-9a-f-]{36}$`),
				"active", true,
				"dhcp.hosts", nil,
			),
			ConfigPlanChecks: acctest.Plans(),
		},
		{
			ResourceName:            "libvirt_network.n",
			ImportState:             true,
			ImportStateId:           name,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"timeouts"},
		},
		{
			// import { } block: the plan after import must be a no-op.
			ResourceName:    "libvirt_network.n",
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   name,
		},
		// DHCP and DNS host entries and autostart change in place, live and persistently,
		// without restarting the network.
		hostStep(withHosts, []netHost{{"52:54:00:aa:cc:01", v4 + ".50", "web"}},
			[]dnsEntry{{v4 + ".10", []string{"db"}}, {v6 + "::11", []string{"cache", "cache6"}}}, checkAutostart(true)),
		// Modify a DHCP host, add another; change a DNS host's names, remove another.
		hostStep(modified, []netHost{{"52:54:00:aa:cc:01", v4 + ".50", ""}, {"52:54:00:aa:cc:02", v4 + ".52", "api"}},
			[]dnsEntry{{v4 + ".10", []string{"db", "db1"}}}),
		hostStep(moved, []netHost{{"52:54:00:aa:cc:01", v4 + ".51", ""}, {"52:54:00:aa:cc:02", v4 + ".52", "api"}},
			[]dnsEntry{{v4 + ".10", []string{"db", "db1"}}}),
		{
			// A mode change replaces the network.
			Config:           open.String(),
			ConfigPlanChecks: acctest.Does("libvirt_network.n", acctest.Replace),
			Check: checkNetworkXML(t, name, "open", addrs, rng,
				[]netHost{{"52:54:00:aa:cc:01", v4 + ".51", ""}, {"52:54:00:aa:cc:02", v4 + ".52", "api"}},
				[]dnsEntry{{v4 + ".10", []string{"db", "db1"}}}),
		},
	})
}

// Default DHCP range, an inactive network, and host entries left alone when not managed.
func TestAccNetwork_defaultsInactive(t *testing.T) {
	acctest.RequireAcc(t)
	name, v4 := netTestName()
	config := func(active bool, hosts string) string {
		return acctest.ProviderBlock("") + networkHCL(name, "isolated", v4, attr("mtu", 1400), attr("active", active), dhcpHCL(hosts))
	}
	managed := fmt.Sprintf(`[{ mac = "52:54:00:aa:cc:0a", ip = "%s.10", hostname = "ten" }]`, v4)
	persistentHosts := func(want ...string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			x, err := networkXML(t, name, false)
			if err != nil {
				return err
			}
			var got []string
			for _, h := range x.IPs[0].DHCP.Hosts {
				got = append(got, h.MAC+"="+h.IP)
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("persistent DHCP hosts of %s: %v, want %v", name, got, want)
			}
			if x.MTU == nil || x.MTU.Size != 1400 {
				return fmt.Errorf("network %s: mtu %+v, want 1400", name, x.MTU)
			}
			return nil
		}
	}
	netTest(t, name, []resource.TestStep{
		{
			Config:            config(false, ""),
			ConfigPlanChecks:  acctest.Plans(acctest.PlanIs("libvirt_network.n", "dhcp.ranges", []any{map[string]any{"start": v4 + ".2", "end": v4 + ".254"}})),
			ConfigStateChecks: acctest.State("libvirt_network.n", "active", false),
		},
		{
			// A reservation made elsewhere is not this resource's business (dhcp.hosts omitted).
			PreConfig: func() {
				acctest.ChangeDHCPHost(t, name, netaddr.Add, netaddr.DHCPHost{MAC: "52:54:00:aa:cc:09", IP: v4 + ".9"})
			},
			Config:   config(false, ""),
			PlanOnly: true,
			Check:    persistentHosts("52:54:00:aa:cc:09=" + v4 + ".9"),
		},
		{
			// Managed here from now on: the whole list is ours (inactive: persistent only).
			Config:           config(false, managed),
			ConfigPlanChecks: acctest.Does("libvirt_network.n", acctest.Update),
			Check:            persistentHosts("52:54:00:aa:cc:0a=" + v4 + ".10"),
		},
		{
			Config:           config(true, managed),
			ConfigPlanChecks: acctest.Does("libvirt_network.n", acctest.Update),
			ConfigStateChecks: acctest.State("libvirt_network.n",
				"active", true,
				"bridge", regexp.MustCompile(`^virbr\d+$`),
			),
		},
	})
}

func TestNetwork_validation(t *testing.T) {
	cases := []struct {
		body string
		want string
	}{
		{`addresses = ["10.17.0.0/33"]`, `"10.17.0.0/33" is not a CIDR`},
		{`addresses = ["10.17.0.0/24", "10.17.0.128/25"]`, `10.17.0.128/25 overlaps 10.17.0.0/24`},
		{`addresses = ["FD00::/64"]`, `write it in canonical form, "fd00::/64"`},
		{"addresses = [\"10.17.0.0/24\"]\n dhcp {\n ranges = [{ start = \"10.18.0.10\", end = \"10.18.0.20\" }]\n }", `10.18.0.10 - 10.18.0.20 is outside the network's subnets (10.17.0.0/24)`},
		{"addresses = [\"10.17.0.0/24\"]\n dhcp {\n ranges = [{ start = \"10.17.0.20\", end = \"10.17.0.10\" }]\n }", `start 10.17.0.20 is after end 10.17.0.10`},
		{"addresses = [\"10.17.0.0/24\"]\n dhcp {\n ranges = [{ start = \"10.17.0.1\", end = \"10.17.0.10\" }]\n }", `includes the host's own address 10.17.0.1`},
		{"addresses = [\"10.17.0.0/24\"]\n dhcp {\n hosts = [{ mac = \"52:54:00:00:00:01\", ip = \"10.99.0.5\" }]\n }", `ip 10.99.0.5 is outside the DHCP subnet 10.17.0.0/24`},
		{"addresses = [\"10.17.0.0/24\"]\n dhcp {\n hosts = [{ mac = \"52:54:00:00:00:01\", ip = \"10.17.0.5\" }, { mac = \"52:54:00:00:00:02\", ip = \"10.17.0.5\" }]\n }", `ip 10.17.0.5 appears twice`},
		{"dhcp {}", `DHCP needs an address on the network`},
		{`mode = "bridge"`, `set bridge to its name`},
		{"mode = \"bridge\"\n bridge = \"br0\"\n addresses = [\"10.17.0.0/24\"]", `networks have no addresses of their own`},
		{`mode = "flat"`, `value must be one of`},
		{"addresses = [\"10.17.0.0/24\"]\n dns {\n hosts = [{ ip = \"10.17.0.5\", hostnames = [\"a\"] }, { ip = \"10.17.0.6\", hostnames = [\"a\"] }]\n }", `hostname a appears in hosts[0] and hosts[1]`},
		{"dns {\n forwarders = [{}]\n }", `forwarders[0]: give addr, domain or both`},
	}
	var planErrors []acctest.PlanError
	for _, c := range cases {
		planErrors = append(planErrors, acctest.PlanError{Name: c.want, Config: acctest.Resource("libvirt_network", `name = "tfacc-net-bad"`+"\n"+c.body),
			Want: acctest.ErrorText(c.want)})
	}
	acctest.ExpectPlanErrors(t, planErrors)
}

// netTestName is a network name and a /24 prefix for it (10.150-199.x: apart from
// acctest.CreateNetwork's 10.200-249.x).
func netTestName() (name, v4 string) {
	return acctest.RandomName("net"), fmt.Sprintf("10.%d.%d", 150+rand.IntN(50), rand.IntN(256))
}

// netTest runs steps on libvirt_network.n, named name; CheckDestroy asks libvirt that
// the network is gone.
func netTest(t *testing.T, name string, steps []resource.TestStep) {
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"network " + name: acctest.NetworkLookup(name)}),
		Steps:        steps,
	})
}
