package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func TestAccHostDataSource(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `data "libvirt_host" "this" {}`,
			ConfigStateChecks: acctest.State("data.libvirt_host.this",
				"uri", acctest.URI(),
				"arch", "x86_64",
				"hypervisor_type", "QEMU",
				"libvirt_version", regexp.MustCompile(`^\d+\.\d+\.\d+$`),
				"hypervisor_version", regexp.MustCompile(`^\d+\.\d+\.\d+$`),
				// The test host hides a broken /dev/kvm (then it truthfully offers only TCG) and
				// uses a working one (CI runners with nested KVM): tools/testhost.sh KVMFORGE_KVM.
				"domain_types", acctest.DomainTypes(),
				"default_domain_type", acctest.DefaultDomainType(),
				"firmware_types", []string{"efi"},
				"firmware", acctest.NotNull,
			),
			// What libvirt says when asked directly: hostname, versions, type, arch.
			Check: hostMatches(acctest.URI()),
		}},
	})
}

func TestAccHostDataSource_testDriver(t *testing.T) {
	// libvirt's in-memory test driver, reached through the same daemon socket.
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: providerAt("test:///default") + `data "libvirt_host" "this" {}`,
			ConfigStateChecks: acctest.State("data.libvirt_host.this",
				"hypervisor_type", "TEST",
				"uri", "test:///default",
				"default_domain_type", "test",
			),
			Check: hostMatches(acctest.TestDriverURI),
		}},
	})
}

func TestProvider_invalidURI(t *testing.T) {
	acctest.RunUnit(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config:      providerAt("qemu+carrier-pigeon://host/system") + `data "libvirt_host" "this" {}`,
			ExpectError: regexp.MustCompile(`(?s)Invalid libvirt URI.*transport\s+"carrier-pigeon".*use unix, ssh, tcp or\s+tls`),
		}},
	})
}
