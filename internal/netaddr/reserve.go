package netaddr

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
)

// CheckReservation says whether h may be added to (or, updating, replace the entry of
// its MAC in) the DHCP host entries of network name, whose IPv4 subnets are ss and whose
// entries (persistent and live) are entries: the address inside a subnet and none of its
// special addresses, no other entry with the same MAC (unless updating) or the same IP.
func CheckReservation(name string, ss []Subnet, entries []DHCPHost, h DHCPHost, updating bool) error {
	ip, err := netip.ParseAddr(h.IP)
	if err != nil || !ip.Is4() {
		return fmt.Errorf("ip %q is not an IPv4 address", h.IP)
	}
	if len(ss) == 0 {
		return fmt.Errorf("network %s has no IPv4 subnet with DHCP: a reservation needs an <ip> element with <dhcp>", name)
	}
	var prefixes []string
	inside := false
	for _, s := range ss {
		prefixes = append(prefixes, s.Prefix.String())
		if !s.Contains(ip) {
			continue
		}
		switch {
		case ip == s.Prefix.Addr():
			return fmt.Errorf("ip %s is the network address of %s on network %s: choose a host address", ip, s.Prefix, name)
		case ip == s.Host:
			return fmt.Errorf("ip %s is network %s's own address (the guests' gateway): choose another address in %s", ip, name, s.Prefix)
		case s.Prefix.Bits() < 32 && ip == s.Broadcast():
			return fmt.Errorf("ip %s is the broadcast address of %s on network %s: choose a host address", ip, s.Prefix, name)
		}
		inside = true
	}
	if !inside {
		return fmt.Errorf("ip %s is outside network %s's subnets (%s): choose an address inside one of them", ip, name, strings.Join(prefixes, ", "))
	}
	for _, e := range entries {
		switch {
		case e.MAC == h.MAC && !updating:
			return fmt.Errorf("network %s already has a DHCP host entry for MAC %s (ip %s): import it (id %s/%s) or remove it first", name, h.MAC, e.IP, name, h.MAC)
		case e.IP == h.IP && e.MAC != h.MAC:
			return fmt.Errorf("ip %s on network %s is already reserved for MAC %s: choose another address", h.IP, name, e.MAC)
		}
	}
	return nil
}

var locks sync.Map // key -> *sync.Mutex

// Lock serialises, within this process, everything that reads a network's host entries
// to decide and then writes one (a reservation choosing a free address, a network update
// of its host lists, a reservation checked against the others): two such writers at once
// could both take one address. key names the host and the network (e.g. URI + " " +
// name). It returns the unlock.
func Lock(key string) (unlock func()) {
	m, _ := locks.LoadOrStore(key, &sync.Mutex{})
	mu := m.(*sync.Mutex) //nolint:forcetypeassert // only *sync.Mutex is stored
	mu.Lock()
	return mu.Unlock
}

// LockNetwork is Lock for network on the host of uri: the key every writer of that
// network's host entries takes.
func LockNetwork(uri, network string) (unlock func()) { return Lock(uri + " " + network) }
