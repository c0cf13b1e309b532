package netaddr

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"libvirt.org/go/libvirtxml"
)

func TestParseCIDR(t *testing.T) {
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
		s, err := ParseCIDR(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseCIDR(%q) error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || s.Host.String() != c.host || s.Prefix.String() != c.prefix || s.String() != c.str {
			t.Errorf("ParseCIDR(%q) = %v %v (%s), %v; want %s %s (%s)", c.in, s.Host, s.Prefix, s, err, c.host, c.prefix, c.str)
		}
	}
}

// TestFromXML: the netmask, prefix and bare forms libvirt accepts read as one subnet.
func TestFromXML(t *testing.T) {
	dhcp := &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{{Start: "192.168.122.2", End: "192.168.122.254"}}}
	for _, ip := range []libvirtxml.NetworkIP{
		{Address: "192.168.122.1", Netmask: "255.255.255.0", DHCP: dhcp},
		{Address: "192.168.122.1", Prefix: 24, DHCP: dhcp},
		{Address: "192.168.122.1", DHCP: dhcp}, // class C
	} {
		s, err := FromXML(ip)
		if err != nil || s.Prefix.String() != "192.168.122.0/24" || s.Host.String() != "192.168.122.1" ||
			len(s.Ranges) != 1 || s.Ranges[0].String() != "192.168.122.2-192.168.122.254" {
			t.Errorf("FromXML(%+v) = %+v, %v", ip, s, err)
		}
	}
	if s, err := FromXML(libvirtxml.NetworkIP{Address: "fd00::1", Family: "ipv6"}); err != nil || s.Prefix.Bits() != 64 || s.Is4() {
		t.Errorf("bare IPv6: %+v %v", s, err)
	}
	for _, bad := range []libvirtxml.NetworkIP{
		{Address: "x"},
		{Address: "10.0.0.1", Netmask: "255.0.255.0"},
		{Address: "10.0.0.1", Netmask: "fe80::"},
		{Address: "10.0.0.1", Prefix: 24, DHCP: &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{{Start: "10.0.1.2", End: "10.0.1.9"}}}},
		{Address: "10.0.0.1", Prefix: 24, DHCP: &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{{Start: "10.0.0.9", End: "10.0.0.2"}}}},
	} {
		if _, err := FromXML(bad); err == nil {
			t.Errorf("FromXML(%+v) accepted", bad)
		}
	}
}

func TestDefaultRange(t *testing.T) {
	cases := []struct{ cidr, want string }{
		{"10.17.0.0/24", "10.17.0.2-10.17.0.254"},
		{"192.168.5.0/26", "192.168.5.2-192.168.5.62"},
		{"10.17.0.254/24", "10.17.0.1-10.17.0.253"},
		{"10.17.0.100/24", "10.17.0.101-10.17.0.254"},
		{"10.17.0.0/30", "10.17.0.2-10.17.0.2"},
		{"fd00::/64", ""},
	}
	for _, c := range cases {
		s, err := ParseCIDR(c.cidr)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := DefaultRange(s)
		if got := map[bool]string{true: r.String(), false: ""}[ok]; got != c.want {
			t.Errorf("DefaultRange(%s) = %q, want %q", c.cidr, got, c.want)
		}
	}
}

func TestUsableAndLast(t *testing.T) {
	s, _ := ParseCIDR("10.0.0.0/29")
	var usable []string
	for a := s.Prefix.Addr(); s.Contains(a); a = a.Next() {
		if s.Usable(a) {
			usable = append(usable, a.String())
		}
	}
	if fmt.Sprint(usable) != "[10.0.0.2 10.0.0.3 10.0.0.4 10.0.0.5 10.0.0.6]" {
		t.Errorf("usable in %s: %v", s, usable)
	}
	if l := Last(netip.MustParsePrefix("fd00::/120")); l.String() != "fd00::ff" {
		t.Errorf("Last v6 = %s", l)
	}
}

// TestDiffHosts: the network-update changes that bring host entries to what is wanted, in
// a safe order, aimed at the right <ip> element, leaving unmanaged lists alone.
func TestDiffHosts(t *testing.T) {
	def := &libvirtxml.Network{
		Name: "n",
		DNS: &libvirtxml.NetworkDNS{Host: []libvirtxml.NetworkDNSHost{
			DNSHost{IP: "10.1.0.10", Hostnames: []string{"db"}}.XML(),
			DNSHost{IP: "10.1.0.11", Hostnames: []string{"old"}}.XML(),
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
	want := Wanted{DHCP: true, DNS: true,
		DHCPHosts: []DHCPHost{
			{MAC: "52:54:00:00:00:01", IP: "10.1.0.51"},            // name dropped: modify
			{MAC: "52:54:00:00:00:02", IP: "10.1.0.62"},            // moved: delete + add
			{MAC: "52:54:00:00:00:04", IP: "10.1.0.53", Name: "d"}, // takes 03's address: add after 03's delete
		},
		DNSHosts: []DNSHost{
			{IP: "10.1.0.10", Hostnames: []string{"db", "db1"}}, // changed: delete + add
			{IP: "10.1.0.12", Hostnames: []string{"old"}},       // takes 11's name: add after 11's delete
		},
	}
	changes, err := DiffHosts(def, want)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, fmt.Sprintf("%s @%d", c, c.Parent))
	}
	exp := []string{
		"delete DHCP host 52:54:00:00:00:02 (10.1.0.52) @1",
		"delete DHCP host 52:54:00:00:00:03 (10.1.0.53) @1",
		"delete DNS host 10.1.0.10 [db] @-1",
		"delete DNS host 10.1.0.11 [old] @-1",
		"modify DHCP host 52:54:00:00:00:01 (10.1.0.51) @1",
		"add DHCP host 52:54:00:00:00:02 (10.1.0.62) @1",
		"add DHCP host 52:54:00:00:00:04 (10.1.0.53) @1",
		"add DNS host 10.1.0.10 [db db1] @-1",
		"add DNS host 10.1.0.12 [old] @-1",
	}
	if fmt.Sprint(got) != fmt.Sprint(exp) {
		t.Errorf("changes:\n got %q\nwant %q", got, exp)
	}
	if cs, _ := DiffHosts(def, Wanted{DHCPHosts: want.DHCPHosts, DNSHosts: want.DNSHosts}); len(cs) != 0 {
		t.Errorf("unmanaged host lists produced changes: %v", cs)
	}
}

func TestCheckReservation(t *testing.T) {
	s, _ := FromXML(libvirtxml.NetworkIP{Address: "10.5.0.1", Prefix: 24})
	ss := []Subnet{s}
	others := []DHCPHost{{MAC: "52:54:00:00:00:01", IP: "10.5.0.10"}}
	cases := []struct {
		h        DHCPHost
		updating bool
		err      string
	}{
		{DHCPHost{MAC: "52:54:00:00:00:02", IP: "10.5.0.11"}, false, ""},
		{DHCPHost{MAC: "52:54:00:00:00:02", IP: "10.5.0.0"}, false, "network address"},
		{DHCPHost{MAC: "52:54:00:00:00:02", IP: "10.5.0.1"}, false, "own address"},
		{DHCPHost{MAC: "52:54:00:00:00:02", IP: "10.5.0.255"}, false, "broadcast"},
		{DHCPHost{MAC: "52:54:00:00:00:02", IP: "10.6.0.5"}, false, "outside network n's subnets (10.5.0.0/24)"},
		{DHCPHost{MAC: "52:54:00:00:00:02", IP: "fd00::5"}, false, "not an IPv4 address"},
		{DHCPHost{MAC: "52:54:00:00:00:01", IP: "10.5.0.12"}, false, "already has a DHCP host entry for MAC"},
		{DHCPHost{MAC: "52:54:00:00:00:01", IP: "10.5.0.12"}, true, ""},
		{DHCPHost{MAC: "52:54:00:00:00:02", IP: "10.5.0.10"}, false, "already reserved for MAC 52:54:00:00:00:01"},
	}
	for _, c := range cases {
		err := CheckReservation("n", ss, others, c.h, c.updating)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("CheckReservation(%v, updating=%t) = %v, want %q", c.h, c.updating, err, c.err)
		}
	}
	if err := CheckReservation("n", nil, nil, DHCPHost{IP: "10.5.0.9"}, false); err == nil || !strings.Contains(err.Error(), "no IPv4 subnet") {
		t.Errorf("no subnet: %v", err)
	}
}

// TestLock: writers of one network take turns; another network is not held up.
func TestLock(t *testing.T) {
	unlock := Lock("uri n1")
	done := make(chan struct{})
	go func() { defer close(done); Lock("uri n1")() }()
	Lock("uri n2")() // another network: not blocked
	select {
	case <-done:
		t.Fatal("second writer of n1 got the lock while the first held it")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	<-done
	var wg sync.WaitGroup
	n := 0
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); defer Lock("uri n3")(); n++ }()
	}
	wg.Wait()
	if n != 50 {
		t.Fatalf("n = %d", n)
	}
}

// FuzzParseCIDR: what parses prints back as itself (or its network form) and parses to
// the same subnet; nothing panics.
func FuzzParseCIDR(f *testing.F) {
	for _, s := range []string{"10.17.0.0/24", "10.17.0.254/24", "fd00:17::/64", "0.0.0.0/0", "::/0", "10.0.0.0/30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseCIDR(in)
		if err != nil {
			return
		}
		again, err := ParseCIDR(s.String())
		if err != nil || again.Host != s.Host || again.Prefix != s.Prefix {
			t.Fatalf("ParseCIDR(%q) = %v, but its String %q parses to %v, %v", in, s, s.String(), again, err)
		}
		if !s.Contains(s.Host) || s.Usable(s.Prefix.Addr()) {
			t.Fatalf("%v: host outside, or network address usable", s)
		}
		_, _ = DefaultRange(s)
	})
}

// TestDefaultRanges: the default range of a network comes from its first IPv4 subnet.
func TestDefaultRanges(t *testing.T) {
	cases := []struct {
		cidrs []string
		want  string
	}{
		{[]string{"10.17.0.0/24"}, "[10.17.0.2-10.17.0.254]"},
		{[]string{"fd00::/64", "192.168.5.0/26"}, "[192.168.5.2-192.168.5.62]"},
		{[]string{"fd00::/64"}, "[]"},
		{nil, "[]"},
	}
	for _, c := range cases {
		var ss []Subnet
		for _, a := range c.cidrs {
			s, err := ParseCIDR(a)
			if err != nil {
				t.Fatal(err)
			}
			ss = append(ss, s)
		}
		if got := fmt.Sprint(DefaultRanges(ss)); got != c.want {
			t.Errorf("DefaultRanges(%v) = %s, want %s", c.cidrs, got, c.want)
		}
	}
	if !EquivalentCIDR("10.17.0.0/24", "10.17.0.1/24") || EquivalentCIDR("10.17.0.0/24", "10.17.0.2/24") || EquivalentCIDR("x", "x") {
		t.Error("EquivalentCIDR: 10.17.0.0/24 means host 10.17.0.1; what does not parse is equivalent to nothing")
	}
}

// TestParseRange: the messages users see at plan time for a bad DHCP range.
func TestParseRange(t *testing.T) {
	cases := []struct{ start, end, err string }{
		{"10.0.0.2", "10.0.0.9", ""},
		{"fd00::2", "fd00::9", ""},
		{"10.0.0.9", "10.0.0.2", "start 10.0.0.9 is after end 10.0.0.2"},
		{"10.0.0.2", "fd00::9", "are of different families"},
		{"10.0.0.02", "10.0.0.9", "must be two IP addresses in canonical form"},
		{"FD00::2", "fd00::9", "must be two IP addresses in canonical form"},
		{"x", "10.0.0.9", "must be two IP addresses in canonical form"},
	}
	for _, c := range cases {
		r, err := ParseRange(c.start, c.end)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("ParseRange(%q, %q) = %v, want %q", c.start, c.end, err, c.err)
		}
		if err == nil && r.String() != c.start+"-"+c.end {
			t.Errorf("ParseRange(%q, %q) = %s", c.start, c.end, r)
		}
	}
}

// TestNetwork: a network's view for the writers of its host entries: persistent and live
// entries, a change aimed at the IPv4 <ip> element after an IPv6 one, its own entry left
// out when it is being replaced.
func TestNetwork(t *testing.T) {
	def := &libvirtxml.Network{Name: "n", IPs: []libvirtxml.NetworkIP{
		{Address: "fd00::1", Family: "ipv6", Prefix: 64, DHCP: &libvirtxml.NetworkDHCP{}},
		{Address: "10.9.0.1", Prefix: 24, DHCP: &libvirtxml.NetworkDHCP{Hosts: []libvirtxml.NetworkDHCPHost{{MAC: "52:54:00:00:00:0A", IP: "10.9.0.10"}}}},
	}}
	live := &libvirtxml.Network{Name: "n", IPs: []libvirtxml.NetworkIP{
		{Address: "fd00::1", Family: "ipv6", Prefix: 64},
		{Address: "10.9.0.1", Prefix: 24, DHCP: &libvirtxml.NetworkDHCP{Hosts: []libvirtxml.NetworkDHCPHost{{MAC: "52:54:00:00:00:0b", IP: "10.9.0.11"}}}},
	}}
	n, err := NewNetwork(def, live)
	if err != nil {
		t.Fatal(err)
	}
	if !n.Active || len(n.Subnets) != 2 || fmt.Sprint(n.Entries()) != "[DHCP host 52:54:00:00:00:0a (10.9.0.10) DHCP host 52:54:00:00:00:0b (10.9.0.11)]" {
		t.Errorf("network %+v, entries %v", n, n.Entries())
	}
	if h, ok := n.Entry("52:54:00:00:00:0B"); !ok || h.IP != "10.9.0.11" {
		t.Errorf("Entry of the live-only MAC = %v %t", h, ok)
	}
	if c := n.Change(Add, DHCPHost{MAC: "52:54:00:00:00:0c", IP: "10.9.0.12"}); c.Parent != 1 || c.DHCP == nil {
		t.Errorf("change %v aimed at <ip> %d, want 1 (the IPv4 element)", c, c.Parent)
	}
	if taken := n.Taken("52:54:00:00:00:0a"); len(taken) != 1 || !taken[netip.MustParseAddr("10.9.0.11")] {
		t.Errorf("Taken = %v", taken)
	}
	h := DHCPHost{MAC: "52:54:00:00:00:0b", IP: "10.9.0.20"}
	if err := n.CheckReservation(h, false); err == nil || !strings.Contains(err.Error(), "already has a DHCP host entry") {
		t.Errorf("a live entry's MAC must clash: %v", err)
	}
	if err := n.Without(h.MAC).CheckReservation(h, false); err != nil {
		t.Errorf("without its own entry: %v", err)
	}
	if len(n.Live) != 1 {
		t.Error("Without changed the network it was called on")
	}
	if idle, err := NewNetwork(def, nil); err != nil || idle.Active || idle.Live != nil {
		t.Errorf("inactive network: %+v %v", idle, err)
	}
}
