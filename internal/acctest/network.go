package acctest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// TestNetwork is an isolated libvirt network made for one test.
type TestNetwork struct {
	Name   string
	Prefix string // e.g. 10.213.7
}

// Addr is <prefix>.<host>.
func (n TestNetwork) Addr(host int) string { return fmt.Sprintf("%s.%d", n.Prefix, host) }

// CreateNetwork defines an isolated network (no forwarding: guest traffic stays on its
// bridge) with a /24 in 10.200-249.x, gateway .1 and DHCP range .100-.199; started when
// active. It is removed at cleanup (and by the sweeper if a run dies).
func CreateNetwork(t testing.TB, active bool) TestNetwork {
	t.Helper()
	n := TestNetwork{Name: RandomName("net"), Prefix: fmt.Sprintf("10.%d.%d", 200+rand.IntN(50), rand.IntN(256))}
	xml := fmt.Sprintf(`<network>
  <name>%s</name>
  <ip address='%s' netmask='255.255.255.0'>
    <dhcp><range start='%s' end='%s'/></dhcp>
  </ip>
</network>`, n.Name, n.Addr(1), n.Addr(100), n.Addr(199))
	c := Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.Write(ctx, "define network "+n.Name, func(l *golibvirt.Libvirt) error {
		net, err := l.NetworkDefineXML(xml)
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
		_ = c.Write(ctx, "remove network "+n.Name, func(l *golibvirt.Libvirt) error {
			net, err := l.NetworkLookupByName(n.Name)
			if err != nil {
				return err
			}
			_ = l.NetworkDestroy(net)
			return l.NetworkUndefine(net)
		})
	})
	return n
}
