package hostxml

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// routedNetwork is a routed network with every part beyond NAT a bridge network takes.
func routedNetwork() *Network {
	return &Network{
		Name: "lab", Mode: ModeRoute, Addresses: []string{"10.231.0.0/24", "fd00:231::/64"},
		Routes: []Route{{Address: "10.232.0.0/24", Gateway: "10.231.0.2", Metric: 5}, {Address: "fd00:232::/64", Gateway: "fd00:231::2"}},
		DNS: &DNS{Enabled: true, ManageHosts: true,
			TXTs: []TXT{{Name: "info", Value: "hello"}},
			SRVs: []SRV{{Service: "ldap", Protocol: "tcp", Domain: "x.test", Target: "ldap.x.test", Port: 389, Priority: 10, Weight: 5}, {Service: "kerb", Protocol: "udp"}}},
		Bandwidth:      &Bandwidth{Inbound: &BandwidthLimit{Average: 1000, Peak: 2000, Burst: 512}, Outbound: &BandwidthLimit{Average: 500}},
		PortGroups:     []PortGroup{{Name: "a", Default: true, Bandwidth: &Bandwidth{Inbound: &BandwidthLimit{Average: 100}}}, {Name: "b"}},
		DnsmasqOptions: []string{"log-queries"},
	}
}

// What libvirt 9.0 returns for routedNetwork (virsh net-dumpxml --inactive).
const routedFixture = `<network xmlns:dnsmasq='http://libvirt.org/schemas/network/dnsmasq/1.0'>
  <name>lab</name>
  <uuid>42586f9f-46e6-4c98-8207-1f31f8d5cc61</uuid>
  <forward mode='route'/>
  <bridge name='virbr1' stp='on' delay='0'/>
  <mac address='52:54:00:d9:95:b6'/>
  <dns>
    <txt name='info' value='hello'/>
    <srv service='ldap' protocol='tcp' domain='x.test' target='ldap.x.test' port='389' priority='10' weight='5'/>
    <srv service='kerb' protocol='udp'/>
  </dns>
  <bandwidth>
    <inbound average='1000' peak='2000' burst='512'/>
    <outbound average='500'/>
  </bandwidth>
  <ip address='10.231.0.1' prefix='24'>
  </ip>
  <ip family='ipv6' address='fd00:231::1' prefix='64'>
  </ip>
  <route address='10.232.0.0' prefix='24' gateway='10.231.0.2' metric='5'/>
  <route family='ipv6' address='fd00:232::' prefix='64' gateway='fd00:231::2'/>
  <portgroup name='a' default='yes'>
    <bandwidth>
      <inbound average='100'/>
    </bandwidth>
  </portgroup>
  <portgroup name='b'>
  </portgroup>
  <dnsmasq:options>
    <dnsmasq:option value='log-queries'/>
  </dnsmasq:options>
</network>`

func TestNetworkBeyondNATRoundTrip(t *testing.T) {
	ovs := &Network{Name: "ovs", Mode: ModeBridge, Bridge: "ovsbr0", VirtualPort: &VirtualPort{Type: VirtualPortOVS},
		VLAN:       &VLAN{Tags: []uint{5}, Trunk: true, NativeTag: 7, NativeMode: "untagged"},
		PortGroups: []PortGroup{{Name: "g", VLAN: &VLAN{Tags: []uint{6, 8}, Trunk: true}, VirtualPort: &VirtualPort{Type: VirtualPortOVS, ProfileID: "gold"}}}}
	vepa := &Network{Name: "vepa", Mode: ModeVEPA, Forward: &Forward{Dev: "eth7", Interfaces: []string{"eth7", "eth8"}}}
	macvtap := &Network{Name: "mv", Mode: ModeBridge, Forward: &Forward{Dev: "eth9"}}
	hostdev := &Network{Name: "vf", Mode: ModeHostdev, Forward: &Forward{PF: "eth5"}, VLAN: &VLAN{Tags: []uint{5}}}
	for _, n := range []*Network{routedNetwork(), ovs, vepa, macvtap, hostdev} {
		if errs := n.Validate(); len(errs) > 0 {
			t.Fatalf("%s: Validate: %v", n.Name, errs)
		}
		d, err := n.Definition()
		if err != nil {
			t.Fatal(err)
		}
		doc, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseNetworkXML(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := NetworkFromDefinition(back)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, n) {
			t.Errorf("%s: round trip:\n got %+v\nwant %+v\n%s", n.Name, got, n, doc)
		}
		if len(back.Network.PortGroups) != len(n.PortGroups) {
			t.Errorf("%s: the embedded definition has %d port groups, want %d", n.Name, len(back.Network.PortGroups), len(n.PortGroups))
		}
	}
	// libvirt's own forms: the fixture reads as the spec.
	d, err := ParseNetworkXML(routedFixture)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NetworkFromDefinition(d)
	want := routedNetwork()
	want.Bridge = "virbr1"
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("fixture:\n got %+v (%v)\nwant %+v", got, err, want)
	}
	// A pool given as interfaces alone: libvirt makes the first one dev.
	x, _ := (&Network{Name: "v", Mode: ModeVEPA, Forward: &Forward{Interfaces: []string{"eth7", "eth8"}}}).ToXML()
	x.Forward.Dev = "eth7"
	if f := forwardFromXML(x.Forward); f.Dev != "eth7" || len(f.Interfaces) != 2 {
		t.Errorf("forward %+v", f)
	}
}

func TestNetworkBeyondNATValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(n *Network)
		want string
	}{
		{"route without gateway", func(n *Network) { n.Routes[0].Gateway = "" }, `routes: routes[0]: gateway "" must be an IP address`},
		{"route not canonical", func(n *Network) { n.Routes[0].Address = "10.232.0.1/24" }, "must be the network itself, written canonically: 10.232.0.0/24"},
		{"route gateway outside", func(n *Network) { n.Routes[0].Gateway = "10.9.0.1" }, "gateway 10.9.0.1 is outside the network's subnets"},
		{"route families", func(n *Network) { n.Routes[0].Gateway = "fd00:231::2" }, "different IP families"},
		{"two defaults", func(n *Network) { n.PortGroups[1].Default = true }, "port_groups[0] and port_groups[1] are both default"},
		{"same name", func(n *Network) { n.PortGroups[1].Name = "a" }, "are both named a"},
		{"vlan on a routed network", func(n *Network) { n.PortGroups[0].VLAN = &VLAN{Tags: []uint{4}} }, `mode = "route" cannot tag VLANs`},
		{"bandwidth without average", func(n *Network) { n.Bandwidth.Outbound = &BandwidthLimit{Peak: 5} }, "outbound needs average_kib"},
		{"srv protocol", func(n *Network) { n.DNS.SRVs[0].Protocol = "sctp" }, "srv[0]: protocol must be tcp or udp"},
		{"txt twice", func(n *Network) { n.DNS.TXTs = append(n.DNS.TXTs, TXT{Name: "info", Value: "x"}) }, "txt[0] and txt[1] are both named info"},
		{"dnsmasq line", func(n *Network) { n.DnsmasqOptions = []string{"a\nb"} }, "must be one dnsmasq.conf line"},
		{"macvtap without pool", func(n *Network) { *n = Network{Name: "m", Mode: ModePrivate} }, `mode = "private" takes its guests' links from a pool of host links: set forward.dev`},
		{"macvtap with addresses", func(n *Network) { n.Mode, n.Forward, n.DNS, n.Routes = ModeVEPA, &Forward{Dev: "eth0"}, nil, nil },
			`mode = "vepa" networks put guests straight on host links, with no bridge, addresses, DHCP or DNS of their own: remove addresses`},
		{"hostdev without pf", func(n *Network) { *n = Network{Name: "h", Mode: ModeHostdev, Forward: &Forward{Dev: "eth0"}} }, "set forward.pf"},
		{"bridge and forward", func(n *Network) {
			*n = Network{Name: "b", Mode: ModeBridge, Bridge: "br0", Forward: &Forward{Dev: "eth0"}}
		}, "keep one of them"},
		{"dev not first", func(n *Network) {
			*n = Network{Name: "b", Mode: ModeVEPA, Forward: &Forward{Dev: "eth0", Interfaces: []string{"eth1", "eth0"}}}
		}, "dev eth0 must be the first of interfaces"},
		{"nat with interfaces", func(n *Network) { n.Mode, n.Forward = ModeNAT, &Forward{Interfaces: []string{"eth0"}} }, "takes only forward.dev"},
		{"nat with an empty forward", func(n *Network) { n.Mode, n.Forward = ModeNAT, &Forward{} }, "the forward block sets nothing"},
		{"unknown mode", func(n *Network) { n.Mode = "macvtap" }, `mode: "macvtap" is not one of`},
	} {
		n := routedNetwork()
		c.edit(n)
		var got []string
		for _, e := range n.Validate() {
			got = append(got, e.Error())
		}
		if !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("%s: errors %q, want one with %q", c.name, got, c.want)
		}
	}
}

func TestNetworkLiveChanges(t *testing.T) {
	have, want := routedNetwork(), routedNetwork()
	want.PortGroups = []PortGroup{{Name: "b", Default: true}, {Name: "c", Bandwidth: &Bandwidth{Outbound: &BandwidthLimit{Average: 9}}}}
	want.DNS.TXTs = []TXT{{Name: "info", Value: "bye"}}
	want.DNS.SRVs = want.DNS.SRVs[:1]
	if !InPlace(have, want) {
		t.Fatal("port groups and records should change in place")
	}
	var got []string
	for _, c := range LiveChanges(have, want) {
		got = append(got, c.String())
	}
	wantOps := []string{"delete portgroup port group a", "delete dns-srv DNS SRV _kerb._udp ", "delete dns-txt DNS TXT info",
		"modify portgroup port group b", "add portgroup port group c", "add dns-txt DNS TXT info"}
	if !reflect.DeepEqual(got, wantOps) {
		t.Errorf("LiveChanges:\n got %q\nwant %q", got, wantOps)
	}
	// The forward pool: dev alone is a pool of one.
	a := &Network{Name: "m", Mode: ModeBridge, Forward: &Forward{Dev: "eth1"}}
	b := &Network{Name: "m", Mode: ModeBridge, Forward: &Forward{Dev: "eth1", Interfaces: []string{"eth1", "eth2"}}}
	ch := LiveChanges(a, b)
	if !InPlace(a, b) || len(ch) != 1 || ch[0].Op != netaddr.Add || ch[0].String() != "add forward-interface forward interface eth2" {
		t.Errorf("forward pool changes %v", ch)
	}
	// DHCP ranges: from some to others in place (new ones first), the last one removed is a replace.
	r1 := &Network{Name: "d", Mode: ModeNAT, Addresses: []string{"fd00:1::/64", "10.1.0.0/24"}, DHCP: &DHCP{Enabled: true, Ranges: []netaddr.Range{rng("10.1.0.2", "10.1.0.254")}}}
	r2 := &Network{Name: "d", Mode: ModeNAT, Addresses: []string{"fd00:1::/64", "10.1.0.0/24"}, DHCP: &DHCP{Enabled: true, Ranges: []netaddr.Range{rng("10.1.0.100", "10.1.0.199")}}}
	ch = LiveChanges(r1, r2)
	if !InPlace(r1, r2) || len(ch) != 2 || ch[0].String() != "add ip-dhcp-range DHCP range 10.1.0.100-10.1.0.199" || ch[0].Parent != 1 || ch[1].Op != netaddr.Delete {
		t.Errorf("range changes %v", ch)
	}
	r2.DHCP.Ranges = nil
	if InPlace(r1, r2) {
		t.Error("removing the last range changes in place, want a replace")
	}
	for _, edit := range []func(n *Network){
		func(n *Network) { n.Routes = nil },
		func(n *Network) { n.DnsmasqOptions = nil },
		func(n *Network) { n.Bandwidth = nil },
	} {
		n := routedNetwork()
		edit(n)
		if InPlace(routedNetwork(), n) {
			t.Errorf("%+v changes in place, want a replace", n)
		}
	}
}
