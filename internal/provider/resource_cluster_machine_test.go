package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// cmEnv is what a machine test runs in: a running network of its own, the tiny guest
// image in the test pool, and a namespace whose leftovers are removed at the end.
type cmEnv struct {
	network                acctest.TestNetwork
	pool, image, namespace string
}

func cmSetup(t *testing.T) cmEnv {
	acctest.RequireAcc(t)
	baseKey, _ := acctest.BaseImage(t)
	e := cmEnv{network: acctest.CreateNetwork(t, true), pool: acctest.Pool(), image: filepath.Base(baseKey), namespace: acctest.RandomName("cm")}
	cmRemoveLeftovers(t, e.pool, e.namespace)
	return e
}

// test runs steps on libvirt_cluster_machine.test, machine m; CheckDestroy asks libvirt
// that nothing of it is left.
func (e cmEnv) test(t *testing.T, m cmParts, steps []resource.TestStep) {
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error { return cmCheckGone(t, e.network.Name, e.pool, m) },
		Steps:        steps,
	})
}

// machine is the block of libvirt_cluster_machine.test: machine <namespace>/name on
// network, 256 MiB and a 1 GiB disk, and the extra lines given.
func (e cmEnv) machine(name, network, extra string) string {
	return resourceHCL("libvirt_cluster_machine", "test", attr("namespace", e.namespace), attr("name", name), attr("network", network),
		attr("base_pool", e.pool), attr("domain_pool", e.pool), attr("image", e.image), attr("memory_mib", 256), attr("disk_gib", 1), extra)
}

// cmParts are the names the contract fixes for machine <namespace>/<name>.
type cmParts struct {
	name, domain, mac, root, seed string
}

func cmPartsOf(namespace, name string) cmParts {
	dn := capi.DomainName(namespace, name)
	return cmParts{name: name, domain: dn, mac: capi.MAC(dn), root: capi.RootVolumeName(dn), seed: capi.SeedVolumeName(dn)}
}

// cmCheckGone asks libvirt that nothing of the machines is left: domain, both volumes,
// and the host entry of the MAC in the network.
func cmCheckGone(t *testing.T, network, pool string, machines ...cmParts) error {
	objects := map[string]acctest.Lookup{}
	for _, m := range machines {
		objects["domain "+m.domain] = acctest.DomainLookup(m.domain)
		objects["volume "+m.root] = acctest.VolumeLookup(pool, m.root)
		objects["volume "+m.seed] = acctest.VolumeLookup(pool, m.seed)
	}
	errs := []error{acctest.CheckGone(objects)(nil)}
	c := acctest.Client(t)
	ctx := acctest.Ctx(t)
	for _, m := range machines {
		h, err := workflow.MachineReservation(ctx, c, network, m.mac)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("cannot tell whether the host entry of %s is gone: %w", m.mac, err))
		case h != nil:
			errs = append(errs, fmt.Errorf("network %s still has a host entry for %s (%s)", network, m.mac, h.IP))
		}
	}
	return errors.Join(errs...)
}

// cmRemoveLeftovers removes, straight through libvirt, every domain and volume of the
// namespace: the safety net for a run that fails while a module is in state
// (terraform-plugin-testing cannot read such a state to destroy it).
func cmRemoveLeftovers(t *testing.T, pool, namespace string) {
	if pool != acctest.Pool() {
		t.Fatalf("leftovers are removed from the test pool %s only, not %s", acctest.Pool(), pool)
	}
	t.Cleanup(func() {
		for _, prefix := range []string{namespace + "-", "cloudinit-" + namespace + "-"} {
			if removed := acctest.RemoveHostObjects(t, prefix); len(removed) > 0 {
				t.Logf("removed leftovers: %v", removed)
			}
		}
	})
}

// cmCheckMachine compares one machine on the host with the contract.
func cmCheckMachine(ctx context.Context, c *libvirt.Client, network acctest.TestNetwork, pool, image string, m cmParts,
	name, domain, ip, providerID string, leases map[string][]libvirt.Lease) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(m.domain+": "+format, a...)) }
	if name != m.name || domain != m.domain {
		add("outputs name %q domain %q, want %q %q", name, domain, m.name, m.domain)
	}
	st, err := c.GetDomainStatus(ctx, m.domain)
	if err != nil {
		return err
	}
	uid := libvirt.UUIDString(st.Domain)
	if providerID != "libvirt://"+uid || providerID != capi.ProviderID(uid) {
		add("provider_id %q, domain UUID %s", providerID, uid)
	}
	if !st.Active || !st.Autostart {
		add("active %v autostart %v, want both", st.Active, st.Autostart)
	}
	p, err := domainxml.Parse(st.XML)
	if err != nil {
		return err
	}
	if len(p.Spec.Interfaces) != 1 || p.Spec.Interfaces[0].MAC != m.mac || p.Spec.Interfaces[0].Network != network.Name {
		add("interfaces %+v, want one on %s with MAC %s", p.Spec.Interfaces, network.Name, m.mac)
	}
	if p.Spec.VCPU != 1 || p.Spec.EffectiveMaxVCPU() != 2 || p.Spec.MemoryKiB != 256<<10 || p.Spec.EffectiveMaxMemoryKiB() != 512<<10 {
		add("vcpu %d/%d memory %d/%d KiB, want 1/2 and 256/512 MiB", p.Spec.VCPU, p.Spec.EffectiveMaxVCPU(), p.Spec.MemoryKiB, p.Spec.EffectiveMaxMemoryKiB())
	}
	root, err := c.VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: m.root})
	if err != nil {
		return fmt.Errorf("root volume %s: %w", m.root, err)
	}
	if root.Format != "qcow2" || filepath.Base(root.Backing) != image || root.Capacity != 1<<30 {
		add("root volume format %s backing %s capacity %d, want a 1 GiB qcow2 overlay on %s", root.Format, root.Backing, root.Capacity, image)
	}
	seed, err := c.VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: m.seed})
	if err != nil {
		return fmt.Errorf("seed volume %s: %w", m.seed, err)
	}
	if len(p.Spec.Disks) != 1 || p.Spec.Disks[0].Path != root.Path || p.Spec.CloudInit == nil || p.Spec.CloudInit.Path != seed.Path {
		add("disks %+v cloud-init %+v, want %s and %s", p.Spec.Disks, p.Spec.CloudInit, root.Path, seed.Path)
	}
	h, err := workflow.MachineReservation(ctx, c, network.Name, m.mac)
	if err != nil {
		return err
	}
	if h == nil || h.IP != ip {
		add("host entry %+v, want %s -> %s", h, m.mac, ip)
	}
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Compare(netip.MustParseAddr(network.Addr(100))) < 0 || a.Compare(netip.MustParseAddr(network.Addr(199))) > 0 {
		add("reserved ip %q is not in the DHCP range %s-%s", ip, network.Addr(100), network.Addr(199))
	}
	var seen []string
	ok := false
	for _, l := range leases[m.mac] {
		seen = append(seen, l.IP+"/"+l.Hostname)
		if l.IP == ip && l.Hostname == m.name {
			ok = true
		} else {
			add("lease %s with hostname %q: want only %s / %s", l.IP, l.Hostname, ip, m.name)
		}
	}
	if !ok {
		add("no lease of %s with hostname %s for MAC %s; its leases: %v", ip, m.name, m.mac, seen)
	}
	return errors.Join(errs...)
}

func regexpOf(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// A create that fails rolls back: an image that does not exist stops it at the first
// step, with an error naming the step, and nothing is made; a domain that cannot start
// (its network is defined but inactive: the overlay, the seed and the reservation were
// made, the definition too) is undone completely, the error naming the failed step and
// what was removed. CheckDestroy asks libvirt that nothing of either machine is left.
func TestAccClusterMachine_rollback(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.Parallel(t) // the network is made inactive in the parallel phase (acctest.Parallel)
	e := cmSetup(t)
	active, inactive, pool := e.network, acctest.CreateNetwork(t, false), e.pool
	noImage, noStart := cmPartsOf(e.namespace, "noimage"), cmPartsOf(e.namespace, "nostart")
	missing := e
	missing.image = "tfacc-no-such-image.qcow2"
	re := func(s string) string { return strings.Join(strings.Fields(s), `\s+`) }
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			return errors.Join(cmCheckGone(t, active.Name, pool, noImage), cmCheckGone(t, inactive.Name, pool, noStart))
		},
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderBlock("") + missing.machine("noimage", active.Name, ""),
				ExpectError: regexpOf(re(`creating the root volume `+pool+`/`+noImage.root+` on image `+pool+
					`/tfacc-no-such-image.qcow2 failed:`) + `(?s).*` + re(`Nothing was left on the host`)),
			},
			{
				PreConfig: func() {
					if err := cmCheckGone(t, active.Name, pool, noImage); err != nil {
						t.Fatalf("after the failed create: %v", err)
					}
				},
				Config: acctest.ProviderBlock("") + e.machine("nostart", inactive.Name, ""),
				ExpectError: regexpOf(re(`starting domain `+noStart.domain+` failed:`) + `(?s).*` + re(`not active`) + `(?s).*` +
					re(`Rolled back what this create had made: volume `+pool+`/`+noStart.root)),
			},
		},
	})
}

// One machine without the module: its uid given, computed values checked against the
// contract; imports by domain name and by uid plan clean; its domain removed behind
// Terraform's back, the next apply makes the machine again (the leftover volumes and
// reservation of the same names are replaced, with a warning) at the same address; a
// vcpu growth beyond the 2x headroom restarts it, as the plan said.
func TestAccClusterMachine_importRecreateRestart(t *testing.T) {
	e := cmSetup(t)
	network, pool, image, namespace := e.network, e.pool, e.image, e.namespace
	// A uid of its own per run: two runs at once on one host must not meet on it.
	uid := uuid.NewString()
	m := cmPartsOf(namespace, "solo")
	const res = "libvirt_cluster_machine.test"
	config := func(vcpu int) string {
		return acctest.ProviderBlock("") + e.machine("solo", network.Name, fmt.Sprintf(`  uid           = %q
  vcpu          = %d
  user_data     = "#!/bin/sh\necho solo > /run/solo\n"
  lease_timeout = "8m"`, uid, vcpu))
	}
	var ip string
	var firstID int32
	e.test(t, m, []resource.TestStep{
		{
			Config:           config(1),
			ConfigPlanChecks: acctest.Plans(),
			ConfigStateChecks: acctest.State(res,
				"id", uid,
				"provider_id", capi.ProviderID(uid),
				"domain_name", m.domain,
				"mac", m.mac,
				"max_vcpu", 2,
				"max_memory_mib", 512,
				"running", true,
				"addresses", acctest.ListSize(1),
			),
			Check: func(s *terraform.State) error {
				a := s.RootModule().Resources[res].Primary.Attributes
				ip = a["ip"]
				if a["addresses.0"] != ip || ip == "" {
					return fmt.Errorf("ip %q, addresses %q: want the reserved address leased", ip, a["addresses.0"])
				}
				leases, err := acctest.Leases(t, network.Name)
				if err != nil {
					return err
				}
				if err := cmCheckMachine(acctest.Ctx(t), acctest.Client(t), network, pool, image, m, "solo", a["domain_name"], ip, a["provider_id"], leases); err != nil {
					return err
				}
				live, err := acctest.InspectDomain(t, m.domain)
				if err != nil {
					return err
				}
				firstID = live.ID
				return cmRefreshIsQuick(t, uid, namespace, network.Name, pool, ip)
			},
		},
		{
			ResourceName:            res,
			ImportState:             true,
			ImportStateId:           m.domain,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"timeouts", "lease_timeout"},
		},
		{
			ResourceName:            res,
			ImportState:             true,
			ImportStateId:           uid,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"timeouts", "lease_timeout"},
		},
		{
			PreConfig:        func() { acctest.UndefineDomain(t, m.domain) },
			Config:           config(1),
			ConfigPlanChecks: acctest.Plans(acctest.Planned(res, acctest.Create)),
			Check: func(s *terraform.State) error {
				a := s.RootModule().Resources[res].Primary.Attributes
				if a["ip"] != ip || a["id"] != uid {
					return fmt.Errorf("made again with ip %s id %s, want %s %s", a["ip"], a["id"], ip, uid)
				}
				live, err := acctest.InspectDomain(t, m.domain)
				if err != nil {
					return err
				}
				firstID = live.ID
				return nil
			},
		},
		{
			Config: config(3),
			ConfigPlanChecks: acctest.Plans(
				acctest.Planned(res, acctest.Update),
				acctest.PlanIs(res, "update_method", "restart"),
				acctest.PlanIs(res, "max_vcpu", 6),
			),
			ConfigStateChecks: acctest.State(res,
				"vcpu", 3,
				"running", true,
			),
			Check: func(*terraform.State) error {
				live, err := acctest.InspectDomain(t, m.domain)
				if err != nil {
					return err
				}
				if !live.Active || live.ID == firstID {
					return fmt.Errorf("id %d (was %d), active %v: want a restarted, running domain", live.ID, firstID, live.Active)
				}
				if v := live.Live.VCPU; v.Value != 6 || v.Current != 3 {
					return fmt.Errorf("live vcpu current=%d max=%d, want 3 of 6", v.Current, v.Value)
				}
				return nil
			},
		},
	})
}

// cmRefreshIsQuick times the refresh (Read) path of a running machine: one look at the
// domain, the root volume, the reservation and the leases, no polling. 2 s is the bound
// on 2 busy cores.
func cmRefreshIsQuick(t *testing.T, uid, namespace, network, pool, wantIP string) error {
	c := acctest.Client(t)
	for i := range 3 {
		start := time.Now()
		ip, addrs, err := provider.RefreshClusterMachineForTest(acctest.Ctx(t), c, uid, namespace, "solo", network, pool)
		took := time.Since(start)
		if err != nil {
			return err
		}
		t.Logf("refresh %d of machine %s took %s (ip %s, addresses %v)", i, uid, took, ip, addrs)
		if took > 2*time.Second {
			return fmt.Errorf("a refresh of machine %s took %s: Read must not wait", uid, took)
		}
		if ip != wantIP || len(addrs) != 1 || addrs[0] != wantIP {
			return fmt.Errorf("refresh found ip %q addresses %v, want %s", ip, addrs, wantIP)
		}
	}
	return nil
}
