package provider_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Bad input to libvirt_cluster_machine fails at plan time, naming the attribute. No
// daemon is needed: validation runs before the provider talks to libvirt.
func TestClusterMachine_validation(t *testing.T) {
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
	machine := func(override map[string]string) string {
		attrs := map[string]string{
			"namespace": `"tfacc-ns"`, "name": `"m-0"`, "network": `"default"`, "base_pool": `"default"`,
			"domain_pool": `"default"`, "image": `"base.qcow2"`,
		}
		for k, v := range override {
			attrs[k] = v
		}
		var b strings.Builder
		b.WriteString(provider + "resource \"libvirt_cluster_machine\" \"test\" {\n")
		for k, v := range attrs {
			if v != "" {
				b.WriteString("  " + k + " = " + v + "\n")
			}
		}
		b.WriteString("}\n")
		return b.String()
	}
	re := func(s string) *regexp.Regexp {
		return regexp.MustCompile("(?s)" + strings.ReplaceAll(s, " ", `\s+`))
	}
	cases := []struct {
		name     string
		override map[string]string
		want     *regexp.Regexp
	}{
		{"empty namespace", map[string]string{"namespace": `""`}, re(`namespace.*must not be empty`)},
		{"blank name", map[string]string{"name": `"  "`}, re(`name.*must not be empty`)},
		{"empty image", map[string]string{"image": `""`}, re(`image.*must not be empty`)},
		{"uid not a UUID", map[string]string{"uid": `"machine-1"`}, re(`uid.*must be a UUID`)},
		{"uid upper case", map[string]string{"uid": `"2F0E3B1C-5D6A-4B8E-9F00-1A2B3C4D5E6F"`}, re(`write the uid in lower case`)},
		{"vcpu zero", map[string]string{"vcpu": `0`}, re(`vcpu.*between 1 and`)},
		{"memory too small", map[string]string{"memory_mib": `0`}, re(`memory_mib.*at least 16`)},
		{"disk zero", map[string]string{"disk_gib": `0`}, re(`disk_gib.*between 1 and`)},
		{"negative disk", map[string]string{"disk_gib": `-5`}, re(`disk_gib.*between 1 and`)},
		{"lease timeout", map[string]string{"lease_timeout": `"soon"`}, re(`lease_timeout`)},
		{"network missing", map[string]string{"network": ""}, re(`"network" is required`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      machine(tc.override),
					PlanOnly:    true,
					ExpectError: tc.want,
				}},
			})
		})
	}
}
