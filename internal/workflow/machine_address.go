package workflow

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// This file is a cluster machine's address: chosen by capi's policy and reserved as a
// DHCP host entry, looked up, released, and waited for as a lease.

// AddressAPI is what reserving, releasing and waiting for a machine's address asks of
// libvirt.
type AddressAPI interface {
	URI() *libvirt.URI // which host: the per-network lock is per host and network
	ReadNetworkDHCP(ctx context.Context, network string) (*netaddr.Network, error)
	NetworkLeases(ctx context.Context, network string) (map[string][]libvirt.Lease, error)
	UpdateNetwork(ctx context.Context, network string, changes []netaddr.HostChange) error
}

// lockNetwork takes the lock every writer of the network's host entries takes.
func lockNetwork(api AddressAPI, network string) (unlock func()) {
	return netaddr.LockNetwork(api.URI().String(), network)
}

// ReserveAddress reserves an address for mac on a network: the first IPv4 subnet's
// address capi.ChooseAddress picks for domainName, skipping every address already in a
// host entry (persistent or live) or leased to another MAC. The host entry carries no
// name, so the lease shows the hostname the guest sends. A host entry that already
// holds mac is an error: it belongs to another object (or to a machine of the same
// namespace and name) and is never taken over silently.
//
// It holds the network's lock from the read to the write: choosing reads the entries,
// adding writes one, and another writer in between (a machine, a libvirt_dhcp_reservation,
// a libvirt_network's host list) could take the same address.
func ReserveAddress(ctx context.Context, api AddressAPI, network, domainName, mac string) (netaddr.DHCPHost, error) {
	defer lockNetwork(api, network)()
	mac = strings.ToLower(mac)
	net, err := api.ReadNetworkDHCP(ctx, network)
	if err != nil {
		return netaddr.DHCPHost{}, err
	}
	v4 := netaddr.IPv4(net.Subnets)
	if len(v4) == 0 {
		return netaddr.DHCPHost{}, fmt.Errorf("network %s has no IPv4 subnet: a cluster machine needs one to reserve its address in", network)
	}
	if h, ok := net.Entry(mac); ok {
		return netaddr.DHCPHost{}, fmt.Errorf("network %s already has a DHCP host entry for MAC %s (ip %s): it belongs to another "+
			"machine with the same namespace and name, or is left over from one; remove it (virsh net-update %s delete ip-dhcp-host "+
			"\"<host mac='%s'/>\" --live --config) or choose another name", network, mac, h.IP, network, mac)
	}
	taken := net.Taken(mac)
	if net.Active {
		leases, err := api.NetworkLeases(ctx, network)
		if err != nil {
			return netaddr.DHCPHost{}, err
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
	ip, err := capi.ChooseAddress(v4[0], domainName, taken)
	if err != nil {
		return netaddr.DHCPHost{}, fmt.Errorf("network %s: %w", network, err)
	}
	h := netaddr.DHCPHost{MAC: mac, IP: ip.String()}
	if err := api.UpdateNetwork(ctx, network, []netaddr.HostChange{net.Change(netaddr.Add, h)}); err != nil {
		return netaddr.DHCPHost{}, err
	}
	return h, nil
}

// MachineReservation returns the host entry of mac in the network (persistent or live).
// A missing network is ErrNotFound; a missing entry is (nil, nil).
func MachineReservation(ctx context.Context, api interface {
	ReadNetworkDHCP(ctx context.Context, network string) (*netaddr.Network, error)
}, network, mac string) (*netaddr.DHCPHost, error) {
	net, err := api.ReadNetworkDHCP(ctx, network)
	if err != nil {
		return nil, err
	}
	if h, ok := net.Entry(mac); ok {
		return &h, nil
	}
	return nil, nil
}

// ReleaseAddress removes the host entry of mac from the network (live and persistent),
// under the network's lock. An entry or network already gone is ErrNotFound.
func ReleaseAddress(ctx context.Context, api AddressAPI, network, mac string) error {
	defer lockNetwork(api, network)()
	net, err := api.ReadNetworkDHCP(ctx, network)
	if err != nil {
		return err
	}
	h, ok := net.Entry(mac)
	if !ok {
		return fmt.Errorf("DHCP host entry %s in network %s: %w", mac, network, libvirt.ErrNotFound)
	}
	return api.UpdateNetwork(ctx, network, []netaddr.HostChange{net.Change(netaddr.Delete, h)})
}

// LeaseWaitError says no lease came in time.
type LeaseWaitError struct {
	Network, MAC string
	Timeout      time.Duration
	Seen         []libvirt.Lease // leases of the MAC that did not match what was wanted
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
// mac. While the daemon does not answer it goes on waiting. Only Create and Update call
// it: a refresh makes one look (NetworkLeases).
func WaitForLease(ctx context.Context, api interface {
	NetworkLeases(ctx context.Context, network string) (map[string][]libvirt.Lease, error)
}, network, mac, wantIP string, timeout time.Duration) ([]libvirt.Lease, error) {
	mac = strings.ToLower(mac)
	var usable, seen []libvirt.Lease
	err := poll.Until(ctx, poll.Options{Every: time.Second, Max: 5 * time.Second, Factor: 1.5, Timeout: timeout}, func(ctx context.Context) (bool, error) {
		leases, err := api.NetworkLeases(ctx, network)
		if err != nil && (errors.Is(err, libvirt.ErrNotFound) || !libvirt.IsTransport(err)) {
			return false, err
		}
		usable, seen = nil, nil
		for _, l := range leases[mac] {
			switch {
			case !libvirt.UsableAddress(l.IP):
			case wantIP != "" && l.IP != wantIP:
				seen = append(seen, l)
			default:
				usable = append(usable, l)
			}
		}
		return len(usable) > 0, nil
	})
	switch {
	case errors.Is(err, poll.ErrTimeout):
		return nil, &LeaseWaitError{Network: network, MAC: mac, Timeout: timeout, Seen: seen}
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("waiting for a DHCP lease of MAC %s on network %s: %w", mac, network, ctx.Err())
	case err != nil:
		return nil, err
	}
	return usable, nil
}
