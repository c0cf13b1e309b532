package capi

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// tailSize is how many addresses at the end of a subnet are used when it has no DHCP range.
const tailSize = 200

// Candidates are the addresses a machine may get on s, in order: every usable address of
// its DHCP ranges, or, when it has none, the usable ones among its last 200.
func Candidates(s netaddr.Subnet) []netip.Addr {
	var out []netip.Addr
	if len(s.Ranges) > 0 {
		for _, r := range s.Ranges {
			for a := r.Start; a.IsValid() && a.Compare(r.End) <= 0; a = a.Next() {
				if s.Usable(a) {
					out = append(out, a)
				}
			}
		}
		return out
	}
	last := s.Broadcast()
	first := s.Prefix.Addr()
	a := last
	for i := 1; i < tailSize && a.Compare(first) > 0; i++ {
		a = a.Prev()
	}
	for ; a.Compare(last) < 0; a = a.Next() {
		if s.Usable(a) {
			out = append(out, a)
		}
	}
	return out
}

// ChooseAddress picks the machine's address deterministically from its domain name: the
// candidate at hash(name) mod n, or the next free one after it (wrapping), skipping every
// address in taken (reserved or leased). The same inputs always give the same address.
func ChooseAddress(s netaddr.Subnet, domainName string, taken map[netip.Addr]bool) (netip.Addr, error) {
	cands := Candidates(s)
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
