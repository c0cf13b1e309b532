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

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
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
var Modes = []string{ModeNAT, ModeRoute, ModeOpen, ModeIsolated, ModeBridge, ModePrivate, ModeVEPA, ModePassthrough, ModeHostdev}

// Network is a libvirt network as users write it.
type Network struct {
	Name      string
	Mode      string
	Bridge    string // "" = libvirt picks (virbrN); required for ModeBridge
	MTU       uint
	Domain    string
	Addresses []string // CIDRs; see netaddr.ParseCIDR
	DHCP      *DHCP    // nil: no DHCP server
	DNS       *DNS     // nil: libvirt's default (DNS on, nothing configured)
	// Beyond NAT (network_forward.go, network_portgroup.go, network_dns_records.go).
	Routes         []Route
	Forward        *Forward // nil: none (macvtap and hostdev modes need one)
	PortGroups     []PortGroup
	VLAN           *VLAN
	VirtualPort    *VirtualPort
	Bandwidth      *Bandwidth
	DnsmasqOptions []string
}

// DHCP is the network's DHCP service.
type DHCP struct {
	Enabled bool
	Ranges  []netaddr.Range
	// Hosts are fixed addresses. ManageHosts false means the spec says nothing about them
	// (libvirt_dhcp_reservation or others own them): none are written, any found are kept.
	Hosts       []netaddr.DHCPHost
	ManageHosts bool
}

// DNS is the network's DNS service (dnsmasq).
type DNS struct {
	Enabled     bool
	Hosts       []netaddr.DNSHost
	ManageHosts bool
	Forwarders  []Forwarder
	SRVs        []SRV
	TXTs        []TXT
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

// Subnets are the network's addresses, parsed; those that do not parse are left out
// (Validate reports them).
func (n *Network) Subnets() []netaddr.Subnet {
	var out []netaddr.Subnet
	for _, a := range n.Addresses {
		if s, err := netaddr.ParseCIDR(a); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// WantedHosts is what the spec says about the network's host entries, for
// netaddr.DiffHosts: the lists it manages, and their entries.
func (n *Network) WantedHosts() netaddr.Wanted {
	var w netaddr.Wanted
	if n.DHCP != nil && n.DHCP.ManageHosts {
		w.DHCP, w.DHCPHosts = true, n.DHCP.Hosts
	}
	if n.DNS != nil && n.DNS.ManageHosts {
		w.DNS, w.DNSHosts = true, n.DNS.Hosts
	}
	return w
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
	if n.Mode == ModeBridge && n.Forward == nil {
		if n.Bridge == "" {
			add("bridge", "mode = \"bridge\" attaches guests to an existing host bridge: set bridge to its name, e.g. \"br0\" (or forward.interfaces for macvtap links)")
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
	var subnets []netaddr.Subnet
	for _, a := range n.Addresses {
		s, err := netaddr.ParseCIDR(a)
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
		n.validateDNSRecords(add)
	}
	n.validateForward(add)
	n.validateRoutes(subnets, add)
	n.validatePortGroups(add)
	return errs
}

func (n *Network) validateDHCP(subnets []netaddr.Subnet) []FieldError {
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
		ranges = netaddr.DefaultRanges(subnets)
		if len(ranges) == 0 && len(subnets) == len(n.Addresses) {
			add("no IPv4 address to take a default DHCP range from: give ranges (e.g. for the IPv6 subnet)")
		}
	}
	// libvirt serves DHCP on at most one subnet per family.
	dhcpSubnet := map[bool]*netaddr.Subnet{} // is4 -> subnet
	for i, r := range ranges {
		if err := r.Check(); err != nil {
			add("ranges[%d]: %v", i, err)
			continue
		}
		s, en := r.Start, r.End
		var in *netaddr.Subnet
		for j := range subnets {
			if subnets[j].Prefix.Contains(s) && subnets[j].Prefix.Contains(en) {
				in = &subnets[j]
			}
		}
		if in == nil {
			add("ranges[%d]: %s - %s is outside the network's subnets (%s): choose a range inside one of them", i, s, en, strings.Join(n.Addresses, ", "))
			continue
		}
		if s == in.Prefix.Addr() || (s.Is4() && en == in.Broadcast()) {
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
		case !v4.Usable(ip):
			add("hosts[%d]: ip %s is the host's own, the network or the broadcast address of %s", i, ip, v4.Prefix)
		}
		if h.Name != "" && !hostnameRE.MatchString(h.Name) {
			add("hosts[%d]: hostname %q is not a host name", i, h.Name)
		}
		for _, k := range []string{"mac " + h.MAC, "ip " + h.IP, "hostname " + h.Name} {
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
	case ModeNAT, ModeRoute, ModeOpen, ModeBridge, ModePrivate, ModeVEPA, ModePassthrough, ModeHostdev:
		x.Forward = n.forwardXML()
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
			dns.Host = append(dns.Host, h.XML())
		}
		for _, r := range n.DNS.SRVs {
			dns.SRVs = append(dns.SRVs, r.XML())
		}
		for _, r := range n.DNS.TXTs {
			dns.TXTs = append(dns.TXTs, r.XML())
		}
		x.DNS = dns
	}
	x.VLAN, x.VirtualPort, x.Bandwidth = vlanXML(n.VLAN), virtualPortXML(n.VirtualPort), bandwidthXML(n.Bandwidth)
	x.DnsmasqOptions = dnsmasqXML(n.DnsmasqOptions)
	for _, g := range n.PortGroups {
		x.PortGroups = append(x.PortGroups, g.XML().NetworkPortGroup)
	}
	routes, err := routesXML(n.Routes)
	if err != nil {
		return nil, err
	}
	x.Routes = routes
	var subnets []netaddr.Subnet
	for _, a := range n.Addresses {
		s, err := netaddr.ParseCIDR(a)
		if err != nil {
			return nil, err
		}
		subnets = append(subnets, s)
		ip := libvirtxml.NetworkIP{Address: s.Host.String(), Prefix: uint(s.Prefix.Bits())}
		if s.Host.Is6() {
			ip.Family = "ipv6"
		}
		x.IPs = append(x.IPs, ip)
	}
	if n.DHCP != nil && n.DHCP.Enabled {
		for _, r := range n.DHCP.Ranges {
			i := netaddr.IndexFor(subnets, r.Start.String())
			if i < 0 {
				return nil, fmt.Errorf("DHCP range %s is outside the network's subnets", r)
			}
			ensureDHCP(&x.IPs[i]).Ranges = append(x.IPs[i].DHCP.Ranges, libvirtxml.NetworkDHCPRange{Start: r.Start.String(), End: r.End.String()})
		}
		for _, h := range n.DHCP.Hosts {
			i := netaddr.IndexFor(subnets, h.IP)
			if i < 0 {
				return nil, fmt.Errorf("%s is outside the network's subnets", h)
			}
			ensureDHCP(&x.IPs[i]).Hosts = append(x.IPs[i].DHCP.Hosts, h.XML())
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

// NetworkFromXML reads back what the spec models from a definition; everything libvirt
// fills in by itself (uuid, bridge MAC, stp, delay, NAT port ranges) is ignored.
func NetworkFromXML(x *libvirtxml.Network) (*Network, error) {
	n := &Network{Name: x.Name, Mode: ModeIsolated, VLAN: vlanFromXML(x.VLAN), VirtualPort: virtualPortFromXML(x.VirtualPort),
		Bandwidth: bandwidthFromXML(x.Bandwidth), DnsmasqOptions: dnsmasqFromXML(x.DnsmasqOptions)}
	if x.Forward != nil {
		n.Mode = x.Forward.Mode
		if n.Mode == "" {
			n.Mode = ModeNAT // libvirt's default for <forward/>
		}
		n.Forward = forwardFromXML(x.Forward)
	}
	for _, g := range x.PortGroups {
		n.PortGroups = append(n.PortGroups, portGroupFromXML(PortGroupXML{NetworkPortGroup: g}))
	}
	routes, err := routesFromXML(x.Routes)
	if err != nil {
		return nil, err
	}
	n.Routes = routes
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
		d.Hosts = netaddr.DNSHosts(x)
		dnsRecordsFromXML(x.DNS, d)
		n.DNS = d
	}
	subnets, err := netaddr.Subnets(x)
	if err != nil {
		return nil, err
	}
	for i, s := range subnets {
		n.Addresses = append(n.Addresses, s.String())
		if x.IPs[i].DHCP == nil {
			continue
		}
		if n.DHCP == nil {
			n.DHCP = &DHCP{Enabled: true, ManageHosts: true}
		}
		n.DHCP.Ranges = append(n.DHCP.Ranges, s.Ranges...)
	}
	if n.DHCP != nil {
		n.DHCP.Hosts = netaddr.DHCPHosts(x)
	}
	return n, nil
}
