package acctest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// Bad input that fails at plan time needs no daemon: validation runs before the provider
// talks to libvirt. These helpers run such cases as one unit test.

// OfflineProvider is the preamble of plan-only unit tests: a provider on the test driver's
// URI, which validation never dials.
const OfflineProvider = `
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}
provider "libvirt" {
  uri = "test:///default"
}
`

// Resource is OfflineProvider and one resource of type typ with the given body.
func Resource(typ, body string) string {
	return OfflineProvider + "resource \"" + typ + "\" \"test\" {\n" + body + "\n}\n"
}

// PlanError is a configuration and what its plan must fail with.
type PlanError struct {
	Name   string
	Config string
	Want   *regexp.Regexp
}

// Wrapped is a pattern of s in which each space also matches Terraform's line wrapping.
func Wrapped(s string) *regexp.Regexp {
	return regexp.MustCompile("(?s)" + strings.ReplaceAll(s, " ", `\s+`))
}

// ExpectPlanErrors plans every case (a step each) and checks its error. minVersion, when
// given, skips CLIs older than it (for cases about newer language features).
func ExpectPlanErrors(t *testing.T, cases []PlanError, minVersion ...tfversion.TerraformVersionCheck) {
	t.Helper()
	steps := make([]resource.TestStep, 0, len(cases))
	for _, c := range cases {
		steps = append(steps, resource.TestStep{Config: c.Config, PlanOnly: true, ExpectError: c.Want})
	}
	RunUnit(t, resource.TestCase{TerraformVersionChecks: minVersion, Steps: steps})
}
