package provider_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Adopting a host as users do: `import { for_each = data.libvirt_domains... }` into a
// hand-written config, and `plan -generate-config-out` for a single domain whose
// generated configuration must then plan clean. Real CLI, real provider binary.
func TestAccDomainsAdoptHost(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.SkipBelowCLI(t, "1.7.0", "import blocks with for_each")
	prefix := acctest.RandomName("adopt") + "-"
	defineBareDomains(t, prefix+"one", prefix+"two")
	providerTF := acctest.ProviderBlock("")

	// 1. One domain through -generate-config-out: the generated config plans clean.
	generateConfigPlansClean(t, "libvirt_domain.one", prefix+"one")

	// 2. The whole prefix through for_each over the data source, into a written config.
	w := newCLIWork(t, providerTF+fmt.Sprintf(`
data "libvirt_domains" "host" {
  name_prefix = %q
}

import {
  for_each = toset(data.libvirt_domains.host.names)
  to       = libvirt_domain.adopted[each.key]
  id       = each.key
}

resource "libvirt_domain" "adopted" {
  for_each   = toset(data.libvirt_domains.host.names)
  name       = each.key
  # A bare definition has no ACPI or APIC, where a domain made here has both: the import
  # writes what differs (v3), and a configuration that adopts such domains says so.
  features   = { acpi = false, apic = false }
  %s
  network_interface {
    network = %q
  }
}
`, prefix, idleDomain, acctest.Network()))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "2 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("for_each import (exit %d):\n%s", code, out)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the for_each import is not empty (exit %d):\n%s", code, out)
	}
	w.run("state", "rm", "libvirt_domain.adopted")
}

// generateConfigPlansClean imports id into the resource address to with `plan
// -generate-config-out` (real CLI, real provider binary), applies the generated
// configuration, which must only import, and fails unless the plan after it is empty. It
// returns the generated configuration; the object is left to the test's cleanup.
func generateConfigPlansClean(t *testing.T, to, id string) string {
	t.Helper()
	return generateConfigPlansCleanAll(t, map[string]string{to: id})
}

// generateConfigPlansCleanAll is generateConfigPlansClean for several objects at once
// (address: import id), in one configuration: one round of CLI runs for all of them.
func generateConfigPlansCleanAll(t *testing.T, ids map[string]string) string {
	t.Helper()
	imports := ""
	for to, id := range ids {
		imports += fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", to, id)
	}
	w := newCLIWork(t, acctest.ProviderBlock("")+imports)
	if out, code := w.run("plan", "-input=false", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("plan -generate-config-out (exit %d):\n%s", code, out)
	}
	generated, _ := os.ReadFile(w.path("generated.tf"))
	want := fmt.Sprintf("%d imported, 0 added, 0 changed, 0 destroyed", len(ids))
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, want) {
		t.Fatalf("apply of the generated config (exit %d) did more than import:\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after importing with the generated config is not empty (exit %d):\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	for to := range ids {
		w.run("state", "rm", to)
	}
	return string(generated)
}
