package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
)

// Provider functions need no daemon: they run through the real CLI as unit tests.
func TestFunctions(t *testing.T) {
	name := capi.DomainName("default", "worker-0")
	acctest.RunUnit(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps: []resource.TestStep{{
			Config: requiredProviders + `
output "name" { value = provider::libvirt::cluster_machine_name("default", "worker-0") }
output "mac"  { value = provider::libvirt::mac_from_name(provider::libvirt::cluster_machine_name("default", "worker-0")) }
output "long" { value = provider::libvirt::cluster_machine_name("a-very-long-namespace-for-a-team-of-many", "and-an-even-longer-machine-name-0") }
`,
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.OutputIs("name", name),
				acctest.OutputIs("name", regexp.MustCompile(`^default-worker-0-[0-9a-f]{6}$`)),
				acctest.OutputIs("mac", capi.MAC(name)),
				acctest.OutputIs("long", regexp.MustCompile(`^[a-z0-9-]{56}-[0-9a-f]{6}$`)),
			},
		}},
	})
}
