package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// TestAccDomain_testDriver: libvirt's test driver is a host too (the fleet benchmark runs
// on it): a domain there gets type "test" by default, reads back with an empty second
// plan, and is removed on destroy (the driver takes only two undefine flags).
func TestAccDomain_testDriver(t *testing.T) {
	// The gate first: holding the test driver dials libvirt, which a unit run has not got.
	acctest.RequireAcc(t)
	acctest.Parallel(t)
	acctest.HoldTestDriver(t)
	name := acctest.RandomName("testdrv")
	config := providerAt(acctest.TestDriverURI) + `
resource "libvirt_domain" "t" {
  name       = "` + name + `"
  vcpu       = 1
  memory_mib = 128
  running    = false
  network_interface {
    bridge = "virbr0"
  }
}
`
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOnTestDriver(name),
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigStateChecks: acctest.State("libvirt_domain.t", "type", "test", "name", name),
				Check:             acctest.CheckOnTestDriver(name, "shutoff", "test"),
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}
