package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A <parallel> fragment (no typed attribute has it) on a running domain: the domain runs
// with it, the plan after the apply is empty, and so is the plan of a second apply; the
// domain is never restarted (the same running id throughout). Serial and console
// fragments are refused at plan time (bad-input rows device_xml_serial / _console): the
// chardev family read them as one more serial / console block than configured.
func TestAccDomain_deviceXMLParallelRunning(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("devxmlpar")
	id := new(int32)
	config := graphicsHCL(name, true, `{ type = "none" }`, fmt.Sprintf("device_xml = [%q]", `<parallel type='pty'/>`))
	running := acctest.HostCheck(func() error {
		d, err := acctest.SameRunningDomain(t, name, id)
		if err != nil {
			return err
		}
		if l, i := len(d.Live.Devices.Parallels), len(d.Inactive.Devices.Parallels); l != 1 || i != 1 {
			return fmt.Errorf("domain %s: %d parallel ports running, %d defined, want 1 and 1", name, l, i)
		}
		return nil
	})
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{Config: config, ConfigPlanChecks: acctest.Plans(), ConfigStateChecks: acctest.State(domRes, "device_xml.0", `<parallel type='pty'/>`), Check: running},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{acctest.NoChange()},
				PostApplyPostRefresh: []plancheck.PlanCheck{acctest.NoChange()}}, Check: running},
		},
	})
}
