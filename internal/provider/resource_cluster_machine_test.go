package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// clusterModulePath is the absolute path of examples/modules/cluster: test configs use
// it as a module source, so the test runs the module users consume.
func clusterModulePath(t *testing.T) string {
	_, self, _, _ := runtime.Caller(0)
	p, err := filepath.Abs(filepath.Join(filepath.Dir(self), "..", "..", "examples", "modules", "cluster"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func cmAddr(name string) string {
	return fmt.Sprintf("module.cluster.libvirt_cluster_machine.this[%q]", name)
}

// cmConfigDir writes a configuration into a directory of its own for ConfigDirectory.
// A module needs this: terraform-plugin-testing runs `init` on the step's files only when
// the step names a directory (or file); a Config string is written after init, so the
// module would never be installed ("Module not installed").
func cmConfigDir(t *testing.T, text string) config.TestStepConfigFunc {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return config.StaticDirectory(dir)
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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

// cmCheck is a state check from a function of the state JSON. terraform-plugin-testing's
// legacy Check funcs (terraform.State) refuse states with child modules ("Modules are not
// supported"), so tests of the module read its root outputs through this.
type cmCheck func(*tfjson.State) error

func (f cmCheck) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	resp.Error = f(req.State) // Values is nil once nothing is left
}

func outputList(s *tfjson.State, name string) ([]string, error) {
	if s.Values == nil {
		return nil, fmt.Errorf("state has no values")
	}
	o, ok := s.Values.Outputs[name]
	if !ok {
		return nil, fmt.Errorf("output %s missing", name)
	}
	vals, ok := o.Value.([]any)
	if !ok {
		return nil, fmt.Errorf("output %s is %T, not a list", name, o.Value)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i], _ = v.(string)
	}
	return out, nil
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

// cmModuleConfig is a root configuration that calls examples/modules/cluster for three
// machines and re-exports its outputs.
func cmModuleConfig(t *testing.T, namespace, network string, vcpu, diskGiB int, image, pool string) string {
	return acctest.ProviderBlock("") + fmt.Sprintf(`
module "cluster" {
  source = %q

  machine_count = 3
  namespace     = %q
  name_prefix   = "m"
  vcpu          = %d
  memory_mib    = 256
  disk_gib      = %d
  image         = %q
  user_data     = "#!/bin/sh\necho bootstrapped > /run/bootstrapped\n"
  network       = %q
  base_pool     = %q
  domain_pool   = %q
  lease_timeout = "10m"
}

output "names" { value = module.cluster.names }
output "domain_names" { value = module.cluster.domain_names }
output "ips" { value = module.cluster.ips }
output "provider_ids" { value = module.cluster.provider_ids }
`, clusterModulePath(t), namespace, vcpu, diskGiB, image, network, pool, pool)
}

// The module from examples/modules/cluster brings up three machines on a network made
// for the test, from the tiny guest image in the test pool. Each boots and takes exactly
// its reserved address (the network's lease for its MAC has that IP and the hostname of
// the seed); every name, UUID, MAC and volume is the contract's (internal/capi); the
// second plan is empty. A vcpu change then applies live (same QEMU process) and disk_gib
// grows online; a disk shrink is refused at plan time, and so is a plan on a missing
// network (the module's libvirt_cluster precondition). Removing the module destroys
// everything: no domain, volume or host entry is left.
func TestAccClusterMachine_module(t *testing.T) {
	acctest.RequireAcc(t)
	network := acctest.CreateNetwork(t, true)
	baseKey, _ := domAccBase(t)
	image := filepath.Base(baseKey)
	pool := acctest.Pool()
	namespace := acctest.RandomName("cm")
	cmRemoveLeftovers(t, pool, namespace)
	var machines []cmParts
	for i := range 3 {
		machines = append(machines, cmPartsOf(namespace, fmt.Sprintf("m-%d", i)))
	}
	config := func(vcpu, diskGiB int) string {
		return cmModuleConfig(t, namespace, network.Name, vcpu, diskGiB, image, pool)
	}
	gone := func() error { return cmCheckGone(t, network.Name, pool, machines...) }
	firstIDs := map[string]int32{}
	// Providers per step (ConfigDirectory steps whose files hold a terraform block want
	// them there); the files are in directories because only then does plugin-testing
	// run init on them, which installs the module.
	pf := acctest.ProtoV6ProviderFactories
	step2 := cmConfigDir(t, config(2, 2))
	resource.Test(t, resource.TestCase{
		PreCheck:     acctest.PreCheck(t),
		CheckDestroy: func(*terraform.State) error { return gone() },
		Steps: []resource.TestStep{
			{
				ProtoV6ProviderFactories: pf,
				ConfigDirectory:          cmConfigDir(t, config(1, 1)),
				ConfigPlanChecks:         emptyAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{cmCheck(func(s *tfjson.State) error {
					names, err := outputList(s, "names")
					if err != nil {
						return err
					}
					domains, _ := outputList(s, "domain_names")
					ips, _ := outputList(s, "ips")
					pids, _ := outputList(s, "provider_ids")
					if len(names) != 3 || len(domains) != 3 || len(ips) != 3 || len(pids) != 3 {
						return fmt.Errorf("outputs: names %v, domain_names %v, ips %v, provider_ids %v", names, domains, ips, pids)
					}
					leases, err := domAccLeases(t, network.Name)
					if err != nil {
						return err
					}
					c := acctest.Client(t)
					ctx := domAccCtx(t)
					var errs []error
					seenIP := map[string]bool{}
					for i, m := range machines {
						errs = append(errs, cmCheckMachine(ctx, c, network, pool, image, m, names[i], domains[i], ips[i], pids[i], leases))
						if seenIP[ips[i]] {
							errs = append(errs, fmt.Errorf("address %s reserved twice", ips[i]))
						}
						seenIP[ips[i]] = true
						live, err := domAccInspect(t, m.domain)
						if err != nil {
							return err
						}
						firstIDs[m.domain] = live.ID
						t.Logf("machine %s: domain %s, MAC %s, ip %s, %s", names[i], domains[i], m.mac, ips[i], pids[i])
					}
					return errors.Join(errs...)
				})},
			},
			{
				// vcpu 1 -> 2 within the 2x headroom: live, no restart; disk 1 -> 2 GiB online.
				ProtoV6ProviderFactories: pf,
				ConfigDirectory:          step2,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(cmAddr("m-0"), plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(cmAddr("m-0"), tfjsonpath.New("update_method"), knownvalue.StringExact("live")),
						plancheck.ExpectKnownValue(cmAddr("m-0"), tfjsonpath.New("max_vcpu"), knownvalue.Int64Exact(2)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{cmCheck(func(*tfjson.State) error {
					c := acctest.Client(t)
					ctx := domAccCtx(t)
					var errs []error
					for _, m := range machines {
						live, err := domAccInspect(t, m.domain)
						if err != nil {
							return err
						}
						if !live.Active || live.ID != firstIDs[m.domain] {
							errs = append(errs, fmt.Errorf("%s: id %d (was %d), active %v: it was restarted, not changed live", m.domain, live.ID, firstIDs[m.domain], live.Active))
						}
						if v := live.Live.VCPU; v.Value != 2 || (v.Current != 0 && v.Current != 2) {
							errs = append(errs, fmt.Errorf("%s: live vcpu current=%d max=%d, want 2 of 2", m.domain, v.Current, v.Value))
						}
						if v := live.Inactive.VCPU; v.Value != 2 || (v.Current != 0 && v.Current != 2) {
							errs = append(errs, fmt.Errorf("%s: persistent vcpu current=%d max=%d, want 2 of 2", m.domain, v.Current, v.Value))
						}
						info, err := c.VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: m.root})
						if err != nil {
							return err
						}
						if info.Capacity != 2<<30 {
							errs = append(errs, fmt.Errorf("%s: capacity %d, want 2 GiB", m.root, info.Capacity))
						}
						// QEMU's own view of vda: the grow went through the running domain.
						guestCap, err := acctest.BlockCapacity(ctx, t, m.domain, "vda")
						if err != nil {
							return err
						}
						if guestCap != 2<<30 {
							errs = append(errs, fmt.Errorf("%s: the running domain sees vda as %d bytes, want 2 GiB (grown online)", m.domain, guestCap))
						}
					}
					return errors.Join(errs...)
				})},
			},
			{
				ProtoV6ProviderFactories: pf,
				ConfigDirectory:          cmConfigDir(t, config(2, 1)),
				PlanOnly:                 true,
				ExpectError:              regexp.MustCompile(`disk_gib cannot shrink`),
			},
			{
				// The module's precondition (data libvirt_cluster) stops a plan on a network
				// that does not exist, naming it.
				ProtoV6ProviderFactories: pf,
				ConfigDirectory:          cmConfigDir(t, cmModuleConfig(t, namespace, "tfacc-no-such-net", 2, 2, image, pool)),
				PlanOnly:                 true,
				ExpectError: regexp.MustCompile(`(?s)infrastructure is not ready \(InfrastructureMissing\).*` +
					`network\s+"tfacc-no-such-net"\s+does\s+not\s+exist`),
			},
			{
				// Without the module everything goes (and the state holds no module any
				// more, so plugin-testing's own destroy can read it).
				ProtoV6ProviderFactories: pf,
				ConfigDirectory:          cmConfigDir(t, acctest.ProviderBlock("")),
				ConfigStateChecks:        []statecheck.StateCheck{cmCheck(func(*tfjson.State) error { return gone() })},
			},
		},
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
	if p.Spec.VCPU != 1 || p.Spec.EffectiveMaxVCPU() != 2 || p.Spec.MemoryMiB != 256 || p.Spec.EffectiveMaxMemoryMiB() != 512 {
		add("vcpu %d/%d memory %d/%d MiB, want 1/2 and 256/512", p.Spec.VCPU, p.Spec.EffectiveMaxVCPU(), p.Spec.MemoryMiB, p.Spec.EffectiveMaxMemoryMiB())
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
	active := acctest.CreateNetwork(t, true)
	inactive := acctest.CreateNetwork(t, false)
	baseKey, _ := domAccBase(t)
	image := filepath.Base(baseKey)
	pool := acctest.Pool()
	namespace := acctest.RandomName("cm")
	noImage, noStart := cmPartsOf(namespace, "noimage"), cmPartsOf(namespace, "nostart")
	config := func(name, network, image string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_cluster_machine" "test" {
  namespace   = %q
  name        = %q
  network     = %q
  base_pool   = %q
  domain_pool = %q
  image       = %q
  memory_mib  = 256
  disk_gib    = 1
}
`, namespace, name, network, pool, pool, image)
	}
	re := func(s string) string { return strings.Join(strings.Fields(s), `\s+`) }
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			return errors.Join(cmCheckGone(t, active.Name, pool, noImage), cmCheckGone(t, inactive.Name, pool, noStart))
		},
		Steps: []resource.TestStep{
			{
				Config: config("noimage", active.Name, "tfacc-no-such-image.qcow2"),
				ExpectError: regexpOf(re(`creating the root volume `+pool+`/`+noImage.root+` on image `+pool+
					`/tfacc-no-such-image.qcow2 failed:`) + `(?s).*` + re(`Nothing was left on the host`)),
			},
			{
				PreConfig: func() {
					if err := cmCheckGone(t, active.Name, pool, noImage); err != nil {
						t.Fatalf("after the failed create: %v", err)
					}
				},
				Config: config("nostart", inactive.Name, image),
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
	acctest.RequireAcc(t)
	network := acctest.CreateNetwork(t, true)
	baseKey, _ := domAccBase(t)
	image := filepath.Base(baseKey)
	pool := acctest.Pool()
	namespace := acctest.RandomName("cm")
	cmRemoveLeftovers(t, pool, namespace)
	const uid = "7b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	m := cmPartsOf(namespace, "solo")
	const res = "libvirt_cluster_machine.test"
	config := func(vcpu int) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_cluster_machine" "test" {
  namespace     = %q
  name          = "solo"
  uid           = %q
  network       = %q
  base_pool     = %q
  domain_pool   = %q
  image         = %q
  vcpu          = %d
  memory_mib    = 256
  disk_gib      = 1
  user_data     = "#!/bin/sh\necho solo > /run/solo\n"
  lease_timeout = "8m"
}
`, namespace, uid, network.Name, pool, pool, image, vcpu)
	}
	var ip string
	var firstID int32
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return cmCheckGone(t, network.Name, pool, m) },
		Steps: []resource.TestStep{
			{
				Config:           config(1),
				ConfigPlanChecks: emptyAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("id"), knownvalue.StringExact(uid)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("provider_id"), knownvalue.StringExact(capi.ProviderID(uid))),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("domain_name"), knownvalue.StringExact(m.domain)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("mac"), knownvalue.StringExact(m.mac)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("max_vcpu"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("max_memory_mib"), knownvalue.Int64Exact(512)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("running"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("addresses"), knownvalue.ListSizeExact(1)),
				},
				Check: func(s *terraform.State) error {
					a := s.RootModule().Resources[res].Primary.Attributes
					ip = a["ip"]
					if a["addresses.0"] != ip || ip == "" {
						return fmt.Errorf("ip %q, addresses %q: want the reserved address leased", ip, a["addresses.0"])
					}
					leases, err := domAccLeases(t, network.Name)
					if err != nil {
						return err
					}
					if err := cmCheckMachine(domAccCtx(t), acctest.Client(t), network, pool, image, m, "solo", a["domain_name"], ip, a["provider_id"], leases); err != nil {
						return err
					}
					live, err := domAccInspect(t, m.domain)
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
				PreConfig: func() { domAccUndefine(t, m.domain) },
				Config:    config(1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(s *terraform.State) error {
					a := s.RootModule().Resources[res].Primary.Attributes
					if a["ip"] != ip || a["id"] != uid {
						return fmt.Errorf("made again with ip %s id %s, want %s %s", a["ip"], a["id"], ip, uid)
					}
					live, err := domAccInspect(t, m.domain)
					if err != nil {
						return err
					}
					firstID = live.ID
					return nil
				},
			},
			{
				Config: config(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(res, tfjsonpath.New("update_method"), knownvalue.StringExact("restart")),
						plancheck.ExpectKnownValue(res, tfjsonpath.New("max_vcpu"), knownvalue.Int64Exact(6)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("vcpu"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("running"), knownvalue.Bool(true)),
				},
				Check: func(*terraform.State) error {
					live, err := domAccInspect(t, m.domain)
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
		ip, addrs, err := provider.RefreshClusterMachineForTest(domAccCtx(t), c, uid, namespace, "solo", network, pool)
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
