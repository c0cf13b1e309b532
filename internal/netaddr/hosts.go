package netaddr

import (
	"fmt"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// DHCPHost is a fixed address for a MAC (a <host> of a network's <dhcp>). MAC is kept
// lower-case, as libvirt compares it.
type DHCPHost struct{ MAC, IP, Name string }

func (h DHCPHost) String() string { return fmt.Sprintf("DHCP host %s (%s)", h.MAC, h.IP) }

// XML is the element network-update and definitions take.
func (h DHCPHost) XML() libvirtxml.NetworkDHCPHost {
	return libvirtxml.NetworkDHCPHost{MAC: h.MAC, IP: h.IP, Name: h.Name}
}

// DNSHost is an extra name (or names) for an address (a <host> of a network's <dns>).
type DNSHost struct {
	IP        string
	Hostnames []string
}

func (h DNSHost) String() string { return fmt.Sprintf("DNS host %s %v", h.IP, h.Hostnames) }

// XML is the element network-update and definitions take.
func (h DNSHost) XML() libvirtxml.NetworkDNSHost {
	x := libvirtxml.NetworkDNSHost{IP: h.IP}
	for _, n := range h.Hostnames {
		x.Hostnames = append(x.Hostnames, libvirtxml.NetworkDNSHostHostname{Hostname: n})
	}
	return x
}

// DHCPHosts lists the DHCP host entries of a definition, over all its <ip> elements.
func DHCPHosts(def *libvirtxml.Network) []DHCPHost {
	var out []DHCPHost
	for _, ip := range def.IPs {
		if ip.DHCP == nil {
			continue
		}
		for _, h := range ip.DHCP.Hosts {
			out = append(out, DHCPHost{MAC: strings.ToLower(h.MAC), IP: h.IP, Name: h.Name})
		}
	}
	return out
}

// DNSHosts lists the DNS host entries of a definition.
func DNSHosts(def *libvirtxml.Network) []DNSHost {
	if def.DNS == nil {
		return nil
	}
	var out []DNSHost
	for _, h := range def.DNS.Host {
		d := DNSHost{IP: h.IP}
		for _, n := range h.Hostnames {
			d.Hostnames = append(d.Hostnames, n.Hostname)
		}
		out = append(out, d)
	}
	return out
}

// Op is what a host change does.
type Op int

const (
	Add Op = iota
	Modify
	Delete
)

func (o Op) String() string {
	if o < Add || o > Delete {
		return fmt.Sprintf("op %d", int(o))
	}
	return [...]string{"add", "modify", "delete"}[o]
}

// HostChange is one network-update of a host entry: exactly one of DHCP and DNS is set.
// Parent is the index of the <ip> element a DHCP host belongs to (the one whose subnet
// holds its address; -1 lets libvirt pick, which takes the first <ip> with DHCP, maybe an
// IPv6 one).
type HostChange struct {
	Op     Op
	DHCP   *DHCPHost
	DNS    *DNSHost
	Parent int
}

func (c HostChange) String() string {
	switch {
	case c.DHCP != nil:
		return c.Op.String() + " " + c.DHCP.String()
	case c.DNS != nil:
		return c.Op.String() + " " + c.DNS.String()
	}
	return c.Op.String() + " of no host entry"
}

// DHCPChange is the change of one DHCP host entry of the network whose subnets are ss.
func DHCPChange(op Op, ss []Subnet, h DHCPHost) HostChange {
	return HostChange{Op: op, DHCP: &h, Parent: IndexFor(ss, h.IP)}
}

// Wanted is what a configuration says about a network's host entries. A list that is
// not managed is left as the host has it (other resources, such as
// libvirt_dhcp_reservation, own its entries).
type Wanted struct {
	DHCP, DNS bool // managed
	DHCPHosts []DHCPHost
	DNSHosts  []DNSHost
}

// DiffHosts is the network-update changes that turn the host entries of def into want,
// for the lists want manages: deletions first (libvirt refuses an entry whose MAC, IP or
// name another entry still has), then modifications, then additions.
func DiffHosts(def *libvirtxml.Network, want Wanted) ([]HostChange, error) {
	ss, err := Subnets(def)
	if err != nil {
		return nil, err
	}
	var dels, mods, adds []HostChange
	if want.DHCP {
		wanted := map[string]DHCPHost{}
		for _, h := range want.DHCPHosts {
			wanted[h.MAC] = h
		}
		have := map[string]bool{}
		for _, h := range DHCPHosts(def) {
			have[h.MAC] = true
			switch w, ok := wanted[h.MAC]; {
			case !ok:
				dels = append(dels, DHCPChange(Delete, ss, h))
			case w == h:
			case w.IP == h.IP:
				mods = append(mods, DHCPChange(Modify, ss, w))
			default: // another <ip> element may hold the new address: delete and add
				dels = append(dels, DHCPChange(Delete, ss, h))
				adds = append(adds, DHCPChange(Add, ss, w))
			}
		}
		for _, h := range want.DHCPHosts {
			if !have[h.MAC] {
				adds = append(adds, DHCPChange(Add, ss, h))
			}
		}
	}
	if want.DNS {
		wanted := map[string]DNSHost{}
		for _, h := range want.DNSHosts {
			wanted[h.IP] = h
		}
		have := map[string]DNSHost{}
		for _, h := range DNSHosts(def) {
			have[h.IP] = h
			// libvirt cannot modify a DNS host entry: delete and add.
			if w, ok := wanted[h.IP]; !ok || !slices.Equal(w.Hostnames, h.Hostnames) {
				dels = append(dels, HostChange{Op: Delete, DNS: &h, Parent: -1})
			}
		}
		for _, h := range want.DNSHosts {
			if g, ok := have[h.IP]; !ok || !slices.Equal(g.Hostnames, h.Hostnames) {
				adds = append(adds, HostChange{Op: Add, DNS: &h, Parent: -1})
			}
		}
	}
	return append(append(dels, mods...), adds...), nil
}
