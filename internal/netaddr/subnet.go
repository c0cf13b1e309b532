// Package netaddr is the provider's one model of a libvirt network's addressing: its
// subnets (the host's own address and the prefix, written as a CIDR or as libvirt's <ip>
// element in netmask or prefix form), DHCP ranges, DHCP and DNS host entries, the diff of
// host entries that network-update applies, the checks a DHCP reservation must pass, and
// the per-network lock that every writer of host entries takes. It is pure (no libvirt
// calls); libvirt_network, libvirt_dhcp_reservation, libvirt_cluster_machine and the
// libvirt client all use these types and nothing else.
package netaddr

import (
	"fmt"
	"net/netip"

	"libvirt.org/go/libvirtxml"
)

// Subnet is one <ip> element of a network: the host's own address on it (the guests'
// gateway and DNS server), its prefix, and its DHCP ranges.
type Subnet struct {
	Host   netip.Addr
	Prefix netip.Prefix // masked
	Ranges []Range
}

// Range is an inclusive DHCP range.
type Range struct{ Start, End netip.Addr }

func (r Range) String() string { return r.Start.String() + "-" + r.End.String() }

// Contains reports whether a lies in the range.
func (r Range) Contains(a netip.Addr) bool { return r.Start.Compare(a) <= 0 && a.Compare(r.End) <= 0 }

// ParseRange reads a range as users write it: two addresses of one family, in canonical
// form, start not after end.
func ParseRange(start, end string) (Range, error) {
	s, e1 := netip.ParseAddr(start)
	e, e2 := netip.ParseAddr(end)
	if e1 != nil || e2 != nil || s.String() != start || e.String() != end {
		return Range{}, fmt.Errorf("%q - %q must be two IP addresses in canonical form", start, end)
	}
	r := Range{Start: s, End: e}
	return r, r.Check()
}

// Check says whether the range is one: two addresses of one family, start not after end.
func (r Range) Check() error {
	switch {
	case r.Start.Is4() != r.End.Is4():
		return fmt.Errorf("%s and %s are of different families", r.Start, r.End)
	case r.Start.Compare(r.End) > 0:
		return fmt.Errorf("start %s is after end %s", r.Start, r.End)
	}
	return nil
}

// ParseCIDR reads an address as users write it in libvirt_network's `addresses`. The
// network form (host bits zero, e.g. 10.17.0.0/24 or fd00:17::/64) gives the host the
// subnet's first address (10.17.0.1, fd00:17::1); a host form (10.17.0.254/24) gives it
// that address.
func ParseCIDR(cidr string) (Subnet, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return Subnet{}, fmt.Errorf("%q is not a CIDR such as 10.17.0.0/24 or fd00:17::/64", cidr)
	}
	if p.String() != cidr {
		return Subnet{}, fmt.Errorf("%q: write it in canonical form, %q (libvirt reports it so)", cidr, p.String())
	}
	if p.Addr().Zone() != "" || p.Addr().Is4In6() {
		return Subnet{}, fmt.Errorf("%q: no zones or IPv4-mapped addresses", cidr)
	}
	m := p.Masked()
	bits := p.Addr().BitLen()
	if p.Bits() > bits-2 {
		return Subnet{}, fmt.Errorf("%q: the prefix is too long to hold a host and guests (at most /%d)", cidr, bits-2)
	}
	host := p.Addr()
	if host == m.Addr() {
		host = host.Next()
	}
	if host == Last(m) && p.Addr().Is4() {
		return Subnet{}, fmt.Errorf("%q: %s is the broadcast address of %s", cidr, host, m)
	}
	return Subnet{Host: host, Prefix: m}, nil
}

// EquivalentCIDR reports whether two CIDRs of `addresses` mean the same host address and
// prefix (10.17.0.0/24 and 10.17.0.1/24 do).
func EquivalentCIDR(a, b string) bool {
	sa, err1 := ParseCIDR(a)
	sb, err2 := ParseCIDR(b)
	return err1 == nil && err2 == nil && sa.Host == sb.Host && sa.Prefix == sb.Prefix
}

// String is the subnet as `addresses` writes it: network form when the host has the
// first address, else host form.
func (s Subnet) String() string {
	if s.Host == s.Prefix.Addr().Next() {
		return s.Prefix.String()
	}
	return netip.PrefixFrom(s.Host, s.Prefix.Bits()).String()
}

// Is4 reports whether the subnet is IPv4.
func (s Subnet) Is4() bool { return s.Prefix.Addr().Is4() }

// Contains reports whether a is inside the subnet's prefix.
func (s Subnet) Contains(a netip.Addr) bool { return s.Prefix.Contains(a) }

// Broadcast is the last address of the prefix (IPv4's broadcast address).
func (s Subnet) Broadcast() netip.Addr { return Last(s.Prefix) }

// Usable reports whether a may be given to a guest: inside the prefix, not the network
// address, not the (IPv4) broadcast address, not the host's own address.
func (s Subnet) Usable(a netip.Addr) bool {
	return s.Prefix.Contains(a) && a != s.Prefix.Addr() && a != s.Host && (!s.Is4() || a != s.Broadcast())
}

// Last is the last address of a prefix, of either family.
func Last(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// FromXML reads an <ip> element: the address with a prefix, a dotted netmask, or
// neither (libvirt then takes the classful mask for IPv4, /64 for IPv6), and its DHCP
// ranges.
func FromXML(ip libvirtxml.NetworkIP) (Subnet, error) {
	a, err := netip.ParseAddr(ip.Address)
	if err != nil {
		return Subnet{}, fmt.Errorf("<ip address=%q>: not an IP address", ip.Address)
	}
	bits := int(ip.Prefix)
	switch {
	case ip.Netmask != "":
		if bits, err = maskBits(ip.Netmask); err != nil {
			return Subnet{}, err
		}
	case ip.Prefix == 0 && a.Is6():
		bits = 64
	case ip.Prefix == 0:
		bits = classfulBits(a)
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return Subnet{}, fmt.Errorf("<ip address=%q prefix=%d>: %w", ip.Address, bits, err)
	}
	s := Subnet{Host: a, Prefix: p}
	if ip.DHCP != nil {
		for _, r := range ip.DHCP.Ranges {
			start, e1 := netip.ParseAddr(r.Start)
			end, e2 := netip.ParseAddr(r.End)
			if e1 != nil || e2 != nil || !p.Contains(start) || !p.Contains(end) || start.Compare(end) > 0 {
				return Subnet{}, fmt.Errorf("DHCP range %s-%s is not a range inside %s", r.Start, r.End, p)
			}
			s.Ranges = append(s.Ranges, Range{Start: start, End: end})
		}
	}
	return s, nil
}

// Subnets reads every <ip> element of a definition, in order: the index of a subnet is
// the parentIndex network-update takes for its DHCP section.
func Subnets(def *libvirtxml.Network) ([]Subnet, error) {
	out := make([]Subnet, 0, len(def.IPs))
	for _, ip := range def.IPs {
		s, err := FromXML(ip)
		if err != nil {
			return nil, fmt.Errorf("network %s: %w", def.Name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// IPv4 keeps the IPv4 subnets.
func IPv4(ss []Subnet) []Subnet {
	var out []Subnet
	for _, s := range ss {
		if s.Is4() {
			out = append(out, s)
		}
	}
	return out
}

// IndexFor is the index of the subnet that holds addr; -1 when none does (or addr is not
// an address).
func IndexFor(ss []Subnet, addr string) int {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return -1
	}
	for i, s := range ss {
		if s.Contains(a) {
			return i
		}
	}
	return -1
}

// DefaultRange is what a DHCP server on s gives out when no range is given: for IPv4,
// every address after the host's own up to the one before the broadcast address
// (10.17.0.2 - 10.17.0.254 for 10.17.0.0/24); a host elsewhere in the subnet takes the
// larger side of it. IPv6 subnets get none (router advertisements let guests configure
// themselves). ok is false when there is no room.
func DefaultRange(s Subnet) (r Range, ok bool) {
	if !s.Is4() {
		return Range{}, false
	}
	start, end := s.Host.Next(), s.Broadcast().Prev()
	if s.Host != s.Prefix.Addr().Next() {
		start = s.Prefix.Addr().Next()
	}
	if start.Compare(end) > 0 {
		return Range{}, false
	}
	if s.Host.Compare(start) >= 0 && s.Host.Compare(end) <= 0 {
		if lo, hi := s.Host.Prev(), s.Host.Next(); distance(start, lo) >= distance(hi, end) {
			end = lo
		} else {
			start = hi
		}
	}
	return Range{Start: start, End: end}, true
}

// DefaultRanges is what a DHCP server on a network with subnets ss gives out when no
// range is given: the DefaultRange of its first IPv4 subnet (none when it has no IPv4
// subnet, or no room on the first one).
func DefaultRanges(ss []Subnet) []Range {
	for _, s := range ss {
		if !s.Is4() {
			continue
		}
		if r, ok := DefaultRange(s); ok {
			return []Range{r}
		}
		return nil
	}
	return nil
}

// distance counts the addresses from a up to b, capped: only to compare two sides.
func distance(a, b netip.Addr) int {
	n := 0
	for x := a; x.Compare(b) < 0 && n < 1<<20; x = x.Next() {
		n++
	}
	return n
}

func maskBits(netmask string) (int, error) {
	m, err := netip.ParseAddr(netmask)
	if err != nil || !m.Is4() {
		return 0, fmt.Errorf("<ip netmask=%q> is not a dotted IPv4 netmask", netmask)
	}
	b := m.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	bits := 0
	for v&(1<<31) != 0 {
		bits++
		v <<= 1
	}
	if v != 0 {
		return 0, fmt.Errorf("<ip netmask=%q> is not a contiguous netmask", netmask)
	}
	return bits, nil
}

// classfulBits is libvirt's default mask of a bare IPv4 address (seen only on
// hand-written networks).
func classfulBits(a netip.Addr) int {
	switch b := a.As4()[0]; {
	case b < 128:
		return 8
	case b < 192:
		return 16
	default:
		return 24
	}
}
