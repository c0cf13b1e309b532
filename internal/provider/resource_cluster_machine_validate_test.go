package provider_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Bad input to libvirt_cluster_machine fails at plan time, naming the attribute. No
// daemon is needed: validation runs before the provider talks to libvirt.
func TestClusterMachine_validation(t *testing.T) {
	machine := func(override map[string]string) string {
		attrs := map[string]string{
			"namespace": `"tfacc-ns"`, "name": `"m-0"`, "network": `"default"`, "base_pool": `"default"`,
			"domain_pool": `"default"`, "image": `"base.qcow2"`,
		}
		maps.Copy(attrs, override)
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(attrs)) {
			if v := attrs[k]; v != "" {
				b.WriteString("  " + k + " = " + v + "\n")
			}
		}
		return acctest.Resource("libvirt_cluster_machine", b.String())
	}
	re := acctest.Wrapped
	cases := []struct {
		name     string
		override map[string]string
		want     string
	}{
		{"empty namespace", map[string]string{"namespace": `""`}, `namespace.*must not be empty`},
		{"blank name", map[string]string{"name": `"  "`}, `name.*must not be empty`},
		{"empty image", map[string]string{"image": `""`}, `image.*must not be empty`},
		{"uid not a UUID", map[string]string{"uid": `"machine-1"`}, `uid.*must be a UUID`},
		{"uid upper case", map[string]string{"uid": `"2F0E3B1C-5D6A-4B8E-9F00-1A2B3C4D5E6F"`}, `write the uid in lower case`},
		{"vcpu zero", map[string]string{"vcpu": `0`}, `vcpu.*between 1 and`},
		{"memory too small", map[string]string{"memory_mib": `0`}, `memory_mib.*at least 16`},
		{"disk zero", map[string]string{"disk_gib": `0`}, `disk_gib.*between 1 and`},
		{"negative disk", map[string]string{"disk_gib": `-5`}, `disk_gib.*between 1 and`},
		{"lease timeout", map[string]string{"lease_timeout": `"soon"`}, `lease_timeout`},
		{"network missing", map[string]string{"network": ""}, `"network" is required`},
	}
	var planErrors []acctest.PlanError
	for _, c := range cases {
		planErrors = append(planErrors, acctest.PlanError{Name: c.name, Config: machine(c.override), Want: re(c.want)})
	}
	acctest.ExpectPlanErrors(t, planErrors)
}
