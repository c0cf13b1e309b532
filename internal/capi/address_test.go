package capi

import (
	"net/netip"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// mustSubnet reads an <ip> element with a prefix and ranges (start, end, start, end, ...).
func mustSubnet(t testing.TB, addr string, prefix uint, ranges ...string) netaddr.Subnet {
	t.Helper()
	ip := libvirtxml.NetworkIP{Address: addr, Prefix: prefix}
	if len(ranges) > 0 {
		ip.DHCP = &libvirtxml.NetworkDHCP{}
		for i := 0; i+1 < len(ranges); i += 2 {
			ip.DHCP.Ranges = append(ip.DHCP.Ranges, libvirtxml.NetworkDHCPRange{Start: ranges[i], End: ranges[i+1]})
		}
	}
	s, err := netaddr.FromXML(ip)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCandidates(t *testing.T) {
	withRange := mustSubnet(t, "192.168.122.1", 24, "192.168.122.1", "192.168.122.10")
	c := Candidates(withRange)
	if len(c) != 9 || c[0].String() != "192.168.122.2" { // .1 is the gateway
		t.Errorf("range candidates %v", c)
	}
	tail := Candidates(mustSubnet(t, "10.0.0.1", 24))
	if len(tail) != 199 || tail[0].String() != "10.0.0.56" || tail[len(tail)-1].String() != "10.0.0.254" {
		t.Errorf("tail: %d candidates %v..%v", len(tail), tail[0], tail[len(tail)-1])
	}
	small := Candidates(mustSubnet(t, "10.0.0.1", 29)) // .0 net, .1 gw, .7 broadcast
	if len(small) != 5 || small[0].String() != "10.0.0.2" || small[4].String() != "10.0.0.6" {
		t.Errorf("/29 candidates %v", small)
	}
	if c := Candidates(mustSubnet(t, "10.0.0.1", 31)); len(c) != 0 {
		t.Errorf("/31 candidates %v, want none", c)
	}
}

func TestChooseAddress(t *testing.T) {
	s := mustSubnet(t, "192.168.122.1", 24, "192.168.122.2", "192.168.122.254")
	a, err := ChooseAddress(s, "default-w-0-abcdef", nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := ChooseAddress(s, "default-w-0-abcdef", nil)
	if a != again {
		t.Fatal("not deterministic")
	}
	next, _ := ChooseAddress(s, "default-w-0-abcdef", map[netip.Addr]bool{a: true})
	if next == a || !s.Usable(next) {
		t.Errorf("taken address chosen again: %v", next)
	}
	full := map[netip.Addr]bool{}
	for _, c := range Candidates(s) {
		full[c] = true
	}
	if _, err := ChooseAddress(s, "x", full); err == nil || !strings.Contains(err.Error(), "reserved or leased") {
		t.Errorf("full subnet: %v", err)
	}
	if _, err := ChooseAddress(mustSubnet(t, "10.0.0.1", 31), "x", nil); err == nil || !strings.Contains(err.Error(), "no usable address") {
		t.Errorf("/31: %v", err)
	}
}

func FuzzChooseAddress(f *testing.F) {
	f.Add(uint32(0xc0a87a01), uint8(24), "default-worker-0-abcdef", uint8(0), uint8(0))
	f.Add(uint32(0x0a000001), uint8(30), "x", uint8(1), uint8(2))
	f.Add(uint32(0x0a000001), uint8(16), "y", uint8(10), uint8(20))
	f.Fuzz(func(t *testing.T, ip uint32, bits uint8, name string, lo, hi uint8) {
		gw := netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)})
		bits = 8 + bits%23 // /8 .. /30
		p := netip.PrefixFrom(gw, int(bits)).Masked()
		x := libvirtxml.NetworkIP{Address: gw.String(), Prefix: uint(bits)}
		if lo != 0 && hi >= lo {
			start, end := p.Addr().As4(), p.Addr().As4()
			start[3] |= lo
			end[3] |= hi
			if s, e := netip.AddrFrom4(start), netip.AddrFrom4(end); p.Contains(s) && p.Contains(e) && s.Compare(e) <= 0 {
				x.DHCP = &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{{Start: s.String(), End: e.String()}}}
			}
		}
		s, err := netaddr.FromXML(x)
		if err != nil {
			return
		}
		a, err := ChooseAddress(s, name, nil)
		if err != nil {
			return // e.g. a range holding only the gateway
		}
		if !s.Prefix.Contains(a) || a == s.Prefix.Addr() || a == s.Broadcast() || a == s.Host {
			t.Fatalf("%s in %s (gw %s): chose network, broadcast, gateway or outside", a, s.Prefix, s.Host)
		}
	})
}
