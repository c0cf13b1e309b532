package capi

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/netip"
)

// tailSize is how many addresses at the end of a subnet are used when it has no DHCP range.
const tailSize = 200

// Subnet is one IPv4 subnet of a libvirt network: its prefix, the host's own address on it
// (the gateway) and its DHCP ranges.
type Subnet struct {
	Prefix  netip.Prefix
	Gateway netip.Addr
	Ranges  []Range
}

// Range is an inclusive address range.
type Range struct{ Start, End netip.Addr }

// Contains reports whether a is inside the subnet's prefix.
func (s Subnet) Contains(a netip.Addr) bool { return s.Prefix.Contains(a) }

// usable reports whether a may be given to a machine: inside the prefix, not the network
// address, not the broadcast address, not the host's own address.
func (s Subnet) usable(a netip.Addr) bool {
	if !s.Prefix.Contains(a) || a == s.Prefix.Masked().Addr() || a == broadcast(s.Prefix) || a == s.Gateway {
		return false
	}
	return true
}

// Candidates are the addresses a machine may get, in order: every usable address of the
// DHCP ranges, or, when the subnet has none, the usable ones among its last 200.
func (s Subnet) Candidates() []netip.Addr {
	var out []netip.Addr
	if len(s.Ranges) > 0 {
		for _, r := range s.Ranges {
			for a := r.Start; a.IsValid() && a.Compare(r.End) <= 0; a = a.Next() {
				if s.usable(a) {
					out = append(out, a)
				}
			}
		}
		return out
	}
	last := broadcast(s.Prefix)
	first := s.Prefix.Masked().Addr()
	a := last
	for i := 1; i < tailSize && a.Compare(first) > 0; i++ {
		a = a.Prev()
	}
	for ; a.Compare(last) < 0; a = a.Next() {
		if s.usable(a) {
			out = append(out, a)
		}
	}
	return out
}

// ChooseAddress picks the machine's address deterministically from its domain name: the
// candidate at hash(name) mod n, or the next free one after it (wrapping), skipping every
// address in taken (reserved or leased). The same inputs always give the same address.
func ChooseAddress(s Subnet, domainName string, taken map[netip.Addr]bool) (netip.Addr, error) {
	cands := s.Candidates()
	if len(cands) == 0 {
		return netip.Addr{}, fmt.Errorf("subnet %s has no usable address to give out", s.Prefix)
	}
	sum := sha256.Sum256([]byte(domainName))
	start := int(binary.BigEndian.Uint64(sum[:8]) % uint64(len(cands)))
	for i := range cands {
		a := cands[(start+i)%len(cands)]
		if !taken[a] {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("subnet %s: all %d candidate addresses are reserved or leased; widen the DHCP range or remove unused host entries", s.Prefix, len(cands))
}

// broadcast is the last address of an IPv4 prefix.
func broadcast(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := binary.BigEndian.Uint32(a[:]) | host
	binary.BigEndian.PutUint32(a[:], v)
	return netip.AddrFrom4(a)
}

// ParseSubnet reads an <ip> element of a libvirt network: address with either a
// dotted netmask or a prefix length, as libvirt accepts both.
func ParseSubnet(address, netmask string, prefix uint, ranges []Range) (Subnet, error) {
	gw, err := netip.ParseAddr(address)
	if err != nil || !gw.Is4() {
		return Subnet{}, fmt.Errorf("network address %q is not an IPv4 address", address)
	}
	bits := int(prefix)
	if netmask != "" {
		m, err := netip.ParseAddr(netmask)
		if err != nil || !m.Is4() {
			return Subnet{}, fmt.Errorf("netmask %q is not a dotted IPv4 netmask", netmask)
		}
		if bits, err = maskBits(m); err != nil {
			return Subnet{}, err
		}
	}
	if bits <= 0 || bits > 30 {
		return Subnet{}, fmt.Errorf("network %s: prefix /%d leaves no room for machines (need /1 to /30)", address, bits)
	}
	p := netip.PrefixFrom(gw, bits).Masked()
	for _, r := range ranges {
		if !p.Contains(r.Start) || !p.Contains(r.End) || r.Start.Compare(r.End) > 0 {
			return Subnet{}, fmt.Errorf("DHCP range %s-%s is not inside %s", r.Start, r.End, p)
		}
	}
	return Subnet{Prefix: p, Gateway: gw, Ranges: ranges}, nil
}

func maskBits(m netip.Addr) (int, error) {
	b := m.As4()
	v := binary.BigEndian.Uint32(b[:])
	ones := 0
	for v&0x80000000 != 0 {
		ones++
		v <<= 1
	}
	if v != 0 {
		return 0, fmt.Errorf("netmask %s is not contiguous", m)
	}
	return ones, nil
}
