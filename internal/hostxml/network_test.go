package hostxml

import (
	"encoding/xml"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

func rng(a, b string) netaddr.Range {
	return netaddr.Range{Start: netip.MustParseAddr(a), End: netip.MustParseAddr(b)}
}

// mustXML is the compact XML of x (libvirtxml's Marshal indents).
func mustXML(t *testing.T, x any) string {
	t.Helper()
	b, err := xml.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNetworkToXML(t *testing.T) {
	n := &Network{
		Name: "lab", Mode: ModeNAT, MTU: 9000, Domain: "lab.test",
		Addresses: []string{"fd00:17::/64", "10.17.0.0/24"},
		DHCP: &DHCP{Enabled: true, ManageHosts: true,
			Ranges: []netaddr.Range{rng("fd00:17::100", "fd00:17::1ff"), rng("10.17.0.100", "10.17.0.199")}, // in the order of addresses, as read back
			Hosts:  []netaddr.DHCPHost{{MAC: "52:54:00:00:00:01", IP: "10.17.0.10", Name: "web"}}},
		DNS: &DNS{Enabled: true, ManageHosts: true,
			Hosts:      []netaddr.DNSHost{{IP: "10.17.0.20", Hostnames: []string{"db", "db1"}}},
			Forwarders: []Forwarder{{Addr: "1.1.1.1"}, {Domain: "corp.example", Addr: "10.0.0.53"}}},
	}
	if errs := n.Validate(); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	x, err := n.ToXML()
	if err != nil {
		t.Fatal(err)
	}
	got := mustXML(t, x)
	for _, want := range []string{
		`<forward mode="nat"></forward>`, `<mtu size="9000"></mtu>`, `<domain name="lab.test"></domain>`,
		`<dns enable="yes"><forwarder addr="1.1.1.1"></forwarder><forwarder domain="corp.example" addr="10.0.0.53"></forwarder><host ip="10.17.0.20"><hostname>db</hostname><hostname>db1</hostname></host></dns>`,
		`<ip address="fd00:17::1" family="ipv6" prefix="64"><dhcp><range start="fd00:17::100" end="fd00:17::1ff"></range></dhcp></ip>`,
		`<ip address="10.17.0.1" prefix="24"><dhcp><range start="10.17.0.100" end="10.17.0.199"></range><host mac="52:54:00:00:00:01" name="web" ip="10.17.0.10"></host></dhcp></ip>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("network XML lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<bridge") {
		t.Errorf("no bridge given, yet XML names one:\n%s", got)
	}
	// The DHCP host belongs to the second <ip> element: network-update's parentIndex.
	if ss, err := netaddr.Subnets(x); err != nil || netaddr.IndexFor(ss, "10.17.0.10") != 1 {
		t.Errorf("IndexFor = %d (%v), want 1", netaddr.IndexFor(ss, "10.17.0.10"), err)
	}

	// Back from what libvirt returns, with everything it fills in by itself.
	x.UUID = "2f0c7a4e-7c1b-4b9e-9d1e-3f1f6d6c1a11"
	x.Bridge = &libvirtxml.NetworkBridge{Name: "virbr7", STP: "on", Delay: "0"}
	x.MAC = &libvirtxml.NetworkMAC{Address: "52:54:00:12:34:56"}
	x.Forward.NAT = &libvirtxml.NetworkForwardNAT{Ports: []libvirtxml.NetworkForwardNATPort{{Start: 1024, End: 65535}}}
	back, err := NetworkFromXML(x)
	if err != nil {
		t.Fatal(err)
	}
	n.Bridge = "virbr7"
	if !reflect.DeepEqual(back, n) {
		t.Errorf("NetworkFromXML:\n got %+v\nwant %+v", back, n)
	}
}

func TestNetworkModes(t *testing.T) {
	for _, c := range []struct {
		n    Network
		want string
		not  string
	}{
		{Network{Name: "iso", Mode: ModeIsolated, Addresses: []string{"10.1.0.0/24"}}, `<ip address="10.1.0.1" prefix="24">`, "<forward"},
		{Network{Name: "r", Mode: ModeRoute, Addresses: []string{"10.1.0.0/24"}}, `<forward mode="route">`, ""},
		{Network{Name: "o", Mode: ModeOpen, Addresses: []string{"10.1.0.0/24"}}, `<forward mode="open">`, ""},
		{Network{Name: "b", Mode: ModeBridge, Bridge: "br0"}, `<forward mode="bridge"></forward><bridge name="br0"></bridge>`, "<ip"},
	} {
		if errs := c.n.Validate(); len(errs) > 0 {
			t.Errorf("%s: Validate: %v", c.n.Name, errs)
		}
		x, err := c.n.ToXML()
		if err != nil {
			t.Fatal(err)
		}
		got := mustXML(t, x)
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s: XML %s\nwant %s and no %q", c.n.Name, got, c.want, c.not)
		}
		back, err := NetworkFromXML(x)
		if err != nil || back.Mode != c.n.Mode {
			t.Errorf("%s: read back mode %v, %v", c.n.Name, back, err)
		}
	}
}

// Hand-written networks (virsh net-define) often use netmask form; <forward/> means nat.
func TestNetworkFromXMLNetmask(t *testing.T) {
	var x libvirtxml.Network
	if err := x.Unmarshal(`<network><name>default</name><forward/><bridge name='virbr0'/>
<ip address='192.168.122.1' netmask='255.255.255.0'><dhcp><range start='192.168.122.2' end='192.168.122.254'/>
<host mac='52:54:00:AA:00:01' ip='192.168.122.5'/></dhcp></ip></network>`); err != nil {
		t.Fatal(err)
	}
	n, err := NetworkFromXML(&x)
	if err != nil {
		t.Fatal(err)
	}
	if n.Mode != ModeNAT || !reflect.DeepEqual(n.Addresses, []string{"192.168.122.0/24"}) ||
		!reflect.DeepEqual(n.DHCP.Hosts, []netaddr.DHCPHost{{MAC: "52:54:00:aa:00:01", IP: "192.168.122.5"}}) {
		t.Errorf("got %+v %+v", n, n.DHCP)
	}
}

func TestNetworkValidate(t *testing.T) {
	base := func() Network {
		return Network{Name: "n", Mode: ModeIsolated, Addresses: []string{"10.1.0.0/24", "fd00:1::/64"}}
	}
	cases := []struct {
		mod  func(*Network)
		attr string
		want string
	}{
		{func(n *Network) {
			n.DHCP = &DHCP{Enabled: true, Ranges: []netaddr.Range{rng("10.1.0.10", "fd00:1::20")}}
		}, "dhcp", "different families"},
		{func(n *Network) { n.DHCP = &DHCP{Enabled: true, Ranges: []netaddr.Range{rng("10.1.0.0", "10.1.0.20")}} }, "dhcp", "network or broadcast"},
		{func(n *Network) {
			n.DHCP = &DHCP{Enabled: false, Ranges: []netaddr.Range{rng("10.1.0.2", "10.1.0.20")}}
		}, "dhcp", "need enabled = true"},
		{func(n *Network) {
			n.Addresses = append(n.Addresses, "10.2.0.0/24")
			n.DHCP = &DHCP{Enabled: true, Ranges: []netaddr.Range{rng("10.1.0.2", "10.1.0.20"), rng("10.2.0.2", "10.2.0.20")}}
		}, "dhcp", "one subnet per address family"},
		{func(n *Network) {
			n.DHCP = &DHCP{Enabled: true, Hosts: []netaddr.DHCPHost{{MAC: "52:54:00:AA:00:01", IP: "10.1.0.5"}}}
		}, "dhcp", "lower-case hex"},
		{func(n *Network) {
			n.DHCP = &DHCP{Enabled: true, Hosts: []netaddr.DHCPHost{{MAC: "52:54:00:aa:00:01", IP: "10.1.0.1"}}}
		}, "dhcp", "the host's own"},
		{func(n *Network) { n.Addresses = []string{"fd00:1::/64"}; n.DHCP = &DHCP{Enabled: true} }, "dhcp", "no IPv4 address to take a default"},
		{func(n *Network) { n.DNS = &DNS{Enabled: true, Hosts: []netaddr.DNSHost{{IP: "10.1.0.5"}}} }, "dns", "at least one hostname"},
		{func(n *Network) {
			n.DNS = &DNS{Enabled: true, Hosts: []netaddr.DNSHost{{IP: "10.1.0.5", Hostnames: []string{"bad_name"}}}}
		}, "dns", "not a host name"},
		{func(n *Network) { n.Bridge = "a-bridge-name-too-long" }, "bridge", "at most 15"},
		{func(n *Network) { n.MTU = 10 }, "mtu", "outside 68-65535"},
		{func(n *Network) {
			n.Mode = ModeBridge
			n.Bridge = "br0"
			n.Addresses = nil
			n.DNS = &DNS{Enabled: true}
		}, "dns", "no DNS server of their own"},
	}
	for i, c := range cases {
		n := base()
		c.mod(&n)
		errs := n.Validate()
		found := false
		for _, e := range errs {
			if e.Attr == c.attr && strings.Contains(e.Detail, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("case %d: errors %v, want one on %s containing %q", i, errs, c.attr, c.want)
		}
	}
}

// WantedHosts: only the lists the spec manages are handed to the diff.
func TestNetworkWantedHosts(t *testing.T) {
	n := &Network{DHCP: &DHCP{Hosts: []netaddr.DHCPHost{{MAC: "52:54:00:00:00:01", IP: "10.1.0.5"}}},
		DNS: &DNS{ManageHosts: true, Hosts: []netaddr.DNSHost{{IP: "10.1.0.5", Hostnames: []string{"a"}}}}}
	w := n.WantedHosts()
	if w.DHCP || w.DHCPHosts != nil || !w.DNS || len(w.DNSHosts) != 1 {
		t.Errorf("WantedHosts = %+v: want DNS only", w)
	}
}

// FuzzNetworkFromXML: whatever libvirt (or a hand edit) puts in a definition, reading it
// back never panics, and what it reads builds XML again.
func FuzzNetworkFromXML(f *testing.F) {
	f.Add(`<network><name>a</name><forward mode='nat'/><ip address='10.0.0.1' prefix='24'><dhcp><range start='10.0.0.2' end='10.0.0.9'/></dhcp></ip></network>`)
	f.Add(`<network><name>b</name><ip address='10.0.0.1' netmask='255.255.0.0'/><ip family='ipv6' address='fd00::1' prefix='64'/><dns enable='no'/></network>`)
	f.Add(`<network><name>c</name><ip address='10.0.0.1'/></network>`)
	f.Add(routedFixture)
	f.Add(`<network><name>d</name><forward dev='eth7' mode='vepa'><interface dev='eth7'/><interface dev='eth8'/></forward></network>`)
	f.Fuzz(func(t *testing.T, doc string) {
		x, err := ParseNetworkXML(doc)
		if err != nil {
			return
		}
		n, err := NetworkFromDefinition(x)
		if err != nil || !validMode(n.Mode) {
			return
		}
		if len(n.Validate()) == 0 {
			d, err := n.Definition()
			if err != nil {
				t.Fatalf("valid spec %+v does not build: %v", n, err)
			}
			out, err := d.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseNetworkXML(out)
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			// The parts beyond NAT come back as they were.
			if m, err := NetworkFromDefinition(back); err != nil || !reflect.DeepEqual(beyondNAT(m), beyondNAT(n)) {
				t.Errorf("round trip of a valid spec:\n got %+v (%v)\nwant %+v", beyondNAT(m), err, beyondNAT(n))
			}
		}
	})
}

func validMode(m string) bool {
	for _, x := range Modes {
		if x == m {
			return true
		}
	}
	return false
}

// beyondNAT is the parts of n beyond NAT, empty lists as nil.
func beyondNAT(n *Network) []any {
	if n == nil {
		return nil
	}
	var srv []SRV
	var txt []TXT
	if n.DNS != nil {
		srv, txt = n.DNS.SRVs, n.DNS.TXTs
	}
	out := []any{n.Forward, n.VLAN, n.VirtualPort, n.Bandwidth}
	for _, l := range []any{n.Routes, n.PortGroups, n.DnsmasqOptions, srv, txt} {
		if reflect.ValueOf(l).Len() == 0 {
			l = nil
		}
		out = append(out, l)
	}
	return out
}
