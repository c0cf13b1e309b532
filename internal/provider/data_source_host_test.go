package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func TestAccHostDataSource(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `data "libvirt_host" "this" {}`,
			ConfigStateChecks: []statecheck.StateCheck{
				stateIs("data.libvirt_host.this", "uri", acctest.URI()),
				stateIs("data.libvirt_host.this", "arch", "x86_64"),
				stateIs("data.libvirt_host.this", "hypervisor_type", "QEMU"),
				stateIs("data.libvirt_host.this", "libvirt_version", regexp.MustCompile(`^\d+\.\d+\.\d+$`)),
				stateIs("data.libvirt_host.this", "hypervisor_version", regexp.MustCompile(`^\d+\.\d+\.\d+$`)),
				// The test host hides a broken /dev/kvm (then it truthfully offers only TCG) and
				// uses a working one (CI runners with nested KVM): tools/testhost.sh KVMFORGE_KVM.
				stateIs("data.libvirt_host.this", "domain_types", knownvalue.ListExact(domainTypeChecks(acctest.DomainTypes()))),
				stateIs("data.libvirt_host.this", "default_domain_type", acctest.DefaultDomainType()),
				stateIs("data.libvirt_host.this", "firmware_types", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("efi")})),
				stateIs("data.libvirt_host.this", "firmware", knownvalue.NotNull()),
			},
		}},
	})
}

func TestAccHostDataSource_testDriver(t *testing.T) {
	// libvirt's in-memory test driver, reached through the same daemon socket.
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerAt("test:///default") + `data "libvirt_host" "this" {}`,
			ConfigStateChecks: []statecheck.StateCheck{
				stateIs("data.libvirt_host.this", "hypervisor_type", "TEST"),
				stateIs("data.libvirt_host.this", "uri", "test:///default"),
			},
		}},
	})
}

func TestProvider_invalidURI(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      providerAt("qemu+carrier-pigeon://host/system") + `data "libvirt_host" "this" {}`,
			ExpectError: regexp.MustCompile(`(?s)Invalid libvirt URI.*transport\s+"carrier-pigeon".*use unix, ssh, tcp or\s+tls`),
		}},
	})
}

func domainTypeChecks(types []string) []knownvalue.Check {
	checks := make([]knownvalue.Check, 0, len(types))
	for _, t := range types {
		checks = append(checks, knownvalue.StringExact(t))
	}
	return checks
}
