package provider_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	tacc "github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

const shortcutLog = "libvirt_domain refresh: the domain is as the last read found it"

// TestAccDomainRefresh_shortcut: a no-change plan of stopped domains that nothing changed
// answers each refresh with the prior state (server_read.go), and the full read run beside
// it agrees (the tests set LIBVIRT_PROVIDER_VERIFY_SHORTCUT: a disagreement fails the
// plan); a domain changed outside Terraform takes the full read and plans the change back.
// Separate CLI runs, separate provider processes, as a user's plans are.
func TestAccDomainRefresh_shortcut(t *testing.T) {
	tacc.RequireAcc(t)
	prefix := tacc.RandomName("shortcut")
	w := newCLIWork(t, tacc.ProviderBlock("")+fmt.Sprintf(`
resource "libvirt_domain" "vm" {
  count      = 3
  name       = "%s-${count.index}"
  vcpu       = 1
  memory_mib = 128
  running    = false
  network_interface {
    network = %q
  }
}
`, prefix, tacc.Network()),
		provider.CodeTokenEnv+"="+acctest.RandString(12), "TF_LOG_PROVIDER=DEBUG", "TF_LOG_PATH=provider.log")
	w.mustRun("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false") })

	taken := func() int {
		b, err := os.ReadFile(w.path("provider.log"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(w.path("provider.log")); err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), shortcutLog)
	}
	_ = taken() // the apply's
	if out, code := w.run("plan", "-detailed-exitcode", "-input=false"); code != 0 {
		t.Fatalf("no-change plan (exit %d):\n%s", code, out)
	}
	if n := taken(); n != 3 {
		t.Errorf("the no-change plan took the shortcut for %d of 3 unchanged domains", n)
	}

	// One domain gets a second vCPU outside Terraform.
	c := tacc.Client(t)
	name := prefix + "-1"
	st, err := c.GetDomainStatus(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	xml := strings.Replace(st.XML, "<vcpu placement='static'>1</vcpu>", "<vcpu placement='static'>2</vcpu>", 1)
	if xml == st.XML {
		t.Fatalf("no vcpu element to change in:\n%s", st.XML)
	}
	if _, err := c.DefineDomain(context.Background(), name, xml); err != nil {
		t.Fatal(err)
	}
	out, code := w.run("plan", "-detailed-exitcode", "-input=false")
	if code != 2 || !strings.Contains(out, "~ vcpu") {
		t.Fatalf("a domain changed outside Terraform must plan the change back (exit %d):\n%s", code, out)
	}
	if n := taken(); n != 2 {
		t.Errorf("with one domain changed outside, the plan took the shortcut for %d domains, want 2", n)
	}
}
