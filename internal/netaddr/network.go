package netaddr

import (
	"net/netip"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Network is what a writer of a network's DHCP host entries reads before it writes: the
// subnets (to aim a change at its <ip> element and to check an address) and the entries
// of the persistent definition and of the running network (to find a clash).
type Network struct {
	Name    string
	Active  bool
	Subnets []Subnet   // every <ip> element, in order: the index is network-update's parentIndex
	Hosts   []DHCPHost // of the persistent definition
	Live    []DHCPHost // of the running network; nil while it does not run
}

// NewNetwork reads a network from its persistent definition and, when it runs, its live
// XML (nil otherwise).
func NewNetwork(def, live *libvirtxml.Network) (*Network, error) {
	ss, err := Subnets(def)
	if err != nil {
		return nil, err
	}
	n := &Network{Name: def.Name, Active: live != nil, Subnets: ss, Hosts: DHCPHosts(def)}
	if live != nil {
		n.Live = DHCPHosts(live)
	}
	return n, nil
}

// Entries are the host entries of the definition and of the running network: an address
// or a MAC in either is taken.
func (n *Network) Entries() []DHCPHost { return append(slices.Clone(n.Hosts), n.Live...) }

// Entry is the host entry of mac (persistent first, then live).
func (n *Network) Entry(mac string) (DHCPHost, bool) {
	mac = strings.ToLower(mac)
	for _, h := range n.Entries() {
		if h.MAC == mac {
			return h, true
		}
	}
	return DHCPHost{}, false
}

// Without is the network without the entries of mac (a reservation checked against the
// others while its own entry is being replaced).
func (n *Network) Without(mac string) *Network {
	mac = strings.ToLower(mac)
	drop := func(h DHCPHost) bool { return h.MAC == mac }
	c := *n
	c.Hosts = slices.DeleteFunc(slices.Clone(n.Hosts), drop)
	if n.Live != nil {
		c.Live = slices.DeleteFunc(slices.Clone(n.Live), drop)
	}
	return &c
}

// Change is the change of h's entry, aimed at the <ip> element whose subnet holds it.
func (n *Network) Change(op Op, h DHCPHost) HostChange { return DHCPChange(op, n.Subnets, h) }

// CheckReservation is CheckReservation against this network's IPv4 subnets and entries.
func (n *Network) CheckReservation(h DHCPHost, updating bool) error {
	return CheckReservation(n.Name, IPv4(n.Subnets), n.Entries(), h, updating)
}

// Taken are the addresses of the entries, but for those of mac.
func (n *Network) Taken(mac string) map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	for _, h := range n.Entries() {
		if a, err := netip.ParseAddr(h.IP); err == nil && h.MAC != mac {
			out[a] = true
		}
	}
	return out
}
