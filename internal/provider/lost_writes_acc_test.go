package provider_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// These tests lose the answers to network define, pool define and snapshot create (and
// to the steps after them) on the provider's connection, as a libvirtd restart or a
// dropped link does between doing a thing and saying so. The apply must still end with
// the host holding exactly what the state holds: nothing untracked, nothing twice.

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

// lostDefine is an object whose define and the steps after it lose their answers.
type lostDefine struct {
	typ, kind string            // "libvirt_network", "networks" (acctest.Names)
	config    string            // the object, as resource "<typ>" "x"
	lookup    acctest.Lookup    // for CheckDestroy
	lose      map[string]uint32 // what -> the procedure whose answer is lost
}

// hostObject is what a lost-write test asks of the host's object: whether it runs and
// starts with the host, and its uuid.
type hostObject struct {
	active, autostart bool
	uuid              string
}

// readHostObject adapts a client's Read<Kind> to hostObject.
func readHostObject[S any](read func(*libvirt.Client, context.Context, string) (S, error), get func(S) hostObject) func(context.Context, *libvirt.Client, string) (hostObject, error) {
	return func(ctx context.Context, c *libvirt.Client, name string) (hostObject, error) {
		st, err := read(c, ctx, name)
		if err != nil {
			return hostObject{}, err
		}
		return get(st), nil
	}
}

// hostObjects reads the host's object of a lostDefine, by its kind.
var hostObjects = map[string]func(context.Context, *libvirt.Client, string) (hostObject, error){
	"networks": readHostObject((*libvirt.Client).ReadNetwork, func(st *libvirt.NetworkState) hostObject {
		return hostObject{st.Active, st.Autostart, st.UUID}
	}),
	"pools": readHostObject((*libvirt.Client).ReadPool, func(st *libvirt.PoolState) hostObject {
		return hostObject{st.Active, st.Autostart, st.UUID}
	}),
}

// testLostDefine applies d.config through a proxy that loses the answers of d.lose: the
// apply succeeds with the one object named name, running and autostarted, in state and
// on the host (among those named prefix...), nothing else.
func testLostDefine(t *testing.T, prefix, name string, d lostDefine) {
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	faults := map[string]<-chan struct{}{}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{d.kind + " " + name: d.lookup}),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				for what, proc := range d.lose {
					faults[what] = proxy.LoseReplyTo(proc, time.Second)
				}
			},
			Config:           proxiedProvider(proxy.Addr) + d.config,
			ConfigPlanChecks: acctest.Plans(),
			Check: func(s *terraform.State) error {
				if err := lostAll(faults); err != nil {
					return err
				}
				if err := hostMatchesState(acctest.Names(t, d.kind, prefix), s, d.typ, name); err != nil {
					return err
				}
				obj, err := hostObjects[d.kind](context.Background(), acctest.Client(t), name)
				if err != nil {
					return err
				}
				if !obj.active || !obj.autostart {
					return fmt.Errorf("%s %s: active %t autostart %t, want both", d.typ, name, obj.active, obj.autostart)
				}
				if id := s.RootModule().Resources[d.typ+".x"].Primary.ID; id != obj.uuid {
					return fmt.Errorf("state id %s, the host's object has uuid %s", id, obj.uuid)
				}
				return nil
			},
		}},
	})
}

// TestAccLostWrites_network: the answers to the network's define, autostart and start
// are each lost. The apply succeeds with the one network, running and autostarted, in
// state; nothing else on the host. Before, the lost define failed the apply and left an
// untracked network.
func TestAccLostWrites_network(t *testing.T) {
	acctest.RequireAcc(t)
	prefix := acctest.RandomName("lostnet")
	name := prefix + "-n"
	// 10.100-149.x: apart from the other network tests' subnets.
	v4 := fmt.Sprintf("10.%d.%d", 100+rand.IntN(50), rand.IntN(256))
	t.Cleanup(func() { _ = acctest.Client(t).DeleteNetwork(context.Background(), name) })
	testLostDefine(t, prefix, name, lostDefine{
		typ: "libvirt_network", kind: "networks", lookup: acctest.NetworkLookup(name),
		config: resourceHCL("libvirt_network", "x", attr("name", name), attr("mode", "isolated"),
			attr("addresses", hcl(fmt.Sprintf("[%q]", v4+".0/24"))), attr("autostart", true)),
		lose: map[string]uint32{"network define": acctest.ProcNetworkDefineXML, "network autostart": acctest.ProcNetworkSetAutostart,
			"network start": acctest.ProcNetworkCreate},
	})
}

// TestAccLostWrites_pool: the answers to the pool's define, build, start and autostart
// are each lost. The apply succeeds with the one pool, running and autostarted, in state.
// Before, the lost define failed the apply and left an untracked pool.
func TestAccLostWrites_pool(t *testing.T) {
	acctest.RequireAcc(t)
	prefix := acctest.RandomName("lostpool")
	name := prefix + "-p"
	t.Cleanup(func() { _, _ = acctest.Client(t).DeletePool(context.Background(), name, true) })
	testLostDefine(t, prefix, name, lostDefine{
		typ: "libvirt_pool", kind: "pools", lookup: acctest.PoolLookup(name),
		config: resourceHCL("libvirt_pool", "x", attr("name", name), attr("type", "dir"),
			attr("target_path", testPoolDir(name)), attr("autostart", true)),
		lose: map[string]uint32{"pool define": acctest.ProcStoragePoolDefineXML, "pool build": acctest.ProcStoragePoolBuild,
			"pool start": acctest.ProcStoragePoolCreate, "pool autostart": acctest.ProcStoragePoolSetAutostart},
	})
}

// lostSnapDomain defines a shut-off domain on a qcow2 overlay of the tiny guest (no
// boot: a disk-only snapshot wants it shut off), removed with its snapshots at the end.
func lostSnapDomain(t *testing.T, name string) {
	t.Helper()
	acctest.DefineGuest(t, name, acctest.Overlay(t, name+".qcow2"), false)
}

func snapshotConfig(addr, domain, snap string) string {
	return proxiedProvider(addr) + resourceHCL("libvirt_snapshot", "s", attr("domain_id", domain), attr("name", snap))
}

// testLostSnapshot takes snapshot snap of a new shut-off domain through a call proxy,
// with fault set up just before the apply (it returns the fault's "it happened"), and
// wants exactly that snapshot on the host and in state; check adds to that.
func testLostSnapshot(t *testing.T, snap string, fault func(*acctest.CallProxy) <-chan struct{}, check func(*acctest.CallProxy) error) {
	acctest.RequireAcc(t)
	proxy := acctest.StartCallProxy(t, "127.0.0.1:16509")
	domain := acctest.RandomName("lostsnap")
	lostSnapDomain(t, domain)
	var happened <-chan struct{}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"snapshot " + snap: snapLookup(domain, snap)}),
		Steps: []resource.TestStep{{
			PreConfig:        func() { happened = fault(proxy) },
			Config:           snapshotConfig(proxy.Addr, domain, snap),
			ConfigPlanChecks: acctest.Plans(),
			Check: func(s *terraform.State) error {
				if err := lostAll(map[string]<-chan struct{}{"snapshot create": happened}); err != nil {
					return err
				}
				if err := check(proxy); err != nil {
					return err
				}
				return hostMatchesState(acctest.Names(t, "snapshots of "+domain, ""), s, "libvirt_snapshot", snap)
			},
		}},
	})
}

// TestAccLostWrites_snapshotRestart: the snapshot is taken, its answer lost, and the
// daemon seems down for a few seconds after (every link cut, connections refused), as
// across a libvirtd restart. The apply waits for the daemon, finds the snapshot and
// tracks it. Before, one look-up gave up while the daemon was away: the apply failed and
// the snapshot stayed on the host, untracked.
func TestAccLostWrites_snapshotRestart(t *testing.T) {
	testLostSnapshot(t, "tfacc-restart",
		func(p *acctest.CallProxy) <-chan struct{} {
			return p.RestartAt(acctest.ProcDomainSnapshotCreateXML, 5*time.Second)
		},
		func(*acctest.CallProxy) error { return nil })
}

// TestAccLostWrites_snapshotNotSent: the create never reaches the daemon (the link drops
// as it goes out). The snapshot is found not taken and is taken again: the apply
// succeeds. Before, the apply failed with the connection error.
func TestAccLostWrites_snapshotNotSent(t *testing.T) {
	testLostSnapshot(t, "tfacc-notsent",
		func(p *acctest.CallProxy) <-chan struct{} { return p.CutCalls(acctest.ProcDomainSnapshotCreateXML, 1) },
		func(p *acctest.CallProxy) error {
			if n := p.Hits(acctest.ProcDomainSnapshotCreateXML); n != 2 {
				return fmt.Errorf("%d snapshot creates sent, want the cut one and one more", n)
			}
			return nil
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
	if _, err := acctest.Client(t).CreateSnapshot(acctest.Ctx(t), domain, libvirt.SnapshotSpec{Name: snap, Description: desc}); err != nil {
		t.Fatalf("snapshot %s by hand: %v", domain, err)
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
	acctest.Run(t, resource.TestCase{
		CheckDestroy: untouched,
		Steps: []resource.TestStep{{
			PreConfig:   func() { proxy.LoseReplyTo(acctest.ProcDomainSnapshotCreateXML, time.Second) },
			Config:      snapshotConfig(proxy.Addr, domain, snap),
			ExpectError: regexp.MustCompile(`has a snapshot named\s+` + snap + `\s+already`),
		}},
	})
}
