package hostxml

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// Forward modes beyond a bridge of libvirt's own: guests get a macvtap link (private,
// vepa, passthrough; bridge with a forward block) or an SR-IOV VF (hostdev) on a host
// link of the pool the forward block names. Such a network has no addresses, DHCP or DNS.
const (
	ModePrivate     = "private"
	ModeVEPA        = "vepa"
	ModePassthrough = "passthrough"
	ModeHostdev     = "hostdev"
)

// Route is a static route libvirt adds on the host when the network starts: Address
// (a CIDR in network form) is reached through Gateway, a guest on the network.
type Route struct {
	Address string
	Gateway string
	Metric  uint // 0: libvirt's default (1)
}

// Forward is the host side of the network's forwarding: Dev the outgoing link (nat,
// route, open) or the first of the pool; Interfaces the pool of host links macvtap
// modes take from; PF an SR-IOV physical function whose VFs form the pool.
type Forward struct {
	Dev        string
	Interfaces []string
	PF         string
}

// macvtapMode reports whether guests of a network in mode get a link of a host pool
// (macvtap or hostdev) rather than a port on a bridge: bridge only with a forward block.
func (n *Network) macvtapMode() bool {
	switch n.Mode {
	case ModePrivate, ModeVEPA, ModePassthrough, ModeHostdev:
		return true
	case ModeBridge:
		return n.Forward != nil
	}
	return false
}

func (n *Network) validateForward(add func(attr, f string, a ...any)) {
	f := n.Forward
	switch {
	case n.macvtapMode():
		if f == nil || (f.Dev == "" && len(f.Interfaces) == 0 && f.PF == "") {
			add("forward", "mode = %q takes its guests' links from a pool of host links: set forward.dev, forward.interfaces or forward.pf", n.Mode)
			return
		}
		if n.Mode == ModeHostdev && f.PF == "" && len(f.Interfaces) == 0 {
			add("forward", "mode = \"hostdev\" hands out SR-IOV VFs: set forward.pf to the physical function (e.g. \"enp1s0f0\")")
		}
		if n.Mode == ModeBridge && n.Bridge != "" {
			add("forward", "mode = \"bridge\" either joins the host bridge named by bridge or makes macvtap links on forward's host links: keep one of them")
		}
		for attr, set := range map[string]bool{"addresses": len(n.Addresses) > 0, "dhcp": n.DHCP != nil, "dns": n.DNS != nil,
			"domain": n.Domain != "", "routes": len(n.Routes) > 0, "mtu": n.MTU != 0} {
			if set {
				add(attr, "mode = %q networks put guests straight on host links, with no bridge, addresses, DHCP or DNS of their own: remove %s", n.Mode, attr)
			}
		}
	case f != nil && n.Mode == ModeIsolated:
		add("forward", "mode = \"isolated\" forwards nothing: remove the forward block")
	case f != nil && n.Mode == ModeBridge:
		// unreachable: bridge with a forward block is macvtap
	case f != nil && (len(f.Interfaces) > 0 || f.PF != ""):
		add("forward", "mode = %q takes only forward.dev (the host link traffic leaves by); interfaces and pf are for macvtap and hostdev modes", n.Mode)
	case f != nil && f.Dev == "":
		// libvirt writes no forward block's content for it, so it would read back as none.
		add("forward", "the forward block sets nothing: set forward.dev (the host link traffic leaves by) or remove the block")
	}
	if f == nil {
		return
	}
	seen := map[string]bool{}
	for _, d := range append([]string{f.Dev, f.PF}, f.Interfaces...) {
		if d != "" && !ifnameRE.MatchString(d) {
			add("forward", "%q is not a host interface name (letters, digits, '_', '.', ':', '-'; at most 15 characters)", d)
		}
	}
	for _, d := range f.Interfaces {
		if seen[d] {
			add("forward", "interfaces names %s twice", d)
		}
		seen[d] = true
	}
	if f.Dev != "" && len(f.Interfaces) > 0 && f.Interfaces[0] != f.Dev {
		add("forward", "dev %s must be the first of interfaces (libvirt takes dev as the pool's first link), or leave dev out", f.Dev)
	}
}

func (n *Network) validateRoutes(subnets []netaddr.Subnet, add func(attr, f string, a ...any)) {
	if len(n.Routes) > 0 && len(n.Addresses) == 0 {
		add("routes", "a route's gateway is a guest on the network: give the network addresses")
	}
	for i, r := range n.Routes {
		p, err := netip.ParsePrefix(r.Address)
		switch {
		case err != nil:
			add("routes", "routes[%d]: address %q must be a CIDR such as 10.20.0.0/24", i, r.Address)
			continue
		case p.Masked() != p || p.String() != r.Address:
			add("routes", "routes[%d]: address %q must be the network itself, written canonically: %s", i, r.Address, p.Masked())
		}
		gw, err := netip.ParseAddr(r.Gateway)
		if r.Gateway == "" || err != nil || gw.String() != r.Gateway {
			add("routes", "routes[%d]: gateway %q must be an IP address (a guest on the network that routes %s)", i, r.Gateway, r.Address)
			continue
		}
		if gw.Is4() != p.Addr().Is4() {
			add("routes", "routes[%d]: gateway %s and address %s are of different IP families", i, gw, p)
			continue
		}
		if !slices.ContainsFunc(subnets, func(s netaddr.Subnet) bool { return s.Prefix.Contains(gw) }) && len(subnets) > 0 {
			add("routes", "routes[%d]: gateway %s is outside the network's subnets: libvirt routes only through a guest on the network", i, gw)
		}
	}
}

func (n *Network) forwardXML() *libvirtxml.NetworkForward {
	x := &libvirtxml.NetworkForward{Mode: n.Mode}
	if f := n.Forward; f != nil {
		x.Dev = f.Dev
		for _, d := range f.Interfaces {
			x.Interfaces = append(x.Interfaces, libvirtxml.NetworkForwardInterface{Dev: d})
		}
		if f.PF != "" {
			x.PFs = []libvirtxml.NetworkForwardPF{{Dev: f.PF}}
		}
	}
	return x
}

func routesXML(routes []Route) ([]libvirtxml.NetworkRoute, error) {
	var out []libvirtxml.NetworkRoute
	for _, r := range routes {
		p, err := netip.ParsePrefix(r.Address)
		if err != nil {
			return nil, fmt.Errorf("route %q: %w", r.Address, err)
		}
		x := libvirtxml.NetworkRoute{Address: p.Addr().String(), Prefix: uint(p.Bits()), Gateway: r.Gateway}
		if p.Addr().Is6() {
			x.Family = "ipv6"
		}
		if r.Metric != 0 {
			x.Metric = strconv.FormatUint(uint64(r.Metric), 10)
		}
		out = append(out, x)
	}
	return out, nil
}

// forwardFromXML reads the forward block back. libvirt lists dev as an interface of
// its own when only dev was given: that interface is dropped, so dev alone reads as dev.
// Entries without a name (a hand edit; libvirt refuses them) name no link and are left
// out, so a block of nothing reads as none, as it is written.
func forwardFromXML(x *libvirtxml.NetworkForward) *Forward {
	if x == nil {
		return nil
	}
	f := &Forward{Dev: x.Dev}
	for _, i := range x.Interfaces {
		if i.Dev != "" {
			f.Interfaces = append(f.Interfaces, i.Dev)
		}
	}
	if len(f.Interfaces) == 1 && f.Interfaces[0] == f.Dev {
		f.Interfaces = nil
	}
	for _, pf := range x.PFs {
		if pf.Dev != "" {
			f.PF = pf.Dev
			break
		}
	}
	if f.Dev == "" && len(f.Interfaces) == 0 && f.PF == "" {
		return nil
	}
	return f
}

func routesFromXML(xs []libvirtxml.NetworkRoute) ([]Route, error) {
	var out []Route
	for _, x := range xs {
		a, err := netip.ParseAddr(x.Address)
		if err != nil {
			return nil, fmt.Errorf("route address %q: %w", x.Address, err)
		}
		bits := int(x.Prefix)
		if x.Prefix == 0 && x.Netmask != "" {
			m, err := netip.ParseAddr(x.Netmask)
			if err != nil {
				return nil, fmt.Errorf("route netmask %q: %w", x.Netmask, err)
			}
			bits = ones(m)
		}
		r := Route{Address: netip.PrefixFrom(a, bits).Masked().String(), Gateway: x.Gateway}
		if x.Metric != "" {
			m, err := strconv.ParseUint(x.Metric, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("route metric %q: %w", x.Metric, err)
			}
			r.Metric = uint(m)
		}
		out = append(out, r)
	}
	return out, nil
}

// ones counts the leading one bits of a netmask.
func ones(m netip.Addr) int {
	n := 0
	for _, b := range m.AsSlice() {
		for i := 7; i >= 0 && b&(1<<i) != 0; i-- {
			n++
		}
	}
	return n
}

func forwardInterfaceXML(dev string) libvirtxml.NetworkForwardInterface {
	return libvirtxml.NetworkForwardInterface{Dev: dev}
}
