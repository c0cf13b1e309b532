package provider_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Bad input to libvirt_clone fails at plan time, before the provider talks to libvirt.
func TestClone_validation(t *testing.T) {
	provider := `
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}
provider "libvirt" {
  uri = "test:///default"
}
`
	clone := func(body string) string {
		return provider + "resource \"libvirt_clone\" \"c\" {\n" + body + "\n}\n"
	}
	base := "source_domain_id = \"web\"\nname = \"web2\"\n"
	re := func(s string) *regexp.Regexp {
		return regexp.MustCompile("(?s)" + strings.ReplaceAll(s, " ", `\s+`))
	}
	cases := []struct {
		name, config string
		want         *regexp.Regexp
	}{
		{"mode required", clone(base), re(`The argument "mode" is required`)},
		{"mode enum", clone(base + `mode = "copy"`), re(`mode.*value must be one of.*"linked".*"full"`)},
		{"name", clone("source_domain_id = \"web\"\nname = \"a/b\"\nmode = \"full\""), re(`name.*must be a libvirt domain name`)},
		{"vcpu", clone(base + "mode = \"full\"\nvcpu = 0"), re(`vcpu.*must be between 1 and 4096`)},
		{"memory", clone(base + "mode = \"full\"\nmemory_mib = 8"), re(`memory_mib.*must be at least 16`)},
		{"empty source", clone("source_domain_id = \"\"\nname = \"web2\"\nmode = \"full\""), re(`source_domain_id.*length must be at least 1`)},
	}
	steps := make([]resource.TestStep, 0, len(cases))
	for _, c := range cases {
		steps = append(steps, resource.TestStep{Config: c.config, PlanOnly: true, ExpectError: c.want})
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps:                    steps,
	})
}
