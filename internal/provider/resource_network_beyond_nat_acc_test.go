package provider_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// One booted guest on two networks beyond NAT: a routed network with a static route
// (libvirt adds it on the host: `ip route` shows it through the guest's network) and a
// macvtap network in bridge mode on one end of a veth pair in libvirtd's namespace (the
// guest's NIC is a macvtap link on the veth; it pings the far end). Then port groups,
// DNS TXT/SRV records, a changed DHCP range and a second link of the macvtap pool are
// applied live: the same
// bridge, the guest still connected and pinging, both the live and the persistent
// definitions show them. The networks import with their generated configuration
// planning clean, and a plan that replaces the routed network warns naming the guest.
func TestAccNetworkBeyondNAT_booted(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "netx")
	routed, v4 := netTestName()
	mv := acctest.RandomName("netmv")
	// TEST-NET-3: never leaves the namespace, and not TestAccDomainMacvtap_booted's TEST-NET-1
	// (two veths with one subnet in the namespace would steal each other's replies).
	lower, peer := acctest.VethPair(t, "203.0.113.1/24")
	lower2, _ := acctest.VethPair(t, "198.51.100.1/24")
	dest := fmt.Sprintf("10.%d.%d.0/24", 200+rand.IntN(50), rand.IntN(256))
	macR := fmt.Sprintf("52:54:00:c1:%02x:%02x", rand.IntN(256), rand.IntN(256))
	macM := fmt.Sprintf("52:54:00:c2:%02x:%02x", rand.IntN(256), rand.IntN(256))
	config := func(live bool) string {
		routedLines := []string{attr("name", routed), attr("mode", "route"), attr("addresses", hcl(fmt.Sprintf(`["%s.0/24"]`, v4))),
			attr("routes", hcl(fmt.Sprintf(`[{ address = %q, gateway = "%s.2", metric = 5 }]`, dest, v4))), blockHCL("dhcp")}
		pool := fmt.Sprintf(`{ interfaces = [%q] }`, lower)
		if live {
			routedLines[len(routedLines)-1] = blockHCL("dhcp", attr("ranges", hcl(fmt.Sprintf(`[{ start = "%s.100", end = "%s.199" }]`, v4, v4))))
			routedLines = append(routedLines,
				attr("port_groups", hcl(`[{ name = "gold", default = true }, { name = "plain" }]`)),
				blockHCL("dns", attr("txt", hcl(`[{ name = "info", value = "beyond-nat" }]`)),
					attr("srv", hcl(`[{ service = "ldap", protocol = "tcp", target = "ldap.example", port = 389 }]`))))
			pool = fmt.Sprintf(`{ interfaces = [%q, %q] }`, lower, lower2)
		} else {
			routedLines = append(routedLines, blockHCL("dns", attr("txt", hcl(`[{ name = "old", value = "x" }]`))))
		}
		return acctest.ProviderBlock("") +
			resourceHCL("libvirt_network", "routed", routedLines...) +
			resourceHCL("libvirt_network", "mv", attr("name", mv), attr("mode", "bridge"), attr("forward", hcl(pool))) +
			resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 128),
				blockHCL("disk", attr("volume_id", disk)),
				blockHCL("network_interface", attr("network", hcl("libvirt_network.routed.name")), attr("mac", macR)),
				blockHCL("network_interface", attr("network", hcl("libvirt_network.mv.name")), attr("mac", macM)))
	}
	var id int32
	var bridge string
	// hostSide checks the route on the host, the guest's macvtap link on the veth, one
	// connection on each network and (after the first step) the same bridge.
	hostSide := acctest.HostCheck(func() error {
		d, err := acctest.SameRunningDomain(t, name, &id)
		if err != nil {
			return err
		}
		nics := d.Live.Devices.Interfaces
		if len(nics) != 2 || nics[1].Target == nil {
			return fmt.Errorf("want two NICs with targets in the live definition, got %+v", nics)
		}
		if _, err := acctest.MacvtapOn(nics[1].Target.Dev, lower); err != nil {
			return err
		}
		st, err := acctest.Client(t).ReadNetwork(acctest.Ctx(t), routed)
		if err != nil {
			return err
		}
		if bridge == "" {
			bridge = st.Live.Bridge.Name
		}
		// The guest's tap is still on the same bridge: no restart. (libvirt 9.0 resets the
		// connections count of a network a network-update changed live.)
		if out, err := acctest.NetnsIP("-o", "link", "show", "dev", nics[0].Target.Dev); st.Live.Bridge.Name != bridge || err != nil || !strings.Contains(out, "master "+bridge) {
			return fmt.Errorf("network %s: bridge %s, guest tap %q (%v), want the tap on %s (no restart)", routed, st.Live.Bridge.Name, out, err, bridge)
		}
		// What the plan's in-use warning names (libvirt's network ports).
		if users, err := acctest.Client(t).NetworkUsers(acctest.Ctx(t), routed); err != nil || !slices.Equal(users, []string{name}) {
			return fmt.Errorf("network %s: users %v (%v), want [%s]", routed, users, err, name)
		}
		out, err := acctest.NetnsIP("route", "show", dest)
		if err == nil && !strings.Contains(out, "via "+v4+".2 dev "+bridge) || !strings.Contains(out, "metric 5") {
			err = fmt.Errorf("host route to %s: %q (%v), want via %s.2 dev %s metric 5", dest, out, err, v4, bridge)
		}
		return err
	})
	// guest pings the host's end of each network through the NIC of that MAC.
	guest := acctest.HostCheck(func() error {
		acctest.WaitForAgent(t, name)
		script := `for i in $(seq 90); do [ -f /run/tinyguest/ready ] && break; sleep 1; done
nic() { for n in /sys/class/net/*; do grep -qx $1 $n/address && echo ${n##*/}; done; }
r=$(nic ` + macR + `); m=$(nic ` + macM + `)
[ -f /run/udhcpc.$m.pid ] && kill $(cat /run/udhcpc.$m.pid) 2>/dev/null
ip link set $m up; ip -4 addr flush dev $m; ip addr add 203.0.113.2/24 dev $m
p() { for i in $(seq 10); do ping -I $1 -c 1 -W 2 $2 >/dev/null 2>&1 && { echo ok; return; }; done; echo failed; }
echo routed=$(p $r ` + v4 + `.1) macvtap=$(p $m 203.0.113.1)`
		out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", script)
		if err == nil && strings.TrimSpace(out) != "routed=ok macvtap=ok" {
			err = fmt.Errorf("the guest says %q, want routed=ok macvtap=ok (peer %s)", out, peer)
		}
		return err
	})
	// both checks the live and the persistent XML of the networks with check.
	both := func(check func(r, m *libvirtxml.Network) error) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			for _, live := range []bool{true, false} {
				r, err := networkXML(t, routed, live)
				if err != nil {
					return err
				}
				m, err := networkXML(t, mv, live)
				if err != nil {
					return err
				}
				if err := check(r, m); err != nil {
					return fmt.Errorf("live=%t: %w", live, err)
				}
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name),
			"network " + routed: acctest.NetworkLookup(routed), "network " + mv: acctest.NetworkLookup(mv)}),
		Steps: []resource.TestStep{
			{
				Config:           config(false),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeTestCheckFunc(hostSide, guest, both(func(r, m *libvirtxml.Network) error {
					if len(r.Routes) != 1 || r.Routes[0].Gateway != v4+".2" || r.Routes[0].Metric != "5" {
						return fmt.Errorf("routes %+v", r.Routes)
					}
					if m.Forward == nil || m.Forward.Mode != "bridge" || len(m.Forward.Interfaces) != 1 || m.Forward.Interfaces[0].Dev != lower {
						return fmt.Errorf("macvtap forward %+v", m.Forward)
					}
					return nil
				})),
			},
			{
				Config: config(true),
				ConfigPlanChecks: acctest.Plans(acctest.Planned("libvirt_network.routed", acctest.Update),
					acctest.Planned("libvirt_network.mv", acctest.Update), acctest.Planned("libvirt_domain.test", acctest.Noop)),
				Check: resource.ComposeTestCheckFunc(hostSide, guest, both(func(r, m *libvirtxml.Network) error {
					names := []string{}
					for _, g := range r.PortGroups {
						names = append(names, g.Name+"/"+g.Default)
					}
					if !slices.Equal(names, []string{"gold/yes", "plain/"}) {
						return fmt.Errorf("port groups %v", names)
					}
					if r.DNS == nil || len(r.DNS.TXTs) != 1 || r.DNS.TXTs[0].Value != "beyond-nat" || len(r.DNS.SRVs) != 1 || r.DNS.SRVs[0].Port != 389 {
						return fmt.Errorf("DNS %+v", r.DNS)
					}
					if rs := r.IPs[0].DHCP.Ranges; len(rs) != 1 || rs[0].Start != v4+".100" || rs[0].End != v4+".199" {
						return fmt.Errorf("DHCP ranges %+v", rs)
					}
					if len(m.Forward.Interfaces) != 2 || m.Forward.Interfaces[1].Dev != lower2 {
						return fmt.Errorf("macvtap pool %+v", m.Forward.Interfaces)
					}
					return nil
				})),
			},
			{
				// Taking the guest's host link out of the macvtap pool is refused at plan time,
				// naming the guest (libvirt would refuse the network-update at apply time).
				Config: strings.Replace(config(true), fmt.Sprintf(`{ interfaces = [%q, %q] }`, lower, lower2),
					fmt.Sprintf(`{ interfaces = [%q] }`, lower2), 1),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(acctest.ErrorText(fmt.Sprintf("Host link %s of network %s is in use", lower, mv)).String() +
					`(.|\n)*` + acctest.ErrorText(fmt.Sprintf("on host link %s: %s.", lower, name)).String()),
			},
			{
				Config: config(true),
				Check: acctest.HostCheck(func() error {
					if g := generateConfigPlansClean(t, "libvirt_network.adopted", routed); !strings.Contains(g, dest) || !strings.Contains(g, "gold") {
						return fmt.Errorf("the generated configuration lacks the route or the port group:\n%s", g)
					}
					if g := generateConfigPlansClean(t, "libvirt_network.adopted", mv); !strings.Contains(g, lower2) {
						return fmt.Errorf("the generated configuration lacks the pool:\n%s", g)
					}
					// A change that replaces the routed network warns, naming the running guest.
					w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf("\nimport {\n  to = libvirt_network.adopted\n  id = %q\n}\n", routed)+
						resourceHCL("libvirt_network", "adopted", attr("name", routed), attr("mode", "route"), attr("addresses", hcl(fmt.Sprintf(`["%s.0/24"]`, v4))),
							attr("routes", hcl(fmt.Sprintf(`[{ address = %q, gateway = "%s.2", metric = 6 }]`, dest, v4)))))
					out, _ := w.run("plan", "-input=false")
					if !strings.Contains(out, "must be replaced") || !strings.Contains(strings.Join(strings.Fields(out), " "),
						fmt.Sprintf("Running domains have interfaces attached to network %s: %s.", routed, name)) {
						return fmt.Errorf("the plan of a replace does not warn naming %s:\n%s", name, out)
					}
					return nil
				}),
			},
		},
	})
}

// Define-only networks (active = false) with what cannot run here: bandwidth (the kernel
// has no sfq qdisc), an Open vSwitch bridge with VLANs (no openvswitch), an SR-IOV
// hostdev pool (no VFs), a passthrough pool with a VLAN, dnsmasq options and DNS
// records. Each is defined as written, plans clean, and imports; a network defined by
// virsh with every part imports with its generated configuration planning clean.
func TestAccNetworkBeyondNAT_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.Parallel(t)
	names := map[string]string{}
	for _, k := range []string{"shaped", "ovs", "vf", "pt"} {
		names[k] = acctest.RandomName("netd")
	}
	_, v4 := netTestName()
	config := acctest.ProviderBlock("") +
		resourceHCL("libvirt_network", "shaped", attr("name", names["shaped"]), attr("mode", "route"), attr("active", false),
			attr("addresses", hcl(fmt.Sprintf(`["%s.0/24"]`, v4))),
			attr("bandwidth", hcl(`{ inbound = { average_kib = 1000, peak_kib = 2000, burst_kib = 512 }, outbound = { average_kib = 500 } }`)),
			attr("port_groups", hcl(`[{ name = "slow", default = true, bandwidth = { inbound = { average_kib = 100 } } }, { name = "fast" }]`)),
			attr("dnsmasq_options", hcl(`["log-queries", "dhcp-option=option:ntp-server,`+v4+`.1"]`)),
			blockHCL("dns", attr("srv", hcl(`[{ service = "ldap", protocol = "tcp", target = "ldap.example", port = 389, priority = 10, weight = 5 }]`)),
				attr("txt", hcl(`[{ name = "info", value = "shaped" }]`)))) +
		resourceHCL("libvirt_network", "ovs", attr("name", names["ovs"]), attr("mode", "bridge"), attr("bridge", "ovsbr0"), attr("active", false),
			attr("virtualport", hcl(`{ type = "openvswitch" }`)), attr("vlan", hcl(`{ tags = [10] }`)),
			attr("port_groups", hcl(`[{ name = "trunk", vlan = { tags = [20, 30] }, virtualport = { type = "openvswitch", profile_id = "gold" } }]`))) +
		resourceHCL("libvirt_network", "vf", attr("name", names["vf"]), attr("mode", "hostdev"), attr("active", false),
			attr("forward", hcl(`{ pf = "enp1s0f0" }`)), attr("vlan", hcl(`{ tags = [42] }`))) +
		resourceHCL("libvirt_network", "pt", attr("name", names["pt"]), attr("mode", "passthrough"), attr("active", false),
			attr("forward", hcl(`{ dev = "eth7", interfaces = ["eth7", "eth8"] }`)))
	gone := map[string]acctest.Lookup{}
	steps := []resource.TestStep{{
		Config:           config,
		ConfigPlanChecks: acctest.Plans(),
		Check: acctest.HostCheck(func() error {
			st, err := acctest.Client(t).ReadNetwork(acctest.Ctx(t), names["shaped"])
			if err != nil {
				return err
			}
			if len(st.Doc.PortGroups) != 2 || st.Doc.PortGroups[0].Bandwidth == nil || st.Def.DnsmasqOptions == nil || len(st.Def.DnsmasqOptions.Option) != 2 {
				return fmt.Errorf("network %s: port groups %+v dnsmasq %+v", names["shaped"], st.Doc.PortGroups, st.Def.DnsmasqOptions)
			}
			return nil
		}),
	}}
	for _, k := range []string{"shaped", "ovs", "vf", "pt"} {
		gone["network "+names[k]] = acctest.NetworkLookup(names[k])
		steps = append(steps, resource.TestStep{ResourceName: "libvirt_network." + k, ImportState: true,
			ImportStateKind: resource.ImportBlockWithID, ImportStateId: names[k]})
	}
	steps = append(steps, resource.TestStep{
		Config: config,
		Check: acctest.HostCheck(func() error {
			byHand := acctest.RandomName("netv")
			acctest.DefineNetwork(t, &libvirtxml.Network{Name: byHand,
				Forward:        &libvirtxml.NetworkForward{Mode: "route"},
				IPs:            []libvirtxml.NetworkIP{{Address: v4 + ".1", Netmask: "255.255.255.0"}},
				Routes:         []libvirtxml.NetworkRoute{{Address: "10.250.1.0", Netmask: "255.255.255.0", Gateway: v4 + ".9"}},
				DNS:            &libvirtxml.NetworkDNS{TXTs: []libvirtxml.NetworkDNSTXT{{Name: "t", Value: "v"}}, SRVs: []libvirtxml.NetworkDNSSRV{{Service: "s", Protocol: "udp"}}},
				Bandwidth:      &libvirtxml.NetworkBandwidth{Inbound: &libvirtxml.NetworkBandwidthParams{Average: new(uint(10))}},
				PortGroups:     []libvirtxml.NetworkPortGroup{{Name: "a", Default: "yes"}, {Name: "b"}},
				DnsmasqOptions: &libvirtxml.NetworkDnsmasqOptions{Option: []libvirtxml.NetworkDnsmasqOption{{Value: "log-dhcp"}}}}, false)
			if g := generateConfigPlansClean(t, "libvirt_network.adopted", byHand); !strings.Contains(g, "10.250.1.0/24") || !strings.Contains(g, "log-dhcp") {
				return fmt.Errorf("the generated configuration lacks the route or the dnsmasq option:\n%s", g)
			}
			return nil
		}),
	})
	acctest.Run(t, resource.TestCase{CheckDestroy: acctest.CheckGone(gone), Steps: steps})
}
