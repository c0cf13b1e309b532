package hostxml

import (
	"fmt"
	"reflect"
	"slices"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// What of a network changes in place: libvirt 9.0's network-update (virNetworkUpdate)
// changes port groups (add, modify, delete), DNS SRV and TXT records and the forward
// block's interface pool (add, delete) in the definition and in the running network,
// without restarting it. DHCP and DNS host entries go through netaddr.DiffHosts.
// Everything else replaces the network.

// Section is a part of a network network-update changes.
type Section string

// Sections LiveChanges emits.
const (
	SectionPortGroup        Section = "portgroup"
	SectionDNSSRV           Section = "dns-srv"
	SectionDNSTXT           Section = "dns-txt"
	SectionForwardInterface Section = "forward-interface"
	SectionDHCPRange        Section = "ip-dhcp-range"
)

// SectionChange is one network-update: Elem is the element (libvirtxml or PortGroupXML).
type SectionChange struct {
	Section Section
	Op      netaddr.Op
	Elem    any
	What    string
	Parent  int // index of the <ip> element of a DHCP range (ignored for other sections)
}

func (c SectionChange) String() string { return fmt.Sprintf("%s %s %s", c.Op, c.Section, c.What) }

// InPlace reports whether have becomes want by network-update alone (host entries,
// port groups, SRV/TXT records, forward interfaces); autostart and active are not part
// of the spec.
func InPlace(have, want *Network) bool {
	strip := func(n *Network) Network {
		c := *n
		c.PortGroups = nil
		if n.DHCP != nil {
			d := *n.DHCP
			d.Hosts, d.ManageHosts = nil, false
			if liveRanges(have, want) {
				d.Ranges = nil
			}
			c.DHCP = &d
		}
		if n.DNS != nil {
			d := *n.DNS
			d.Hosts, d.ManageHosts, d.SRVs, d.TXTs = nil, false, nil, nil
			c.DNS = &d
		}
		if n.Forward != nil {
			f := *n.Forward
			f.Interfaces = nil
			c.Forward = &f
		}
		return c
	}
	return reflect.DeepEqual(strip(have), strip(want))
}

// LiveChanges is the network-update changes that turn have's port groups, SRV and TXT
// records and forward interfaces into want's: deletions first, then modifications (a
// port group that stops being the default before one that becomes it), then additions.
func LiveChanges(have, want *Network) []SectionChange {
	var del, mod, add []SectionChange
	pg := func(op netaddr.Op, g PortGroup) SectionChange {
		return SectionChange{Section: SectionPortGroup, Op: op, Elem: g.XML(), What: "port group " + g.Name}
	}
	for _, g := range have.PortGroups {
		i := slices.IndexFunc(want.PortGroups, func(w PortGroup) bool { return w.Name == g.Name })
		switch {
		case i < 0:
			del = append(del, pg(netaddr.Delete, g))
		case !reflect.DeepEqual(g, want.PortGroups[i]):
			mod = append(mod, pg(netaddr.Modify, want.PortGroups[i]))
		}
	}
	slices.SortStableFunc(mod, func(a, b SectionChange) int {
		return boolInt(isDefault(a)) - boolInt(isDefault(b))
	})
	for _, g := range want.PortGroups {
		if !slices.ContainsFunc(have.PortGroups, func(h PortGroup) bool { return h.Name == g.Name }) {
			add = append(add, pg(netaddr.Add, g))
		}
	}
	var hs, ws []SRV
	var ht, wt []TXT
	if have.DNS != nil {
		hs, ht = have.DNS.SRVs, have.DNS.TXTs
	}
	if want.DNS != nil {
		ws, wt = want.DNS.SRVs, want.DNS.TXTs
	}
	d, a := diffList(hs, ws, func(s SRV) SectionChange {
		return SectionChange{Section: SectionDNSSRV, Elem: s.XML(), What: fmt.Sprintf("DNS SRV _%s._%s %s", s.Service, s.Protocol, s.Target)}
	})
	del, add = append(del, d...), append(add, a...)
	d, a = diffList(ht, wt, func(t TXT) SectionChange {
		return SectionChange{Section: SectionDNSTXT, Elem: t.XML(), What: "DNS TXT " + t.Name}
	})
	del, add = append(del, d...), append(add, a...)
	d, a = diffList(have.Forward.Pool(), want.Forward.Pool(), func(dev string) SectionChange {
		return SectionChange{Section: SectionForwardInterface, Elem: forwardInterfaceXML(dev), What: "forward interface " + dev}
	})
	del, add = append(del, d...), append(add, a...)
	out := append(append(del, mod...), add...)
	if liveRanges(have, want) {
		// New ranges first: libvirt serves the subnet's DHCP from the ranges left.
		d, a = diffList(have.DHCP.Ranges, want.DHCP.Ranges, func(r netaddr.Range) SectionChange {
			return SectionChange{Section: SectionDHCPRange, Elem: libvirtxml.NetworkDHCPRange{Start: r.Start.String(), End: r.End.String()},
				What: "DHCP range " + r.String(), Parent: netaddr.IndexFor(want.Subnets(), r.Start.String())}
		})
		out = append(append(out, a...), d...)
	}
	return out
}

// liveRanges reports whether the DHCP ranges go from some to others (network-update);
// adding the first or removing the last replaces the network.
func liveRanges(have, want *Network) bool {
	return have.DHCP != nil && want.DHCP != nil && have.DHCP.Enabled && want.DHCP.Enabled &&
		len(have.DHCP.Ranges) > 0 && len(want.DHCP.Ranges) > 0
}

// diffList is the deletions (in have, not in want) and additions (the other way) of
// two lists of records that have no identity but their content.
func diffList[T comparable](have, want []T, change func(T) SectionChange) (del, add []SectionChange) {
	for _, h := range have {
		if !slices.Contains(want, h) {
			c := change(h)
			c.Op = netaddr.Delete
			del = append(del, c)
		}
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			c := change(w)
			c.Op = netaddr.Add
			add = append(add, c)
		}
	}
	return del, add
}

func isDefault(c SectionChange) bool {
	g, ok := c.Elem.(PortGroupXML)
	return ok && g.Default == "yes"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Pool is the forward block's interfaces as libvirt keeps them: dev alone is a pool of one.
func (f *Forward) Pool() []string {
	switch {
	case f == nil:
		return nil
	case len(f.Interfaces) == 0 && f.Dev != "":
		return []string{f.Dev}
	}
	return f.Interfaces
}
