package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// defineBareDomains defines stopped domains the way an operator's virsh would, outside
// Terraform, and removes them at cleanup.
func defineBareDomains(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		xml := fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <interface type='network'><source network='%s'/><model type='virtio'/></interface>
    <serial type='pty'/>
  </devices>
</domain>`, name, acctest.Network())
		acctest.DefineDomain(t, xml)
		acctest.RemoveDomainAtEnd(t, name)
	}
}

func TestAccDomainsDataSource(t *testing.T) {
	acctest.RequireAcc(t)
	prefix := acctest.RandomName("adopt") + "-"
	defineBareDomains(t, prefix+"b", prefix+"a")
	config := func(states string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
data "libvirt_domains" "these" {
  name_prefix = %q
  %s
}
`, prefix, states)
	}
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: config(""),
				ConfigStateChecks: acctest.State("data.libvirt_domains.these",
					"names", []string{prefix + "a", prefix + "b"},
					"domains.0.state", "shutoff",
					"domains.0.persistent", true,
				),
			},
			{
				Config:            config(`states = ["running"]`),
				ConfigStateChecks: acctest.State("data.libvirt_domains.these", "names", acctest.ListSize(0)),
			},
		},
	})
}

func TestDomainsDataSource_validation(t *testing.T) {
	acctest.RunUnit(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `
data "libvirt_domains" "these" {
  states = ["sleeping"]
}
`,
			PlanOnly:    true,
			ExpectError: acctest.ErrorText("value must be one of"),
		}},
	})
}
