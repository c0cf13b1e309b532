package capi

import (
	"net/netip"
	"strings"
	"testing"
)

func mustSubnet(t testing.TB, addr, mask string, prefix uint, ranges ...Range) Subnet {
	t.Helper()
	s, err := ParseSubnet(addr, mask, prefix, ranges)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rng(a, b string) Range { return Range{netip.MustParseAddr(a), netip.MustParseAddr(b)} }

func TestParseSubnet(t *testing.T) {
	a := mustSubnet(t, "192.168.122.1", "255.255.255.0", 0)
	b := mustSubnet(t, "192.168.122.1", "", 24)
	if a.Prefix != b.Prefix || a.Prefix.String() != "192.168.122.0/24" || a.Gateway.String() != "192.168.122.1" {
		t.Errorf("netmask %v vs prefix %v", a, b)
	}
	for _, bad := range []struct{ addr, mask string }{{"x", ""}, {"10.0.0.1", "255.0.255.0"}, {"fe80::1", ""}, {"10.0.0.1", "255.255.255.254"}} {
		if _, err := ParseSubnet(bad.addr, bad.mask, 24, nil); err == nil {
			t.Errorf("ParseSubnet(%q, %q) accepted", bad.addr, bad.mask)
		}
	}
	if _, err := ParseSubnet("10.0.0.1", "", 24, []Range{rng("10.0.1.2", "10.0.1.9")}); err == nil {
		t.Error("range outside the subnet accepted")
	}
}

func TestCandidates(t *testing.T) {
	withRange := mustSubnet(t, "192.168.122.1", "", 24, rng("192.168.122.1", "192.168.122.10"))
	c := withRange.Candidates()
	if len(c) != 9 || c[0].String() != "192.168.122.2" { // .1 is the gateway
		t.Errorf("range candidates %v", c)
	}
	tail := mustSubnet(t, "10.0.0.1", "", 24).Candidates()
	if len(tail) != 199 || tail[0].String() != "10.0.0.56" || tail[len(tail)-1].String() != "10.0.0.254" {
		t.Errorf("tail: %d candidates %v..%v", len(tail), tail[0], tail[len(tail)-1])
	}
	small := mustSubnet(t, "10.0.0.1", "", 29).Candidates() // .0 net, .1 gw, .7 broadcast
	if len(small) != 5 || small[0].String() != "10.0.0.2" || small[4].String() != "10.0.0.6" {
		t.Errorf("/29 candidates %v", small)
	}
}

func TestChooseAddress(t *testing.T) {
	s := mustSubnet(t, "192.168.122.1", "", 24, rng("192.168.122.2", "192.168.122.254"))
	a, err := ChooseAddress(s, "default-w-0-abcdef", nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := ChooseAddress(s, "default-w-0-abcdef", nil)
	if a != again {
		t.Fatal("not deterministic")
	}
	next, _ := ChooseAddress(s, "default-w-0-abcdef", map[netip.Addr]bool{a: true})
	if next == a || !s.usable(next) {
		t.Errorf("taken address chosen again: %v", next)
	}
	full := map[netip.Addr]bool{}
	for _, c := range s.Candidates() {
		full[c] = true
	}
	if _, err := ChooseAddress(s, "x", full); err == nil || !strings.Contains(err.Error(), "reserved or leased") {
		t.Errorf("full subnet: %v", err)
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
		var ranges []Range
		if lo != 0 && hi >= lo {
			base := p.Addr().As4()
			start, end := base, base
			start[3] |= lo
			end[3] |= hi
			r := Range{netip.AddrFrom4(start), netip.AddrFrom4(end)}
			if p.Contains(r.Start) && p.Contains(r.End) {
				ranges = []Range{r}
			}
		}
		s, err := ParseSubnet(gw.String(), "", uint(bits), ranges)
		if err != nil {
			return
		}
		a, err := ChooseAddress(s, name, nil)
		if err != nil {
			return // e.g. a range holding only the gateway
		}
		if !s.Prefix.Contains(a) || a == s.Prefix.Addr() || a == broadcast(s.Prefix) || a == s.Gateway {
			t.Fatalf("%s in %s (gw %s): chose network, broadcast, gateway or outside", a, s.Prefix, s.Gateway)
		}
	})
}
