package provider_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
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
	e := cmSetup(t)
	network, image, pool, namespace := e.network, e.image, e.pool, e.namespace
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
				ConfigPlanChecks:         acctest.Plans(),
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
					leases, err := acctest.Leases(t, network.Name)
					if err != nil {
						return err
					}
					c := acctest.Client(t)
					ctx := acctest.Ctx(t)
					var errs []error
					seenIP := map[string]bool{}
					for i, m := range machines {
						errs = append(errs, cmCheckMachine(ctx, c, network, pool, image, m, names[i], domains[i], ips[i], pids[i], leases))
						if seenIP[ips[i]] {
							errs = append(errs, fmt.Errorf("address %s reserved twice", ips[i]))
						}
						seenIP[ips[i]] = true
						live, err := acctest.InspectDomain(t, m.domain)
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
				ConfigPlanChecks: acctest.Plans(
					acctest.Planned(cmAddr("m-0"), acctest.Update),
					acctest.PlanIs(cmAddr("m-0"), "update_method", "live"),
					acctest.PlanIs(cmAddr("m-0"), "max_vcpu", 2),
				),
				ConfigStateChecks: []statecheck.StateCheck{cmCheck(func(*tfjson.State) error {
					c := acctest.Client(t)
					ctx := acctest.Ctx(t)
					var errs []error
					for _, m := range machines {
						live, err := acctest.InspectDomain(t, m.domain)
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
