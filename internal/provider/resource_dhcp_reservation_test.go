package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// reservationConfig is libvirt_dhcp_reservation.r of mac to ip on network, with
// hostname unless it is "".
func reservationConfig(network, mac, ip, hostname string) string {
	lines := []string{attr("network", network), attr("mac", mac), attr("ip", ip)}
	if hostname != "" {
		lines = append(lines, attr("hostname", hostname))
	}
	return acctest.ProviderBlock("") + resourceHCL("libvirt_dhcp_reservation", "r", lines...)
}

// checkHost asks libvirt for the network's host entries, persistent and (when running)
// live, and compares them with want (nil: no entry for mac).
func checkHost(t *testing.T, network, mac string, want *netaddr.DHCPHost) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		ctx := acctest.Ctx(t)
		n, err := acctest.Client(t).ReadNetworkDHCP(ctx, network)
		if err != nil {
			return err
		}
		for what, hosts := range map[string][]netaddr.DHCPHost{"persistent": n.Hosts, "live": n.Live} {
			if what == "live" && !n.Active {
				continue
			}
			var got *netaddr.DHCPHost
			for i := range hosts {
				if hosts[i].MAC == mac {
					got = &hosts[i]
				}
			}
			switch {
			case want == nil && got != nil:
				return fmt.Errorf("%s XML of %s still has host %v", what, network, *got)
			case want != nil && (got == nil || *got != *want):
				return fmt.Errorf("%s XML of %s: host entry %v, want %v", what, network, got, *want)
			}
		}
		return nil
	})
}

func TestAccDHCPReservation_live(t *testing.T) {
	acctest.RequireAcc(t)
	net := acctest.CreateNetwork(t, true)
	mac := "52:54:00:aa:bb:01"
	reservationTest(t, net.Name, mac, []resource.TestStep{
		{
			Config:            reservationConfig(net.Name, mac, net.Addr(10), "web"),
			Check:             checkHost(t, net.Name, mac, &netaddr.DHCPHost{MAC: mac, IP: net.Addr(10), Name: "web"}),
			ConfigStateChecks: acctest.State("libvirt_dhcp_reservation.r", "id", net.Name+"/"+mac),
			ConfigPlanChecks:  acctest.Plans(),
		},
		{
			ResourceName:            "libvirt_dhcp_reservation.r",
			ImportState:             true,
			ImportStateId:           net.Name + "/" + strings.ToUpper(mac),
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"timeouts"},
		},
		{
			// ip and hostname change in place, live and persistently.
			Config:           reservationConfig(net.Name, mac, net.Addr(11), ""),
			ConfigPlanChecks: acctest.Plans(acctest.Planned("libvirt_dhcp_reservation.r", acctest.Update)),
			Check:            checkHost(t, net.Name, mac, &netaddr.DHCPHost{MAC: mac, IP: net.Addr(11)}),
		},
		{
			// Removed out of band: the next plan puts it back.
			PreConfig: func() {
				acctest.ChangeDHCPHost(t, net.Name, netaddr.Delete, netaddr.DHCPHost{MAC: mac, IP: net.Addr(11)})
			},
			Config:           reservationConfig(net.Name, mac, net.Addr(11), ""),
			ConfigPlanChecks: acctest.Before(acctest.Planned("libvirt_dhcp_reservation.r", acctest.Create)),
			Check:            checkHost(t, net.Name, mac, &netaddr.DHCPHost{MAC: mac, IP: net.Addr(11)}),
		},
	})
}

// An inactive network takes the entry in its persistent definition only.
func TestAccDHCPReservation_inactiveNetwork(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.Parallel(t) // the network is made inactive in the parallel phase (acctest.Parallel)
	net := acctest.CreateNetwork(t, false)
	mac := "52:54:00:aa:bb:02"
	reservationTest(t, net.Name, mac, []resource.TestStep{{
		Config:           reservationConfig(net.Name, mac, net.Addr(20), "db"),
		Check:            checkHost(t, net.Name, mac, &netaddr.DHCPHost{MAC: mac, IP: net.Addr(20), Name: "db"}),
		ConfigPlanChecks: acctest.Plans(),
	}})
}

func TestAccDHCPReservation_badInput(t *testing.T) {
	acctest.RequireAcc(t)
	net := acctest.CreateNetwork(t, true)
	other := "52:54:00:aa:bb:03"
	acctest.ChangeDHCPHost(t, net.Name, netaddr.Add, netaddr.DHCPHost{MAC: other, IP: net.Addr(30)})
	mac := "52:54:00:aa:bb:04"
	reservationTest(t, net.Name, mac, []resource.TestStep{
		{Config: reservationConfig(net.Name, mac, "10.1.2.3", ""), ExpectError: acctest.ErrorText("ip 10.1.2.3 is outside network " + net.Name + "'s subnets (" + net.Prefix + ".0/24)")},
		{Config: reservationConfig(net.Name, mac, net.Addr(1), ""), ExpectError: acctest.ErrorText("is network " + net.Name + "'s own address (the guests' gateway)")},
		{Config: reservationConfig(net.Name, mac, net.Addr(255), ""), ExpectError: acctest.ErrorText("is the broadcast address of " + net.Prefix + ".0/24")},
		{Config: reservationConfig(net.Name, mac, net.Addr(30), ""), ExpectError: acctest.ErrorText("is already reserved for MAC " + other)},
		{Config: reservationConfig(net.Name, other, net.Addr(31), ""), ExpectError: acctest.ErrorText("already has a DHCP host entry for MAC " + other)},
		{Config: reservationConfig("tfacc-no-such-net", mac, "10.0.0.5", ""), ExpectError: acctest.ErrorText(`Network "tfacc-no-such-net" does not exist`)},
	})
}

func TestDHCPReservation_validation(t *testing.T) {
	acctest.RunUnit(t, resource.TestCase{
		Steps: []resource.TestStep{
			{Config: reservationConfig("default", "52:54:00:zz:00:01", "10.0.0.5", ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)mac.*six colon-separated hex pairs`)},
			{Config: reservationConfig("default", "52:54:00:AA:00:01", "10.0.0.5", ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Upper-case MAC address.*52:54:00:aa:00:01`)},
			{Config: reservationConfig("default", "52:54:00:aa:00:01", "10.0.0.500", ""), PlanOnly: true, ExpectError: regexp.MustCompile(`must be an IPv4 address`)},
			{Config: reservationConfig("default", "52:54:00:aa:00:01", "10.0.0.5", "bad_name"), PlanOnly: true, ExpectError: regexp.MustCompile(`host name label`)},
		},
	})
}

// A network whose first <ip> element is an IPv6 one with DHCP: the entry must land in the
// IPv4 element that holds its address (libvirt's own choice would be the IPv6 one).
func TestAccDHCPReservation_ipv6First(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("net6")
	dhcp := func(start, end string) *libvirtxml.NetworkDHCP {
		return &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{{Start: start, End: end}}}
	}
	acctest.DefineNetwork(t, &libvirtxml.Network{Name: name, IPs: []libvirtxml.NetworkIP{
		{Family: "ipv6", Address: "fd00:5eed:7::1", Prefix: 64, DHCP: dhcp("fd00:5eed:7::100", "fd00:5eed:7::1ff")},
		{Address: "10.199.42.1", Prefix: 24, DHCP: dhcp("10.199.42.100", "10.199.42.199")},
	}}, true)
	mac := "52:54:00:aa:bb:06"
	reservationTest(t, name, mac, []resource.TestStep{{
		Config:           reservationConfig(name, mac, "10.199.42.10", "v4"),
		Check:            checkHost(t, name, mac, &netaddr.DHCPHost{MAC: mac, IP: "10.199.42.10", Name: "v4"}),
		ConfigPlanChecks: acctest.Plans(),
	}})
}

// reservationTest runs steps on libvirt_dhcp_reservation.r for mac on network;
// CheckDestroy asks libvirt that the entry is gone.
func reservationTest(t *testing.T, network, mac string, steps []resource.TestStep) {
	acctest.Run(t, resource.TestCase{
		CheckDestroy: checkHost(t, network, mac, nil),
		Steps:        steps,
	})
}
