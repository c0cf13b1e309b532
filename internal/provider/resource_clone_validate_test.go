package provider_test

import (
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Bad input to libvirt_clone fails at plan time, before the provider talks to libvirt.
func TestClone_validation(t *testing.T) {
	provider := acctest.OfflineProvider
	clone := func(body string) string {
		return provider + "resource \"libvirt_clone\" \"c\" {\n" + body + "\n}\n"
	}
	base := "source_domain_id = \"web\"\nname = \"web2\"\n"
	re := acctest.Wrapped
	cases := []acctest.PlanError{
		{Name: "mode required", Config: clone(base), Want: re(`The argument "mode" is required`)},
		{Name: "mode enum", Config: clone(base + `mode = "copy"`), Want: re(`mode.*value must be one of.*"linked".*"full"`)},
		{Name: "name", Config: clone("source_domain_id = \"web\"\nname = \"a/b\"\nmode = \"full\""), Want: re(`name.*must be a libvirt domain name`)},
		{Name: "vcpu", Config: clone(base + "mode = \"full\"\nvcpu = 0"), Want: re(`vcpu.*must be between 1 and 4096`)},
		{Name: "memory", Config: clone(base + "mode = \"full\"\nmemory_mib = 8"), Want: re(`memory_mib.*must be at least 16`)},
		{Name: "empty source", Config: clone("source_domain_id = \"\"\nname = \"web2\"\nmode = \"full\""), Want: re(`source_domain_id.*length must be at least 1`)},
	}
	acctest.ExpectPlanErrors(t, cases)
}
