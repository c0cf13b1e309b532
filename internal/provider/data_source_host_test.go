package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func TestAccHostDataSource(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `data "libvirt_host" "this" {}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("uri"), knownvalue.StringExact(acctest.URI())),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("arch"), knownvalue.StringExact("x86_64")),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("hypervisor_type"), knownvalue.StringExact("QEMU")),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("libvirt_version"), knownvalue.StringRegexp(regexp.MustCompile(`^\d+\.\d+\.\d+$`))),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("hypervisor_version"), knownvalue.StringRegexp(regexp.MustCompile(`^\d+\.\d+\.\d+$`))),
				// The test host hides a broken /dev/kvm (then it truthfully offers only TCG) and
				// uses a working one (CI runners with nested KVM): tools/testhost.sh KVMFORGE_KVM.
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("domain_types"), knownvalue.ListExact(domainTypeChecks(acctest.DomainTypes()))),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("default_domain_type"), knownvalue.StringExact(acctest.DefaultDomainType())),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("firmware_types"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("efi")})),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("firmware"), knownvalue.NotNull()),
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
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("hypervisor_type"), knownvalue.StringExact("TEST")),
				statecheck.ExpectKnownValue("data.libvirt_host.this", tfjsonpath.New("uri"), knownvalue.StringExact("test:///default")),
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
