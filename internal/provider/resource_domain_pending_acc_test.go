package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// restart_on_update = false: a machine-type change (which needs a restart) rewrites only
// the definition; the domain keeps running under the same id with the old machine,
// pending_restart is true and the next plan is empty. Restarted behind Terraform's back,
// the domain runs the new machine and the refresh says pending_restart = false.
func TestAccDomain_restartOnUpdateFalse(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "defer")
	config := func(machine string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 256), fmt.Sprintf(`os = { machine = %q }`, machine), attr("restart_on_update", false), attr("qemu_agent", false),
			`graphics = { type = "none" }`, blockHCL("disk", attr("volume_id", disk)))
	}
	var id int32
	machines := func(live, persistent string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			l, p := d.Live.OS.Type.Machine, d.Inactive.OS.Type.Machine
			if !strings.Contains(l, live) || !strings.Contains(p, persistent) {
				return fmt.Errorf("machine live %q, persistent %q; want %s and %s", l, p, live, persistent)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            config("q35"),
				ConfigStateChecks: acctest.State(domRes, "pending_restart", false, "restart_on_update", false),
				Check: acctest.HostCheck(func() error {
					_, err := acctest.SameRunningDomain(t, name, &id)
					return err
				}),
			},
			{
				Config:            config("pc"),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition", acctest.PlanIs(domRes, "pending_restart", true)),
				ConfigStateChecks: acctest.State(domRes, "pending_restart", true, "state", "running"),
				Check: resource.ComposeAggregateTestCheckFunc(machines("q35", "i440fx"), acctest.HostCheck(func() error {
					_, err := acctest.SameRunningDomain(t, name, &id)
					return err
				})),
			},
			{
				// The restart happens outside Terraform: a new run, and nothing pending.
				PreConfig:         func() { acctest.RestartDomain(t, name) },
				Config:            config("pc"),
				ConfigPlanChecks:  acctest.Plans(acctest.NoChange()),
				ConfigStateChecks: acctest.State(domRes, "pending_restart", false, "update_method", regexp.MustCompile(`.`)),
				Check:             machines("i440fx", "i440fx"),
			},
		},
	})
}
