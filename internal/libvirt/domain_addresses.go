package libvirt

import (
	"context"
	"net"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Address is one IP address of a guest interface.
type Address struct {
	IP     string
	Prefix uint32
}

// UsableAddress is what users want to see: not loopback, not link-local, not unspecified.
func UsableAddress(ip string) bool {
	a := net.ParseIP(strings.SplitN(ip, "%", 2)[0])
	return a != nil && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() && !a.IsUnspecified()
}

// NetworkLeases returns the DHCP leases of a libvirt network by lower-case MAC. A missing
// network is ErrNotFound.
func (c *Client) NetworkLeases(ctx context.Context, network string) (map[string][]Lease, error) {
	out := map[string][]Lease{}
	err := c.Read(ctx, "read DHCP leases of network "+network, func(l *golibvirt.Libvirt) error {
		n, err := l.NetworkLookupByName(network)
		if err != nil {
			return err
		}
		leases, _, err := l.NetworkGetDhcpLeases(n, nil, 1, 0)
		if err != nil {
			return err
		}
		for _, ls := range leases {
			if len(ls.Mac) == 0 {
				continue
			}
			mac := strings.ToLower(ls.Mac[0])
			le := Lease{MAC: mac, IP: ls.Ipaddr, Prefix: ls.Prefix, Expiry: time.Unix(ls.Expirytime, 0)}
			if len(ls.Hostname) > 0 {
				le.Hostname = ls.Hostname[0]
			}
			out[mac] = append(out[mac], le)
		}
		return nil
	})
	return out, err
}

// Lease is one DHCP lease of a libvirt network.
type Lease struct {
	MAC      string
	IP       string
	Prefix   uint32
	Hostname string
	Expiry   time.Time
}

// AgentAddresses asks the guest agent for the guest's interfaces, by lower-case MAC.
// Callers bound the wait with ctx (a refresh gives it about a second).
func (c *Client) AgentAddresses(ctx context.Context, id string) (map[string][]Address, error) {
	out := map[string][]Address{}
	// Write, not Read: a deadline that closes the connection must not be retried.
	err := c.Write(ctx, "ask the guest agent of domain "+id+" for addresses", func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		ifaces, err := l.DomainInterfaceAddresses(d, uint32(golibvirt.DomainInterfaceAddressesSrcAgent), 0)
		if err != nil {
			return err
		}
		for _, i := range ifaces {
			if len(i.Hwaddr) == 0 {
				continue
			}
			mac := strings.ToLower(i.Hwaddr[0])
			for _, a := range i.Addrs {
				out[mac] = append(out[mac], Address{IP: a.Addr, Prefix: a.Prefix})
			}
		}
		return nil
	})
	return out, err
}
