package hostxml

import (
	"encoding/xml"
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func TestParseAddress(t *testing.T) {
	cases := []struct {
		in, host, prefix, str, err string
	}{
		{in: "10.17.0.0/24", host: "10.17.0.1", prefix: "10.17.0.0/24", str: "10.17.0.0/24"},
		{in: "10.17.0.254/24", host: "10.17.0.254", prefix: "10.17.0.0/24", str: "10.17.0.254/24"},
		{in: "10.17.0.1/24", host: "10.17.0.1", prefix: "10.17.0.0/24", str: "10.17.0.0/24"},
		{in: "fd00:17::/64", host: "fd00:17::1", prefix: "fd00:17::/64", str: "fd00:17::/64"},
		{in: "10.17.0.255/24", err: "broadcast address"},
		{in: "10.17.0.0/31", err: "too long"},
		{in: "FD00::/64", err: "canonical form"},
		{in: "10.17.0.0", err: "not a CIDR"},
		{in: "10.17.0.0/33", err: "not a CIDR"},
	}
	for _, c := range cases {
		s, err := ParseAddress(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseAddress(%q) error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || s.Host.String() != c.host || s.Prefix.String() != c.prefix || s.String() != c.str {
			t.Errorf("ParseAddress(%q) = %v %v (%s), %v; want %s %s (%s)", c.in, s.Host, s.Prefix, s, err, c.host, c.prefix, c.str)
		}
	}
	if !EquivalentAddress("10.17.0.0/24", "10.17.0.1/24") || EquivalentAddress("10.17.0.0/24", "10.17.0.2/24") {
		t.Error("EquivalentAddress: 10.17.0.0/24 means host 10.17.0.1")
	}
}

func TestDefaultRanges(t *testing.T) {
	cases := []struct {
		addrs []string
		want  []Range
	}{
		{[]string{"10.17.0.0/24"}, []Range{{"10.17.0.2", "10.17.0.254"}}},
		{[]string{"fd00::/64", "192.168.5.0/26"}, []Range{{"192.168.5.2", "192.168.5.62"}}},
		{[]string{"10.17.0.254/24"}, []Range{{"10.17.0.1", "10.17.0.253"}}},
		{[]string{"10.17.0.100/24"}, []Range{{"10.17.0.101", "10.17.0.254"}}},
		{[]string{"fd00::/64"}, nil},
		{[]string{"10.17.0.0/30"}, []Range{{"10.17.0.2", "10.17.0.2"}}},
	}
	for _, c := range cases {
		if got := DefaultRanges(c.addrs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("DefaultRanges(%v) = %v, want %v", c.addrs, got, c.want)
		}
	}
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
			Ranges: []Range{{"fd00:17::100", "fd00:17::1ff"}, {"10.17.0.100", "10.17.0.199"}}, // in the order of addresses, as read back
			Hosts:  []DHCPHost{{MAC: "52:54:00:00:00:01", IP: "10.17.0.10", Hostname: "web"}}},
		DNS: &DNS{Enabled: true, ManageHosts: true,
			Hosts:      []DNSHost{{IP: "10.17.0.20", Hostnames: []string{"db", "db1"}}},
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
	if i := IPIndexFor(x, "10.17.0.10"); i != 1 {
		t.Errorf("IPIndexFor = %d, want 1", i)
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
		!reflect.DeepEqual(n.DHCP.Hosts, []DHCPHost{{MAC: "52:54:00:aa:00:01", IP: "192.168.122.5"}}) {
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
		{func(n *Network) { n.DHCP = &DHCP{Enabled: true, Ranges: []Range{{"10.1.0.10", "fd00:1::20"}}} }, "dhcp", "different families"},
		{func(n *Network) { n.DHCP = &DHCP{Enabled: true, Ranges: []Range{{"10.1.0.0", "10.1.0.20"}}} }, "dhcp", "network or broadcast"},
		{func(n *Network) { n.DHCP = &DHCP{Enabled: false, Ranges: []Range{{"10.1.0.2", "10.1.0.20"}}} }, "dhcp", "need enabled = true"},
		{func(n *Network) {
			n.Addresses = append(n.Addresses, "10.2.0.0/24")
			n.DHCP = &DHCP{Enabled: true, Ranges: []Range{{"10.1.0.2", "10.1.0.20"}, {"10.2.0.2", "10.2.0.20"}}}
		}, "dhcp", "one subnet per address family"},
		{func(n *Network) {
			n.DHCP = &DHCP{Enabled: true, Hosts: []DHCPHost{{MAC: "52:54:00:AA:00:01", IP: "10.1.0.5"}}}
		}, "dhcp", "lower-case hex"},
		{func(n *Network) {
			n.DHCP = &DHCP{Enabled: true, Hosts: []DHCPHost{{MAC: "52:54:00:aa:00:01", IP: "10.1.0.1"}}}
		}, "dhcp", "the host's own"},
		{func(n *Network) { n.Addresses = []string{"fd00:1::/64"}; n.DHCP = &DHCP{Enabled: true} }, "dhcp", "no IPv4 address to take a default"},
		{func(n *Network) { n.DNS = &DNS{Enabled: true, Hosts: []DNSHost{{IP: "10.1.0.5"}}} }, "dns", "at least one hostname"},
		{func(n *Network) {
			n.DNS = &DNS{Enabled: true, Hosts: []DNSHost{{IP: "10.1.0.5", Hostnames: []string{"bad_name"}}}}
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

func TestPoolXML(t *testing.T) {
	cases := []struct {
		p    Pool
		want string
	}{
		{Pool{Name: "images", Type: PoolDir, TargetPath: "/srv/images"},
			`<pool type="dir"><name>images</name><target><path>/srv/images</path></target></pool>`},
		{Pool{Name: "vg", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb", "/dev/sdc"}}},
			`<pool type="logical"><name>vg</name><target><path>/dev/vg</path></target><source><name>vg</name><device path="/dev/sdb"></device><device path="/dev/sdc"></device><format type="lvm2"></format></source></pool>`},
		{Pool{Name: "lv", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb"}, Name: "vmdata"}},
			`<pool type="logical"><name>lv</name><target><path>/dev/vmdata</path></target><source><name>vmdata</name><device path="/dev/sdb"></device><format type="lvm2"></format></source></pool>`},
		{Pool{Name: "nas", Type: PoolNetfs, TargetPath: "/mnt/nas", Source: &PoolSource{Host: "nas.lan", Dir: "/exports/vms"}},
			`<pool type="netfs"><name>nas</name><target><path>/mnt/nas</path></target><source><dir path="/exports/vms"></dir><host name="nas.lan"></host><format type="auto"></format></source></pool>`},
		{Pool{Name: "nas4", Type: PoolNetfs, TargetPath: "/mnt/nas", Source: &PoolSource{Host: "10.0.0.9", Dir: "/vms", Format: "nfs"}},
			`<pool type="netfs"><name>nas4</name><target><path>/mnt/nas</path></target><source><dir path="/vms"></dir><host name="10.0.0.9"></host><format type="nfs"></format></source></pool>`},
	}
	for _, c := range cases {
		if errs := c.p.Validate(); len(errs) > 0 {
			t.Errorf("%s: Validate: %v", c.p.Name, errs)
		}
		d := c.p.WithDefaults()
		x := d.ToXML()
		if got := mustXML(t, x); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.p.Name, got, c.want)
		}
		if back := PoolFromXML(x); !reflect.DeepEqual(*back, d) {
			t.Errorf("%s: PoolFromXML = %+v %+v, want %+v %+v", c.p.Name, back, back.Source, d, d.Source)
		}
	}
	// WithDefaults does not change its receiver's source.
	p := Pool{Name: "vg", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb"}}}
	_ = p.WithDefaults()
	if p.Source.Name != "" || p.TargetPath != "" {
		t.Errorf("WithDefaults changed the spec it was called on: %+v %+v", p, p.Source)
	}
}

func TestPoolValidate(t *testing.T) {
	cases := []struct {
		p    Pool
		attr string
		want string
	}{
		{Pool{Name: "d", Type: PoolDir}, "target_path", "needs target_path"},
		{Pool{Name: "d", Type: PoolDir, TargetPath: "/srv/d/"}, "target_path", "clean absolute path"},
		{Pool{Name: "d", Type: PoolDir, TargetPath: "/srv/d", Source: &PoolSource{Host: "x"}}, "source", "has no source"},
		{Pool{Name: "l", Type: PoolLogical}, "source", "needs source.devices"},
		{Pool{Name: "l", Type: PoolLogical, Source: &PoolSource{Devices: []string{"sdb"}}}, "source", "clean absolute path"},
		{Pool{Name: "l", Type: PoolLogical, Source: &PoolSource{Devices: []string{"/dev/sdb"}, Host: "h"}}, "source", "for netfs pools"},
		{Pool{Name: "l", Type: PoolLogical, TargetPath: "/dev/other", Source: &PoolSource{Devices: []string{"/dev/sdb"}}}, "target_path", `"/dev/l" here`},
		{Pool{Name: "n", Type: PoolNetfs, Source: &PoolSource{Host: "h", Dir: "/x"}}, "target_path", "needs target_path"},
		{Pool{Name: "n", Type: PoolNetfs, TargetPath: "/mnt/n", Source: &PoolSource{Dir: "/x"}}, "source", "needs source.host"},
		{Pool{Name: "n", Type: PoolNetfs, TargetPath: "/mnt/n", Source: &PoolSource{Host: "h", Dir: "/x", Devices: []string{"/dev/sdb"}}}, "source", "for logical pools"},
		{Pool{Name: "z", Type: "zfs"}, "type", "not one of dir, logical, netfs"},
	}
	for i, c := range cases {
		found := false
		errs := c.p.Validate()
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

// FuzzNetworkFromXML: whatever libvirt (or a hand edit) puts in a definition, reading it
// back never panics, and what it reads builds XML again.
func FuzzNetworkFromXML(f *testing.F) {
	f.Add(`<network><name>a</name><forward mode='nat'/><ip address='10.0.0.1' prefix='24'><dhcp><range start='10.0.0.2' end='10.0.0.9'/></dhcp></ip></network>`)
	f.Add(`<network><name>b</name><ip address='10.0.0.1' netmask='255.255.0.0'/><ip family='ipv6' address='fd00::1' prefix='64'/><dns enable='no'/></network>`)
	f.Add(`<network><name>c</name><ip address='10.0.0.1'/></network>`)
	f.Fuzz(func(t *testing.T, doc string) {
		var x libvirtxml.Network
		if x.Unmarshal(doc) != nil {
			return
		}
		n, err := NetworkFromXML(&x)
		if err != nil || !validMode(n.Mode) {
			return
		}
		if len(n.Validate()) == 0 {
			if _, err := n.ToXML(); err != nil {
				t.Errorf("valid spec %+v does not build: %v", n, err)
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
