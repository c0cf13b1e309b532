package provider

import (
	"fmt"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

// TestHostUpdates: the network-update calls that bring host entries to the spec, in a
// safe order, aimed at the right <ip> element, leaving unmanaged lists alone.
func TestHostUpdates(t *testing.T) {
	def := &libvirtxml.Network{
		Name: "n",
		DNS: &libvirtxml.NetworkDNS{Host: []libvirtxml.NetworkDNSHost{
			hostxml.DNSHostXML(hostxml.DNSHost{IP: "10.1.0.10", Hostnames: []string{"db"}}),
			hostxml.DNSHostXML(hostxml.DNSHost{IP: "10.1.0.11", Hostnames: []string{"old"}}),
		}},
		IPs: []libvirtxml.NetworkIP{
			{Address: "fd00::1", Family: "ipv6", Prefix: 64},
			{Address: "10.1.0.1", Prefix: 24, DHCP: &libvirtxml.NetworkDHCP{Hosts: []libvirtxml.NetworkDHCPHost{
				{MAC: "52:54:00:00:00:01", IP: "10.1.0.51", Name: "a"},
				{MAC: "52:54:00:00:00:02", IP: "10.1.0.52"},
				{MAC: "52:54:00:00:00:03", IP: "10.1.0.53"},
			}}},
		},
	}
	spec := &hostxml.Network{
		DHCP: &hostxml.DHCP{Enabled: true, ManageHosts: true, Hosts: []hostxml.DHCPHost{
			{MAC: "52:54:00:00:00:01", IP: "10.1.0.51"},                // hostname dropped: modify
			{MAC: "52:54:00:00:00:02", IP: "10.1.0.62"},                // moved: delete + add
			{MAC: "52:54:00:00:00:04", IP: "10.1.0.53", Hostname: "d"}, // takes 03's address: add after 03's delete
		}},
		DNS: &hostxml.DNS{Enabled: true, ManageHosts: true, Hosts: []hostxml.DNSHost{
			{IP: "10.1.0.10", Hostnames: []string{"db", "db1"}}, // changed: delete + add
			{IP: "10.1.0.12", Hostnames: []string{"old"}},       // takes 11's name: add after 11's delete
		}},
	}
	updates, err := hostUpdates(def, spec)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range updates {
		got = append(got, fmt.Sprintf("%s %d@%d %s", map[golibvirt.NetworkUpdateCommand]string{
			golibvirt.NetworkUpdateCommandDelete: "del", golibvirt.NetworkUpdateCommandModify: "mod", golibvirt.NetworkUpdateCommandAddLast: "add",
		}[u.Command], u.Section, u.ParentIndex, u.What))
	}
	dhcp, dns := int(golibvirt.NetworkSectionIPDhcpHost), int(golibvirt.NetworkSectionDNSHost)
	want := []string{
		fmt.Sprintf("del %d@1 DHCP host 52:54:00:00:00:02 (10.1.0.52)", dhcp),
		fmt.Sprintf("del %d@1 DHCP host 52:54:00:00:00:03 (10.1.0.53)", dhcp),
		fmt.Sprintf("del %d@-1 DNS host 10.1.0.10 [db]", dns),
		fmt.Sprintf("del %d@-1 DNS host 10.1.0.11 [old]", dns),
		fmt.Sprintf("mod %d@1 DHCP host 52:54:00:00:00:01 (10.1.0.51)", dhcp),
		fmt.Sprintf("add %d@1 DHCP host 52:54:00:00:00:02 (10.1.0.62)", dhcp),
		fmt.Sprintf("add %d@1 DHCP host 52:54:00:00:00:04 (10.1.0.53)", dhcp),
		fmt.Sprintf("add %d@-1 DNS host 10.1.0.10 [db db1]", dns),
		fmt.Sprintf("add %d@-1 DNS host 10.1.0.12 [old]", dns),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("updates:\n got %q\nwant %q", got, want)
	}

	// Unmanaged lists (null in the configuration) are left alone.
	spec.DHCP.ManageHosts, spec.DNS.ManageHosts = false, false
	if us, _ := hostUpdates(def, spec); len(us) != 0 {
		t.Errorf("unmanaged host lists produced updates: %+v", us)
	}
}
