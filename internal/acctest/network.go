package acctest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

// TestNetwork is an isolated libvirt network made for one test.
type TestNetwork struct {
	Name   string
	Prefix string // e.g. 10.213.7
}

// Addr is <prefix>.<host>.
func (n TestNetwork) Addr(host int) string { return fmt.Sprintf("%s.%d", n.Prefix, host) }

// CreateNetwork defines an isolated network (no forwarding: guest traffic stays on its
// bridge) with a /24 in 10.200-249.x, gateway .1 (netmask form, as virsh users write it)
// and DHCP range .100-.199; started when active. It is removed at cleanup (and by the
// sweeper if a run dies).
func CreateNetwork(t testing.TB, active bool) TestNetwork {
	t.Helper()
	n := TestNetwork{Name: RandomName("net"), Prefix: fmt.Sprintf("10.%d.%d", 200+rand.IntN(50), rand.IntN(256))}
	DefineNetwork(t, &libvirtxml.Network{Name: n.Name, IPs: []libvirtxml.NetworkIP{{
		Address: n.Addr(1), Netmask: "255.255.255.0",
		DHCP: &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{{Start: n.Addr(100), End: n.Addr(199)}}},
	}}}, active)
	return n
}

// DefineNetwork defines a network from def, started when active, and removes it at cleanup.
func DefineNetwork(t testing.TB, def *libvirtxml.Network, active bool) {
	t.Helper()
	doc, err := def.Marshal()
	if err != nil {
		t.Fatalf("network %s: %v", def.Name, err)
	}
	c := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = c.Write(ctx, "define network "+def.Name, func(l *golibvirt.Libvirt) error {
		net, err := l.NetworkDefineXML(doc)
		if err != nil {
			return err
		}
		if active {
			return l.NetworkCreate(net)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("create test network: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "remove network "+def.Name, func(l *golibvirt.Libvirt) error {
			net, err := l.NetworkLookupByName(def.Name)
			if err != nil {
				return err
			}
			_ = l.NetworkDestroy(net)
			return l.NetworkUndefine(net)
		})
	})
}

// ChangeDHCPHost adds or deletes a DHCP host entry of network behind Terraform's back
// (live and persistent, as libvirt_dhcp_reservation writes it).
func ChangeDHCPHost(t testing.TB, network string, op netaddr.Op, h netaddr.DHCPHost) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := Client(t)
	n, err := c.ReadNetworkDHCP(ctx, network)
	if err == nil {
		err = c.UpdateNetwork(ctx, network, []netaddr.HostChange{n.Change(op, h)})
	}
	if err != nil {
		t.Fatalf("%s %s in network %s: %v", op, h, network, err)
	}
}

// StartGuestOn starts a transient, diskless domain (it idles in the firmware) with one
// interface on network; it is destroyed at cleanup.
func StartGuestOn(t testing.TB, network string) {
	t.Helper()
	dom := &libvirtxml.Domain{Type: "qemu", Name: RandomName("dom"), Memory: &libvirtxml.DomainMemory{Value: 32, Unit: "MiB"},
		VCPU: &libvirtxml.DomainVCPU{Value: 1}, OS: &libvirtxml.DomainOS{Type: &libvirtxml.DomainOSType{Arch: "x86_64", Type: "hvm"}},
		Devices: &libvirtxml.DomainDeviceList{Interfaces: []libvirtxml.DomainInterface{{
			Source: &libvirtxml.DomainInterfaceSource{Network: &libvirtxml.DomainInterfaceSourceNetwork{Network: network}},
			Model:  &libvirtxml.DomainInterfaceModel{Type: "virtio"},
		}}}}
	doc, err := dom.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	c := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Write(ctx, "start domain "+dom.Name, func(l *golibvirt.Libvirt) error {
		_, err := l.DomainCreateXML(doc, 0)
		return err
	}); err != nil {
		t.Fatalf("start a guest on %s: %v", network, err)
	}
	t.Cleanup(func() {
		_ = c.Write(context.Background(), "destroy domain "+dom.Name, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(dom.Name)
			if err != nil {
				return err
			}
			return l.DomainDestroy(d)
		})
	})
}

// BlockCapacity is the size of disk (e.g. vda) as the running domain sees it (QEMU's own
// view, which an online grow changes).
func BlockCapacity(ctx context.Context, t testing.TB, domain, disk string) (uint64, error) {
	var capacity uint64
	err := Client(t).Read(ctx, "block info of "+domain, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(domain)
		if err != nil {
			return err
		}
		_, capacity, _, err = l.DomainGetBlockInfo(d, disk, 0) // allocation, capacity, physical
		return err
	})
	return capacity, err
}
