package libvirt

import (
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// TestNetworkUpdateOf: netaddr's host changes become go-libvirt's network-update
// commands and sections; a DHCP entry keeps the <ip> element it is aimed at, a DNS entry
// has none.
func TestNetworkUpdateOf(t *testing.T) {
	dhcp := &netaddr.DHCPHost{MAC: "52:54:00:00:00:01", IP: "10.1.0.5", Name: "web"}
	dns := &netaddr.DNSHost{IP: "10.1.0.6", Hostnames: []string{"db", "db1"}}
	cases := []struct {
		ch      netaddr.HostChange
		command golibvirt.NetworkUpdateCommand
		section golibvirt.NetworkUpdateSection
		parent  int32
		xml     string
	}{
		{netaddr.HostChange{Op: netaddr.Add, DHCP: dhcp, Parent: 1}, golibvirt.NetworkUpdateCommandAddLast, golibvirt.NetworkSectionIPDhcpHost, 1,
			`<host mac="52:54:00:00:00:01" name="web" ip="10.1.0.5"></host>`},
		{netaddr.HostChange{Op: netaddr.Modify, DHCP: dhcp, Parent: -1}, golibvirt.NetworkUpdateCommandModify, golibvirt.NetworkSectionIPDhcpHost, -1,
			`<host mac="52:54:00:00:00:01" name="web" ip="10.1.0.5"></host>`},
		{netaddr.HostChange{Op: netaddr.Delete, DNS: dns, Parent: 3}, golibvirt.NetworkUpdateCommandDelete, golibvirt.NetworkSectionDNSHost, -1,
			`<host ip="10.1.0.6"><hostname>db</hostname><hostname>db1</hostname></host>`},
	}
	for _, c := range cases {
		u, err := networkUpdateOf(c.ch)
		if err != nil || u.command != c.command || u.section != c.section || u.parent != c.parent || u.xml != c.xml {
			t.Errorf("%v: %+v, %v; want %v %v %d %s", c.ch, u, err, c.command, c.section, c.parent, c.xml)
		}
	}
	for _, bad := range []netaddr.HostChange{{Op: netaddr.Add}, {Op: netaddr.Add, DHCP: dhcp, DNS: dns}, {Op: 9, DHCP: dhcp}} {
		if _, err := networkUpdateOf(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
