package libvirt

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
)

// This file holds the network steps of libvirt_cluster_machine: choosing and reserving
// the machine's address, removing the reservation, and waiting for the lease.

// ReserveMachineAddress reserves an address for mac on a network: the first IPv4 subnet's
// address capi.ChooseAddress picks for domainName, skipping every address already in a
// host entry (persistent or live) or leased to another MAC. The host entry carries no
// name, so the lease shows the hostname the guest sends. A host entry that already
// holds mac is an error: it belongs to another object (or to a machine of the same
// namespace and name) and is never taken over silently.
//
// Machines created in parallel by one provider process reserve one after the other on a
// network (choosing reads the entries, adding writes one: two at once could pick the same
// address).
func (c *Client) ReserveMachineAddress(ctx context.Context, network, domainName, mac string) (DHCPHost, error) {
	mu := reserveLock(c.uri.String() + " " + network)
	mu.Lock()
	defer mu.Unlock()
	mac = strings.ToLower(mac)
	net, err := c.ReadNetworkDHCP(ctx, network)
	if err != nil {
		return DHCPHost{}, err
	}
	if len(net.Subnets) == 0 {
		return DHCPHost{}, fmt.Errorf("network %s has no IPv4 subnet: a cluster machine needs one to reserve its address in", network)
	}
	taken := map[netip.Addr]bool{}
	for _, h := range append(append([]DHCPHost{}, net.Hosts...), net.Live...) {
		if h.MAC == mac {
			return DHCPHost{}, fmt.Errorf("network %s already has a DHCP host entry for MAC %s (ip %s): it belongs to another "+
				"machine with the same namespace and name, or is left over from one; remove it (virsh net-update %s delete ip-dhcp-host "+
				"\"<host mac='%s'/>\" --live --config) or choose another name", network, mac, h.IP, network, mac)
		}
		if a, err := netip.ParseAddr(h.IP); err == nil {
			taken[a] = true
		}
	}
	if net.Active {
		leases, err := c.NetworkLeases(ctx, network)
		if err != nil {
			return DHCPHost{}, err
		}
		for m, ls := range leases {
			if m == mac {
				continue
			}
			for _, l := range ls {
				if a, err := netip.ParseAddr(l.IP); err == nil {
					taken[a] = true
				}
			}
		}
	}
	ip, err := capi.ChooseAddress(net.Subnets[0], domainName, taken)
	if err != nil {
		return DHCPHost{}, fmt.Errorf("network %s: %w", network, err)
	}
	h := DHCPHost{MAC: mac, IP: ip.String()}
	if err := c.UpdateDHCPHost(ctx, network, DHCPAdd, h); err != nil {
		return DHCPHost{}, err
	}
	return h, nil
}

var reserveLocks sync.Map // "<uri> <network>" -> *sync.Mutex

func reserveLock(key string) *sync.Mutex {
	mu, _ := reserveLocks.LoadOrStore(key, &sync.Mutex{})
	return mu.(*sync.Mutex) //nolint:forcetypeassert // only *sync.Mutex is stored
}

// MachineReservation returns the host entry of mac in the network's persistent
// definition. A missing network is ErrNotFound; a missing entry is (nil, nil).
func (c *Client) MachineReservation(ctx context.Context, network, mac string) (*DHCPHost, error) {
	net, err := c.ReadNetworkDHCP(ctx, network)
	if err != nil {
		return nil, err
	}
	mac = strings.ToLower(mac)
	for _, h := range append(append([]DHCPHost{}, net.Hosts...), net.Live...) {
		if h.MAC == mac {
			return &h, nil
		}
	}
	return nil, nil
}

// ReleaseMachineAddress removes the host entry of mac from the network (live and
// persistent). An entry or network already gone is ErrNotFound.
func (c *Client) ReleaseMachineAddress(ctx context.Context, network, mac string) error {
	h, err := c.MachineReservation(ctx, network, mac)
	if err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("DHCP host entry %s in network %s: %w", mac, network, ErrNotFound)
	}
	return c.UpdateDHCPHost(ctx, network, DHCPDelete, *h)
}

// LeaseWaitError says no lease came in time.
type LeaseWaitError struct {
	Network, MAC string
	Timeout      time.Duration
	Seen         []Lease // leases of the MAC that did not match what was wanted
}

func (e *LeaseWaitError) Error() string {
	s := fmt.Sprintf("no DHCP lease for MAC %s on network %s within %s", e.MAC, e.Network, e.Timeout)
	if len(e.Seen) > 0 {
		var ips []string
		for _, l := range e.Seen {
			ips = append(ips, l.IP)
		}
		s += fmt.Sprintf(" (leases of other addresses seen: %s)", strings.Join(ips, ", "))
	}
	return s
}

// WaitForLease polls the network's DHCP leases until mac has a usable one (of wantIP
// when it is not empty), or timeout passes, or ctx ends. It returns the usable leases of
// mac. Only Create and Update call it: a refresh makes one look (NetworkLeases).
func (c *Client) WaitForLease(ctx context.Context, network, mac, wantIP string, timeout time.Duration) ([]Lease, error) {
	mac = strings.ToLower(mac)
	deadline := time.Now().Add(timeout)
	delay := time.Second
	var seen []Lease
	for {
		leases, err := c.NetworkLeases(ctx, network)
		if err != nil && (errors.Is(err, ErrNotFound) || !IsTransport(err)) {
			return nil, err
		}
		var usable []Lease
		seen = seen[:0]
		for _, l := range leases[mac] {
			if !UsableAddress(l.IP) {
				continue
			}
			if wantIP != "" && l.IP != wantIP {
				seen = append(seen, l)
				continue
			}
			usable = append(usable, l)
		}
		if len(usable) > 0 {
			return usable, nil
		}
		if time.Now().Add(delay).After(deadline) {
			return nil, &LeaseWaitError{Network: network, MAC: mac, Timeout: timeout, Seen: seen}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a DHCP lease of MAC %s on network %s: %w", mac, network, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*3/2, 5*time.Second)
	}
}
