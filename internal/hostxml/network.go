// Package hostxml builds and reads the libvirt XML of host-level objects that the provider
// manages as code — networks and storage pools — from small specs that mirror what users
// write. It is pure (no libvirt calls): validation, defaults, XML out and XML back.
package hostxml

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Network modes users choose from.
const (
	ModeNAT      = "nat"
	ModeRoute    = "route"
	ModeOpen     = "open"
	ModeIsolated = "isolated"
	ModeBridge   = "bridge"
)

// Modes lists the network modes, in the order the docs give them.
var Modes = []string{ModeNAT, ModeRoute, ModeOpen, ModeIsolated, ModeBridge}

// Network is a libvirt network as users write it.
type Network struct {
	Name      string
	Mode      string
	Bridge    string // "" = libvirt picks (virbrN); required for ModeBridge
	MTU       uint
	Domain    string
	Addresses []string // CIDRs; see ParseAddress
	DHCP      *DHCP    // nil: no DHCP server
	DNS       *DNS     // nil: libvirt's default (DNS on, nothing configured)
}

// DHCP is the network's DHCP service.
type DHCP struct {
	Enabled bool
	Ranges  []Range
	// Hosts are fixed addresses. ManageHosts false means the spec says nothing about them
	// (libvirt_dhcp_reservation or others own them): none are written, any found are kept.
	Hosts       []DHCPHost
	ManageHosts bool
}

// Range is an inclusive DHCP range.
type Range struct{ Start, End string }

// DHCPHost is a fixed IPv4 address for a MAC.
type DHCPHost struct{ MAC, IP, Hostname string }

// DNS is the network's DNS service (dnsmasq).
type DNS struct {
	Enabled     bool
	Hosts       []DNSHost
	ManageHosts bool
	Forwarders  []Forwarder
}

// DNSHost is an extra name (or names) for an address.
type DNSHost struct {
	IP        string
	Hostnames []string
}

// Forwarder sends queries (for Domain, or all when empty) to Addr (or, with Addr empty,
// answers them locally only).
type Forwarder struct{ Addr, Domain string }

// FieldError is a problem with one attribute of the spec.
type FieldError struct {
	Attr   string // top-level attribute, e.g. "addresses", "dhcp"
	Detail string
}

func (e FieldError) Error() string { return e.Attr + ": " + e.Detail }

var (
	ifnameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}$`)
	macRE      = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)
	hostnameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)
)

// Subnet is one address of the network: the host's own address on it and its prefix.
type Subnet struct {
	Host   netip.Addr
	Prefix netip.Prefix // masked
}

// ParseAddress reads a CIDR of `addresses`. The network form (host bits zero, e.g.
// 10.17.0.0/24 or fd00:17::/64) gives the host the subnet's first address (10.17.0.1,
// fd00:17::1); a host form (10.17.0.254/24) gives it that address.
func ParseAddress(cidr string) (Subnet, error) {
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
	if host == lastAddr(m) && p.Addr().Is4() {
		return Subnet{}, fmt.Errorf("%q: %s is the broadcast address of %s", cidr, host, m)
	}
	return Subnet{Host: host, Prefix: m}, nil
}

// String is the subnet in network form when the host has the first address, else host form.
func (s Subnet) String() string {
	if s.Host == s.Prefix.Addr().Next() {
		return s.Prefix.String()
	}
	return netip.PrefixFrom(s.Host, s.Prefix.Bits()).String()
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// EquivalentAddress reports whether two CIDRs of `addresses` mean the same host address
// and prefix (10.17.0.0/24 and 10.17.0.1/24 do).
func EquivalentAddress(a, b string) bool {
	sa, err1 := ParseAddress(a)
	sb, err2 := ParseAddress(b)
	return err1 == nil && err2 == nil && sa == sb
}

// DefaultRanges is what `dhcp` gets when no ranges are given: on the first IPv4 subnet,
// every address after the host's own up to the one before the broadcast address
// (10.17.0.2 - 10.17.0.254 for 10.17.0.0/24); IPv6 subnets get none (router
// advertisements still let guests configure themselves).
func DefaultRanges(addresses []string) []Range {
	for _, a := range addresses {
		s, err := ParseAddress(a)
		if err != nil || !s.Prefix.Addr().Is4() {
			continue
		}
		start := s.Host.Next()
		end := lastAddr(s.Prefix).Prev()
		if s.Host != s.Prefix.Addr().Next() {
			// The host sits elsewhere: give out everything else after the network address.
			start = s.Prefix.Addr().Next()
		}
		if start.Compare(end) > 0 {
			return nil
		}
		if s.Host.Compare(start) >= 0 && s.Host.Compare(end) <= 0 {
			// Host in the middle: use the larger side.
			if lo, hi := s.Host.Prev(), s.Host.Next(); distance(start, lo) >= distance(hi, end) {
				end = lo
			} else {
				start = hi
			}
		}
		return []Range{{Start: start.String(), End: end.String()}}
	}
	return nil
}

func distance(a, b netip.Addr) int {
	n := 0
	for x := a; x.Compare(b) < 0 && n < 1<<20; x = x.Next() {
		n++
	}
	return n
}

// Validate checks a spec without asking libvirt. With defaults false, DHCP ranges that are
// empty mean "default ranges" and are checked as such.
func (n *Network) Validate() []FieldError {
	var errs []FieldError
	add := func(attr, f string, a ...any) { errs = append(errs, FieldError{attr, fmt.Sprintf(f, a...)}) }
	if !slices.Contains(Modes, n.Mode) {
		add("mode", "%q is not one of %s", n.Mode, strings.Join(Modes, ", "))
	}
	if n.Bridge != "" && !ifnameRE.MatchString(n.Bridge) {
		add("bridge", "%q is not a valid interface name (letters, digits, '_', '.', ':', '-'; at most 15 characters)", n.Bridge)
	}
	if n.Mode == ModeBridge {
		if n.Bridge == "" {
			add("bridge", "mode = \"bridge\" attaches guests to an existing host bridge: set bridge to its name, e.g. \"br0\"")
		}
		if len(n.Addresses) > 0 {
			add("addresses", "mode = \"bridge\" networks have no addresses of their own (the host bridge's LAN provides them): remove addresses")
		}
		if n.DHCP != nil {
			add("dhcp", "mode = \"bridge\" networks have no DHCP server of their own: remove the dhcp block")
		}
		if n.DNS != nil {
			add("dns", "mode = \"bridge\" networks have no DNS server of their own: remove the dns block")
		}
		if n.Domain != "" {
			add("domain", "mode = \"bridge\" networks have no DNS of their own: remove domain")
		}
	}
	if n.MTU != 0 && (n.MTU < 68 || n.MTU > 65535) {
		add("mtu", "%d is outside 68-65535 bytes", n.MTU)
	}
	if n.Domain != "" && !hostnameRE.MatchString(n.Domain) {
		add("domain", "%q is not a DNS domain name", n.Domain)
	}
	var subnets []Subnet
	for _, a := range n.Addresses {
		s, err := ParseAddress(a)
		if err != nil {
			add("addresses", "%v", err)
			continue
		}
		for _, o := range subnets {
			if o.Prefix.Overlaps(s.Prefix) {
				add("addresses", "%s overlaps %s: each address needs a subnet of its own", s.Prefix, o.Prefix)
			}
		}
		subnets = append(subnets, s)
	}
	if n.DHCP != nil {
		errs = append(errs, n.validateDHCP(subnets)...)
	}
	if n.DNS != nil {
		errs = append(errs, n.validateDNS()...)
	}
	return errs
}

func (n *Network) validateDHCP(subnets []Subnet) []FieldError {
	var errs []FieldError
	add := func(f string, a ...any) { errs = append(errs, FieldError{"dhcp", fmt.Sprintf(f, a...)}) }
	d := n.DHCP
	if !d.Enabled {
		if len(d.Ranges) > 0 || len(d.Hosts) > 0 {
			add("ranges and hosts need enabled = true (or remove them)")
		}
		return errs
	}
	if len(n.Addresses) == 0 {
		add("DHCP needs an address on the network: add one to addresses, e.g. \"10.17.0.0/24\"")
		return errs
	}
	ranges := d.Ranges
	if len(ranges) == 0 {
		ranges = DefaultRanges(n.Addresses)
		if len(ranges) == 0 && len(subnets) == len(n.Addresses) {
			add("no IPv4 address to take a default DHCP range from: give ranges (e.g. for the IPv6 subnet)")
		}
	}
	// libvirt serves DHCP on at most one subnet per family.
	dhcpSubnet := map[bool]*Subnet{} // is4 -> subnet
	for i, r := range ranges {
		s, e := netip.ParseAddr(r.Start)
		en, e2 := netip.ParseAddr(r.End)
		if e != nil || e2 != nil || s.String() != r.Start || en.String() != r.End {
			add("ranges[%d]: %q - %q must be two IP addresses in canonical form", i, r.Start, r.End)
			continue
		}
		if s.Is4() != en.Is4() {
			add("ranges[%d]: %s and %s are of different families", i, s, en)
			continue
		}
		if s.Compare(en) > 0 {
			add("ranges[%d]: start %s is after end %s", i, s, en)
			continue
		}
		var in *Subnet
		for j := range subnets {
			if subnets[j].Prefix.Contains(s) && subnets[j].Prefix.Contains(en) {
				in = &subnets[j]
			}
		}
		if in == nil {
			add("ranges[%d]: %s - %s is outside the network's subnets (%s): choose a range inside one of them", i, s, en, strings.Join(n.Addresses, ", "))
			continue
		}
		if s == in.Prefix.Addr() || (s.Is4() && en == lastAddr(in.Prefix)) {
			add("ranges[%d]: %s - %s includes the network or broadcast address of %s", i, s, en, in.Prefix)
		}
		if in.Host.Compare(s) >= 0 && in.Host.Compare(en) <= 0 {
			add("ranges[%d]: %s - %s includes the host's own address %s", i, s, en, in.Host)
		}
		if o := dhcpSubnet[s.Is4()]; o != nil && o.Prefix != in.Prefix {
			add("ranges[%d]: libvirt serves DHCP on one subnet per address family; %s and %s both have ranges", i, o.Prefix, in.Prefix)
		}
		dhcpSubnet[s.Is4()] = in
	}
	v4 := dhcpSubnet[true]
	seen := map[string]string{}
	for i, h := range d.Hosts {
		if !macRE.MatchString(h.MAC) {
			add("hosts[%d]: mac %q must be six lower-case hex pairs separated by ':', e.g. 52:54:00:12:34:56", i, h.MAC)
		}
		ip, err := netip.ParseAddr(h.IP)
		switch {
		case err != nil || !ip.Is4() || ip.String() != h.IP:
			add("hosts[%d]: ip %q must be an IPv4 address", i, h.IP)
		case v4 == nil:
			add("hosts[%d]: ip %s needs an IPv4 subnet with DHCP ranges", i, ip)
		case !v4.Prefix.Contains(ip):
			add("hosts[%d]: ip %s is outside the DHCP subnet %s", i, ip, v4.Prefix)
		case ip == v4.Host || ip == v4.Prefix.Addr() || ip == lastAddr(v4.Prefix):
			add("hosts[%d]: ip %s is the host's own, the network or the broadcast address of %s", i, ip, v4.Prefix)
		}
		if h.Hostname != "" && !hostnameRE.MatchString(h.Hostname) {
			add("hosts[%d]: hostname %q is not a host name", i, h.Hostname)
		}
		for _, k := range []string{"mac " + h.MAC, "ip " + h.IP, "hostname " + h.Hostname} {
			if k == "hostname " {
				continue
			}
			if j, ok := seen[k]; ok {
				add("hosts: %s appears twice (%s and hosts[%d])", k, j, i)
			}
			seen[k] = fmt.Sprintf("hosts[%d]", i)
		}
	}
	return errs
}

func (n *Network) validateDNS() []FieldError {
	var errs []FieldError
	add := func(f string, a ...any) { errs = append(errs, FieldError{"dns", fmt.Sprintf(f, a...)}) }
	d := n.DNS
	if !d.Enabled && (len(d.Hosts) > 0 || len(d.Forwarders) > 0) {
		add("hosts and forwarders need enabled = true (or remove them)")
	}
	seen := map[string]int{}
	for i, h := range d.Hosts {
		ip, err := netip.ParseAddr(h.IP)
		if err != nil || ip.String() != h.IP {
			add("hosts[%d]: ip %q must be an IP address in canonical form", i, h.IP)
		}
		if len(h.Hostnames) == 0 {
			add("hosts[%d]: give at least one hostname", i)
		}
		for _, k := range append([]string{"ip " + h.IP}, prefixAll("hostname ", h.Hostnames)...) {
			if j, ok := seen[k]; ok {
				add("hosts: %s appears in hosts[%d] and hosts[%d]; libvirt allows each once", k, j, i)
			}
			seen[k] = i
		}
		for _, name := range h.Hostnames {
			if !hostnameRE.MatchString(name) {
				add("hosts[%d]: %q is not a host name", i, name)
			}
		}
	}
	for i, f := range d.Forwarders {
		if f.Addr == "" && f.Domain == "" {
			add("forwarders[%d]: give addr, domain or both", i)
		}
		if f.Addr != "" {
			if a, err := netip.ParseAddr(f.Addr); err != nil || a.String() != f.Addr {
				add("forwarders[%d]: addr %q must be an IP address in canonical form", i, f.Addr)
			}
		}
		if f.Domain != "" && !hostnameRE.MatchString(f.Domain) {
			add("forwarders[%d]: %q is not a DNS domain", i, f.Domain)
		}
	}
	return errs
}

func prefixAll(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

// ToXML is the network's definition. DHCP ranges must be filled (defaults applied) by then.
func (n *Network) ToXML() (*libvirtxml.Network, error) {
	x := &libvirtxml.Network{Name: n.Name}
	switch n.Mode {
	case ModeIsolated:
	case ModeNAT, ModeRoute, ModeOpen, ModeBridge:
		x.Forward = &libvirtxml.NetworkForward{Mode: n.Mode}
	default:
		return nil, fmt.Errorf("unknown network mode %q", n.Mode)
	}
	if n.Bridge != "" {
		x.Bridge = &libvirtxml.NetworkBridge{Name: n.Bridge}
	}
	if n.MTU != 0 {
		x.MTU = &libvirtxml.NetworkMTU{Size: n.MTU}
	}
	if n.Domain != "" {
		x.Domain = &libvirtxml.NetworkDomain{Name: n.Domain}
	}
	if n.DNS != nil {
		dns := &libvirtxml.NetworkDNS{Enable: "yes"}
		if !n.DNS.Enabled {
			dns.Enable = "no"
		}
		for _, f := range n.DNS.Forwarders {
			dns.Forwarders = append(dns.Forwarders, libvirtxml.NetworkDNSForwarder{Addr: f.Addr, Domain: f.Domain})
		}
		for _, h := range n.DNS.Hosts {
			dns.Host = append(dns.Host, DNSHostXML(h))
		}
		x.DNS = dns
	}
	for _, a := range n.Addresses {
		s, err := ParseAddress(a)
		if err != nil {
			return nil, err
		}
		ip := libvirtxml.NetworkIP{Address: s.Host.String(), Prefix: uint(s.Prefix.Bits())}
		if s.Host.Is6() {
			ip.Family = "ipv6"
		}
		x.IPs = append(x.IPs, ip)
	}
	if n.DHCP != nil && n.DHCP.Enabled {
		for _, r := range n.DHCP.Ranges {
			i := ipIndexFor(x, r.Start)
			if i < 0 {
				return nil, fmt.Errorf("DHCP range %s - %s is outside the network's subnets", r.Start, r.End)
			}
			ensureDHCP(&x.IPs[i]).Ranges = append(x.IPs[i].DHCP.Ranges, libvirtxml.NetworkDHCPRange{Start: r.Start, End: r.End})
		}
		for _, h := range n.DHCP.Hosts {
			i := ipIndexFor(x, h.IP)
			if i < 0 {
				return nil, fmt.Errorf("DHCP host %s (%s) is outside the network's subnets", h.MAC, h.IP)
			}
			ensureDHCP(&x.IPs[i]).Hosts = append(x.IPs[i].DHCP.Hosts, DHCPHostXML(h))
		}
	}
	return x, nil
}

func ensureDHCP(ip *libvirtxml.NetworkIP) *libvirtxml.NetworkDHCP {
	if ip.DHCP == nil {
		ip.DHCP = &libvirtxml.NetworkDHCP{}
	}
	return ip.DHCP
}

// DHCPHostXML and DNSHostXML are the elements network-update takes.
func DHCPHostXML(h DHCPHost) libvirtxml.NetworkDHCPHost {
	return libvirtxml.NetworkDHCPHost{MAC: h.MAC, IP: h.IP, Name: h.Hostname}
}

func DNSHostXML(h DNSHost) libvirtxml.NetworkDNSHost {
	x := libvirtxml.NetworkDNSHost{IP: h.IP}
	for _, n := range h.Hostnames {
		x.Hostnames = append(x.Hostnames, libvirtxml.NetworkDNSHostHostname{Hostname: n})
	}
	return x
}

// IPIndexFor is the index of the <ip> element (counting both families, as network-update's
// parentIndex does) whose subnet holds addr; -1 when none does.
func IPIndexFor(x *libvirtxml.Network, addr string) int { return ipIndexFor(x, addr) }

func ipIndexFor(x *libvirtxml.Network, addr string) int {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return -1
	}
	for i, ip := range x.IPs {
		s, err := subnetOf(ip)
		if err == nil && s.Prefix.Contains(a) {
			return i
		}
	}
	return -1
}

// subnetOf reads an <ip> element in prefix or netmask form.
func subnetOf(ip libvirtxml.NetworkIP) (Subnet, error) {
	a, err := netip.ParseAddr(ip.Address)
	if err != nil {
		return Subnet{}, fmt.Errorf("<ip address=%q>: %w", ip.Address, err)
	}
	bits := int(ip.Prefix)
	if ip.Netmask != "" {
		m, err := netip.ParseAddr(ip.Netmask)
		if err != nil || !m.Is4() {
			return Subnet{}, fmt.Errorf("<ip netmask=%q> is not an IPv4 netmask", ip.Netmask)
		}
		b := m.As4()
		v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		bits = 0
		for v&(1<<31) != 0 {
			bits++
			v <<= 1
		}
		if v != 0 {
			return Subnet{}, fmt.Errorf("<ip netmask=%q> is not a contiguous netmask", ip.Netmask)
		}
	} else if ip.Prefix == 0 && ip.Netmask == "" {
		// libvirt's default for a bare IPv4 address is its classful mask; we only see this
		// on hand-written networks.
		switch {
		case a.Is6():
			bits = 64
		case a.As4()[0] < 128:
			bits = 8
		case a.As4()[0] < 192:
			bits = 16
		default:
			bits = 24
		}
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return Subnet{}, err
	}
	return Subnet{Host: a, Prefix: p}, nil
}

// NetworkFromXML reads back what the spec models from a definition; everything libvirt
// fills in by itself (uuid, bridge MAC, stp, delay, NAT port ranges) is ignored.
func NetworkFromXML(x *libvirtxml.Network) (*Network, error) {
	n := &Network{Name: x.Name, Mode: ModeIsolated}
	if x.Forward != nil {
		n.Mode = x.Forward.Mode
		if n.Mode == "" {
			n.Mode = ModeNAT // libvirt's default for <forward/>
		}
	}
	if x.Bridge != nil {
		n.Bridge = x.Bridge.Name
	}
	if x.MTU != nil {
		n.MTU = x.MTU.Size
	}
	if x.Domain != nil {
		n.Domain = x.Domain.Name
	}
	if x.DNS != nil {
		d := &DNS{Enabled: x.DNS.Enable != "no", ManageHosts: true}
		for _, f := range x.DNS.Forwarders {
			d.Forwarders = append(d.Forwarders, Forwarder{Addr: f.Addr, Domain: f.Domain})
		}
		for _, h := range x.DNS.Host {
			dh := DNSHost{IP: h.IP}
			for _, hn := range h.Hostnames {
				dh.Hostnames = append(dh.Hostnames, hn.Hostname)
			}
			d.Hosts = append(d.Hosts, dh)
		}
		n.DNS = d
	}
	for _, ip := range x.IPs {
		s, err := subnetOf(ip)
		if err != nil {
			return nil, fmt.Errorf("network %s: %w", x.Name, err)
		}
		n.Addresses = append(n.Addresses, s.String())
		if ip.DHCP == nil {
			continue
		}
		if n.DHCP == nil {
			n.DHCP = &DHCP{Enabled: true, ManageHosts: true}
		}
		for _, r := range ip.DHCP.Ranges {
			n.DHCP.Ranges = append(n.DHCP.Ranges, Range{Start: r.Start, End: r.End})
		}
		for _, h := range ip.DHCP.Hosts {
			n.DHCP.Hosts = append(n.DHCP.Hosts, DHCPHost{MAC: strings.ToLower(h.MAC), IP: h.IP, Hostname: h.Name})
		}
	}
	return n, nil
}
