package provider_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// These tests lose the answers to network define, pool define and snapshot create (and
// to the steps after them) on the provider's connection, as a libvirtd restart or a
// dropped link does between doing a thing and saying so. The apply must still end with
// the host holding exactly what the state holds: nothing untracked, nothing twice.

// proxiedProvider is the terraform/provider preamble with the provider talking to the
// daemon through a proxy at addr (qemu+tcp).
func proxiedProvider(addr string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}

provider "libvirt" {
  uri = "qemu+tcp://%s/system"
}
`, addr)
}

// lostAll fails unless every channel (a fault's "it happened") was closed.
func lostAll(faults map[string]<-chan struct{}) error {
	var errs []error
	for what, ch := range faults {
		select {
		case <-ch:
		default:
			errs = append(errs, fmt.Errorf("the fault on the %s never happened: the test proved nothing", what))
		}
	}
	return errors.Join(errs...)
}

// hostNames lists, sorted, the names starting with prefix that list returns from the test
// host (over the test's own connection).
func hostNames(t *testing.T, what string, list func(*golibvirt.Libvirt) ([]string, error), prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names []string
	err := acctest.Client(t).Read(ctx, "list "+what, func(l *golibvirt.Libvirt) error {
		all, err := list(l)
		names = names[:0]
		for _, n := range all {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
		return err
	})
	if err != nil {
		t.Fatalf("list %s: %v", what, err)
	}
	sort.Strings(names)
	return names
}

func listNetworks(l *golibvirt.Libvirt) ([]string, error) {
	ns, _, err := l.ConnectListAllNetworks(1, 0)
	var names []string
	for _, n := range ns {
		names = append(names, n.Name)
	}
	return names, err
}

func listPools(l *golibvirt.Libvirt) ([]string, error) {
	ps, _, err := l.ConnectListAllStoragePools(1, 0)
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names, err
}

func listSnapshots(domain string) func(*golibvirt.Libvirt) ([]string, error) {
	return func(l *golibvirt.Libvirt) ([]string, error) {
		d, err := l.DomainLookupByName(domain)
		if err != nil {
			return nil, err
		}
		ss, _, err := l.DomainListAllSnapshots(d, 1, 0)
		var names []string
		for _, s := range ss {
			names = append(names, s.Name)
		}
		return names, err
	}
}

// stateNames lists, sorted, the name attribute of every resource of type typ in state.
func stateNames(s *terraform.State, typ string) []string {
	var names []string
	for _, r := range s.RootModule().Resources {
		if r.Type == typ {
			names = append(names, r.Primary.Attributes["name"])
		}
	}
	sort.Strings(names)
	return names
}

// hostMatchesState: the host holds exactly want, and so does the state.
func hostMatchesState(host []string, s *terraform.State, typ string, want ...string) error {
	if state := stateNames(s, typ); !slices.Equal(host, want) || !slices.Equal(state, want) {
		return fmt.Errorf("%s: host holds %v, state %v; want exactly %v on both", typ, host, state, want)
	}
	return nil
}

// TestAccLostWrites_network: the answers to the network's define, autostart and start
// are each lost. The apply succeeds with the one network, running and autostarted, in
// state; nothing else on the host. Before, the lost define failed the apply and left an
// untracked network.
func TestAccLostWrites_network(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	prefix := acctest.RandomName("lostnet")
	name := prefix + "-n"
	// 10.100-149.x: apart from the other network tests' subnets.
	v4 := fmt.Sprintf("10.%d.%d", 100+rand.IntN(50), rand.IntN(256))
	config := proxiedProvider(proxy.Addr) + fmt.Sprintf(`
resource "libvirt_network" "n" {
  name      = %q
  mode      = "isolated"
  addresses = ["%s.0/24"]
  autostart = true
}
`, name, v4)
	faults := map[string]<-chan struct{}{}
	t.Cleanup(func() { _ = acctest.Client(t).DeleteNetwork(context.Background(), name) })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"network " + name: acctest.NetworkLookup(name)}),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				faults["network define"] = proxy.LoseReplyTo(acctest.ProcNetworkDefineXML, time.Second)
				faults["network autostart"] = proxy.LoseReplyTo(acctest.ProcNetworkSetAutostart, time.Second)
				faults["network start"] = proxy.LoseReplyTo(acctest.ProcNetworkCreate, time.Second)
			},
			Config:           config,
			ConfigPlanChecks: emptyPlanAfterApply,
			Check: func(s *terraform.State) error {
				if err := lostAll(faults); err != nil {
					return err
				}
				if err := hostMatchesState(hostNames(t, "networks", listNetworks, prefix), s, "libvirt_network", name); err != nil {
					return err
				}
				st, err := acctest.Client(t).ReadNetwork(context.Background(), name)
				if err != nil {
					return err
				}
				if !st.Active || !st.Autostart {
					return fmt.Errorf("network %s: active %t autostart %t, want both", name, st.Active, st.Autostart)
				}
				if id := s.RootModule().Resources["libvirt_network.n"].Primary.ID; id != st.UUID {
					return fmt.Errorf("state id %s, host's network has uuid %s", id, st.UUID)
				}
				return nil
			},
		}},
	})
}

// TestAccLostWrites_pool: the answers to the pool's define, build, start and autostart
// are each lost. The apply succeeds with the one pool, running and autostarted, in state.
// Before, the lost define failed the apply and left an untracked pool.
func TestAccLostWrites_pool(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	prefix := acctest.RandomName("lostpool")
	name := prefix + "-p"
	dir := testPoolDir(name)
	config := proxiedProvider(proxy.Addr) + fmt.Sprintf(`
resource "libvirt_pool" "p" {
  name        = %q
  type        = "dir"
  target_path = %q
  autostart   = true
}
`, name, dir)
	faults := map[string]<-chan struct{}{}
	t.Cleanup(func() { _, _ = acctest.Client(t).DeletePool(context.Background(), name, true) })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"pool " + name: acctest.PoolLookup(name)}),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				faults["pool define"] = proxy.LoseReplyTo(acctest.ProcStoragePoolDefineXML, time.Second)
				faults["pool build"] = proxy.LoseReplyTo(acctest.ProcStoragePoolBuild, time.Second)
				faults["pool start"] = proxy.LoseReplyTo(acctest.ProcStoragePoolCreate, time.Second)
				faults["pool autostart"] = proxy.LoseReplyTo(acctest.ProcStoragePoolSetAutostart, time.Second)
			},
			Config:           config,
			ConfigPlanChecks: emptyPlanAfterApply,
			Check: func(s *terraform.State) error {
				if err := lostAll(faults); err != nil {
					return err
				}
				if err := hostMatchesState(hostNames(t, "pools", listPools, prefix), s, "libvirt_pool", name); err != nil {
					return err
				}
				st, err := acctest.Client(t).ReadPool(context.Background(), name)
				if err != nil {
					return err
				}
				if !st.Active || !st.Autostart {
					return fmt.Errorf("pool %s: active %t autostart %t, want both", name, st.Active, st.Autostart)
				}
				if id := s.RootModule().Resources["libvirt_pool.p"].Primary.ID; id != st.UUID {
					return fmt.Errorf("state id %s, host's pool has uuid %s", id, st.UUID)
				}
				return nil
			},
		}},
	})
}

// lostSnapDomain defines a shut-off domain on a qcow2 overlay of the tiny guest (no
// boot: a disk-only snapshot wants it shut off), removed with its snapshots at the end.
func lostSnapDomain(t *testing.T, name string) {
	t.Helper()
	disk := domAccOverlay(t, name+".qcow2")
	c := acctest.Client(t)
	xml := fmt.Sprintf(`<domain type='%s'><name>%s</name><memory unit='MiB'>128</memory><vcpu>1</vcpu>
<os><type arch='x86_64'>hvm</type></os><devices><disk type='file' device='disk'><driver name='qemu' type='qcow2'/>
<source file='%s'/><target dev='vda' bus='virtio'/></disk></devices></domain>`, acctest.DefaultDomainType(), name, disk)
	err := c.Write(domAccCtx(t), "define "+name, func(l *golibvirt.Libvirt) error {
		_, err := l.DomainDefineXML(xml)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "remove domain "+name, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(name)
			if err != nil {
				return err
			}
			return l.DomainUndefineFlags(d, libvirt.DomainUndefineAll)
		})
	})
}

func snapshotConfig(addr, domain, snap string) string {
	return proxiedProvider(addr) + fmt.Sprintf(`
resource "libvirt_snapshot" "s" {
  domain_id = %q
  name      = %q
}
`, domain, snap)
}

// TestAccLostWrites_snapshotRestart: the snapshot is taken, its answer lost, and the
// daemon seems down for a few seconds after (every link cut, connections refused), as
// across a libvirtd restart. The apply waits for the daemon, finds the snapshot and
// tracks it. Before, one look-up gave up while the daemon was away: the apply failed and
// the snapshot stayed on the host, untracked.
func TestAccLostWrites_snapshotRestart(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartCallProxy(t, "127.0.0.1:16509")
	domain := acctest.RandomName("lostsnap")
	lostSnapDomain(t, domain)
	snap := "tfacc-restart"
	var lost <-chan struct{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"snapshot " + snap: snapLookup(domain, snap)}),
		Steps: []resource.TestStep{{
			PreConfig:        func() { lost = proxy.RestartAt(acctest.ProcDomainSnapshotCreateXML, 5*time.Second) },
			Config:           snapshotConfig(proxy.Addr, domain, snap),
			ConfigPlanChecks: emptyPlanAfterApply,
			Check: func(s *terraform.State) error {
				if err := lostAll(map[string]<-chan struct{}{"snapshot create": lost}); err != nil {
					return err
				}
				return hostMatchesState(hostNames(t, "snapshots", listSnapshots(domain), ""), s, "libvirt_snapshot", snap)
			},
		}},
	})
}

// TestAccLostWrites_snapshotNotSent: the create never reaches the daemon (the link drops
// as it goes out). The snapshot is found not taken and is taken again: the apply
// succeeds. Before, the apply failed with the connection error.
func TestAccLostWrites_snapshotNotSent(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartCallProxy(t, "127.0.0.1:16509")
	domain := acctest.RandomName("lostsnap")
	lostSnapDomain(t, domain)
	snap := "tfacc-notsent"
	var cut <-chan struct{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"snapshot " + snap: snapLookup(domain, snap)}),
		Steps: []resource.TestStep{{
			PreConfig:        func() { cut = proxy.CutCalls(acctest.ProcDomainSnapshotCreateXML, 1) },
			Config:           snapshotConfig(proxy.Addr, domain, snap),
			ConfigPlanChecks: emptyPlanAfterApply,
			Check: func(s *terraform.State) error {
				if err := lostAll(map[string]<-chan struct{}{"snapshot create": cut}); err != nil {
					return err
				}
				if n := proxy.Hits(acctest.ProcDomainSnapshotCreateXML); n != 2 {
					return fmt.Errorf("%d snapshot creates sent, want the cut one and one more", n)
				}
				return hostMatchesState(hostNames(t, "snapshots", listSnapshots(domain), ""), s, "libvirt_snapshot", snap)
			},
		}},
	})
}

// TestAccLostWrites_snapshotNameTaken: a snapshot of the configured name exists already
// (made by hand), and the answer to the create is lost. The apply fails, saying the name
// is taken, and the hand-made snapshot is neither tracked nor touched. Before, the lost
// refusal sent the provider looking, it found the hand-made snapshot, took it for its
// own, and the destroy at the end deleted it.
func TestAccLostWrites_snapshotNameTaken(t *testing.T) {
	acctest.RequireAcc(t)
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	domain := acctest.RandomName("lostsnap")
	lostSnapDomain(t, domain)
	snap := "tfacc-byhand"
	const desc = "made by hand, not by Terraform"
	err := acctest.Client(t).Write(domAccCtx(t), "snapshot "+domain+" by hand", func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(domain)
		if err != nil {
			return err
		}
		_, err = l.DomainSnapshotCreateXML(d, "<domainsnapshot><name>"+snap+"</name><description>"+desc+"</description></domainsnapshot>", 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	untouched := func(*terraform.State) error {
		s, err := acctest.Client(t).GetSnapshot(context.Background(), domain, snap)
		if err != nil {
			return fmt.Errorf("the hand-made snapshot %s of %s: %w", snap, domain, err)
		}
		if s.Description != desc {
			return fmt.Errorf("the hand-made snapshot %s has description %q, want %q", snap, s.Description, desc)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             untouched,
		Steps: []resource.TestStep{{
			PreConfig:   func() { proxy.LoseReplyTo(acctest.ProcDomainSnapshotCreateXML, time.Second) },
			Config:      snapshotConfig(proxy.Addr, domain, snap),
			ExpectError: regexp.MustCompile(`has a snapshot named\s+` + snap + `\s+already`),
		}},
	})
}
