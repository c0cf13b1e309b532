package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// memory_backing under the v3 rule, on a stopped domain with a virtiofs share: written,
// state holds exactly what was written (source and access, which the share brings, null)
// and the domain has it; the import of that domain, which differs from a new one (locked,
// no KSM), writes the same; left out, the share's memfd shared memory stays on the domain
// and memory_backing is null (the second plan empty).
func TestAccDomainMemoryBacking_v3(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("mem")
	share := fsBlock(attr("source", shareDir(t, "f", "x")), attr("target", "share"))
	config := func(lines ...string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 64), attr("running", false), `graphics = { type = "none" }`, share}, lines...)...)
	}
	// backing checks the definition's memfd shared memory, locked and without KSM or not.
	backing := func(locked bool) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			mb := d.Inactive.MemoryBacking
			if mb == nil || mb.MemorySource == nil || mb.MemorySource.Type != "memfd" || mb.MemoryAccess == nil || mb.MemoryAccess.Mode != "shared" ||
				(mb.MemoryLocked != nil) != locked || (mb.MemoryNosharepages != nil) != locked {
				return fmt.Errorf("memory backing %+v, want memfd shared memory, locked and nosharepages %t", mb, locked)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config(`memory_backing = { locked = true, nosharepages = true }`),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "memory_backing", map[string]any{"locked": true, "nosharepages": true, "hugepages": nil,
					"hugepage_size_kib": nil, "source": nil, "access": nil, "discard": nil}),
				Check: backing(true),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts"}},
			{Config: config(), ConfigPlanChecks: acctest.Updates(domRes, "definition"), ConfigStateChecks: acctest.State(domRes, "memory_backing", nil), Check: backing(false)},
		},
	})
}
