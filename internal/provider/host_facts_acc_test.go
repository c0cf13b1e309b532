package provider_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Host facts asked of libvirt directly, with go-libvirt calls of the test's own (not
// the provider's reads): what libvirt_host must report.

// askHost runs fn on a connection of a client of its own to the daemon at uri (the test
// host's, or its test driver's).
func askHost(uri, what string, fn func(l *golibvirt.Libvirt) error) error {
	c, err := libvirt.NewClient(libvirt.Config{URI: uri, MaxConnections: 2})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return c.Read(ctx, what, fn)
}

// libvirtVersion is a version number as libvirt encodes it (major*1e6 + minor*1e3 +
// release), written out.
func libvirtVersion(v uint64) string {
	return fmt.Sprintf("%d.%d.%d", v/1000000, v/1000%1000, v%1000)
}

// hostFacts are what the daemon at uri says of its host: libvirt_host's attributes of
// the same names.
func hostFacts(uri string) (map[string]string, error) {
	facts := map[string]string{}
	err := askHost(uri, "read host facts", func(l *golibvirt.Libvirt) error {
		var err error
		if facts["hostname"], err = l.ConnectGetHostname(); err != nil {
			return err
		}
		if facts["hypervisor_type"], err = l.ConnectGetType(); err != nil {
			return err
		}
		lib, err := l.ConnectGetLibVersion()
		if err != nil {
			return err
		}
		facts["libvirt_version"] = libvirtVersion(lib)
		hv, err := l.ConnectGetVersion()
		if err != nil {
			return err
		}
		facts["hypervisor_version"] = libvirtVersion(hv)
		doc, err := l.ConnectGetCapabilities()
		if err != nil {
			return err
		}
		var caps libvirtxml.Caps
		if err := caps.Unmarshal(doc); err != nil {
			return err
		}
		if caps.Host.CPU != nil {
			facts["arch"] = caps.Host.CPU.Arch
		}
		return nil
	})
	return facts, err
}

// stateAttrs are the attributes of res in state.
func stateAttrs(s *terraform.State, res string) (map[string]string, error) {
	rs, ok := s.RootModule().Resources[res]
	if !ok || rs.Primary == nil {
		return nil, fmt.Errorf("%s is not in state", res)
	}
	return rs.Primary.Attributes, nil
}

// hostMatches is a step check: the libvirt_host data source "this" says of the host what
// the daemon at uri says when asked directly.
func hostMatches(uri string) resource.TestCheckFunc {
	const ds = "data.libvirt_host.this"
	return func(s *terraform.State) error {
		a, err := stateAttrs(s, ds)
		if err != nil {
			return err
		}
		facts, err := hostFacts(uri)
		if err != nil {
			return fmt.Errorf("ask %s: %w", uri, err)
		}
		return attrsAre(ds, a, facts, uri)
	}
}

// hostSizeMatches is a step check: the libvirt_host data source ds sizes the host as
// the daemon at uri does when asked directly (virNodeGetInfo, the capabilities' NUMA
// cells and huge page sizes).
func hostSizeMatches(ds, uri string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a, err := stateAttrs(s, ds)
		if err != nil {
			return err
		}
		want := map[string]string{}
		err = askHost(uri, "read host size", func(l *golibvirt.Libvirt) error {
			_, memKiB, cpus, _, _, _, _, _, err := l.NodeGetInfo()
			if err != nil {
				return err
			}
			want["memory_total_bytes"] = strconv.FormatUint(memKiB*1024, 10)
			want["cpus"] = strconv.Itoa(int(cpus))
			doc, err := l.ConnectGetCapabilities()
			if err != nil {
				return err
			}
			var caps libvirtxml.Caps
			if err := caps.Unmarshal(doc); err != nil {
				return err
			}
			var cells []libvirtxml.CapsHostNUMACell
			if caps.Host.NUMA != nil && caps.Host.NUMA.Cells != nil {
				cells = caps.Host.NUMA.Cells.Cells
			}
			want["numa_cells.#"] = strconv.Itoa(len(cells))
			for i, c := range cells {
				want[fmt.Sprintf("numa_cells.%d.id", i)] = strconv.Itoa(c.ID)
				if c.Memory != nil {
					want[fmt.Sprintf("numa_cells.%d.memory_bytes", i)] = strconv.FormatUint(memoryBytes(c.Memory.Size, c.Memory.Unit), 10)
				}
			}
			// Huge pages: every page size the host or a cell lists but the smallest (the
			// base page).
			sizes := map[uint64]bool{}
			if caps.Host.CPU != nil {
				for _, p := range caps.Host.CPU.PageSizes {
					sizes[memoryBytes(uint64(p.Size), p.Unit)] = true
				}
			}
			for _, c := range cells {
				for _, p := range c.PageInfo {
					sizes[memoryBytes(uint64(p.Size), p.Unit)] = true
				}
			}
			want["hugepages.#"] = strconv.Itoa(max(len(sizes)-1, 0))
			return nil
		})
		if err != nil {
			return fmt.Errorf("ask %s: %w", uri, err)
		}
		return attrsAre(ds, a, want, uri)
	}
}

// memoryBytes is a size in a libvirt unit (KiB when none) in bytes.
func memoryBytes(size uint64, unit string) uint64 {
	switch unit {
	case "", "KiB", "k", "K":
		return size << 10
	case "MiB", "M":
		return size << 20
	case "GiB", "G":
		return size << 30
	case "b", "bytes":
		return size
	}
	return size << 10
}

// hostPlanCheck is a plan check that asks the host, not the plan: the check of a PlanOnly
// step, which runs no Check (give it as a PostApplyPreRefresh or PostApplyPostRefresh
// check: a PlanOnly step runs those). It gets the plan, to compare.
type hostPlanCheck func(plan *tfjson.Plan) error

func (c hostPlanCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = c(req.Plan)
}

// afterPlan is the plan checks of a PlanOnly step: check, on the plan after the refresh.
func afterPlan(check hostPlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{check}}
}

// priorAttr is the attribute key of res in the state the plan starts from ("" when none).
func priorAttr(plan *tfjson.Plan, res, key string) string {
	if plan == nil || plan.PriorState == nil || plan.PriorState.Values == nil || plan.PriorState.Values.RootModule == nil {
		return ""
	}
	for _, r := range plan.PriorState.Values.RootModule.Resources {
		if r.Address == res {
			v, _ := r.AttributeValues[key].(string)
			return v
		}
	}
	return ""
}

// attrsAre fails on the first attribute of data source ds (attributes a) that differs
// from what libvirt at uri says (want).
func attrsAre(ds string, a, want map[string]string, uri string) error {
	for k, w := range want {
		if a[k] != w {
			return fmt.Errorf("%s.%s = %q, libvirt at %s says %q", ds, k, a[k], uri, w)
		}
	}
	return nil
}
