package provider_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// defineBareDomains defines stopped domains the way an operator's virsh would, outside
// Terraform, and removes them at cleanup.
func defineBareDomains(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		xml := fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <interface type='network'><source network='%s'/><model type='virtio'/></interface>
    <serial type='pty'/>
  </devices>
</domain>`, name, acctest.Network())
		acctest.DefineDomain(t, xml)
		acctest.RemoveDomainAtEnd(t, name)
	}
}

// domainsAsHostSays is a step check: data.libvirt_domains.these lists, in order, the
// domains whose names start with prefix that libvirt lists when asked directly, in the
// states it gives, keeping those in one of states (all when none).
func domainsAsHostSays(prefix string, states ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		type dom struct{ name, state string }
		var want []dom
		err := askHost(acctest.URI(), "list domains", func(l *golibvirt.Libvirt) error {
			all, _, err := l.ConnectListAllDomains(1, 0)
			if err != nil {
				return err
			}
			want = nil
			for _, d := range all {
				if !strings.HasPrefix(d.Name, prefix) {
					continue
				}
				st, _, err := l.DomainGetState(d, 0)
				if err != nil {
					return err
				}
				state := map[int32]string{1: "running", 3: "paused", 5: "shutoff"}[st]
				if len(states) == 0 || slices.Contains(states, state) {
					want = append(want, dom{d.Name, state})
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(want, func(a, b dom) int { return strings.Compare(a.name, b.name) })
		a, err := stateAttrs(s, "data.libvirt_domains.these")
		if err != nil {
			return err
		}
		if a["names.#"] != strconv.Itoa(len(want)) {
			return fmt.Errorf("%s names in state, libvirt lists %v", a["names.#"], want)
		}
		for i, d := range want {
			if got, gotState := a[fmt.Sprintf("names.%d", i)], a[fmt.Sprintf("domains.%d.state", i)]; got != d.name || gotState != d.state {
				return fmt.Errorf("domain %d: %s %s in state, libvirt says %s %s", i, got, gotState, d.name, d.state)
			}
		}
		return nil
	}
}

func TestAccDomainsDataSource(t *testing.T) {
	acctest.RequireAcc(t)
	prefix := acctest.RandomName("adopt") + "-"
	defineBareDomains(t, prefix+"b", prefix+"a")
	config := func(states string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
data "libvirt_domains" "these" {
  name_prefix = %q
  %s
}
`, prefix, states)
	}
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config: config(""),
				ConfigStateChecks: acctest.State("data.libvirt_domains.these",
					"names", []string{prefix + "a", prefix + "b"},
					"domains.0.state", "shutoff",
					"domains.0.persistent", true,
				),
				Check: domainsAsHostSays(prefix),
			},
			{
				Config:            config(`states = ["running"]`),
				ConfigStateChecks: acctest.State("data.libvirt_domains.these", "names", acctest.ListSize(0)),
				Check:             domainsAsHostSays(prefix, "running"),
			},
		},
	})
}

func TestDomainsDataSource_validation(t *testing.T) {
	acctest.RunUnit(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `
data "libvirt_domains" "these" {
  states = ["sleeping"]
}
`,
			PlanOnly:    true,
			ExpectError: acctest.ErrorText("value must be one of"),
		}},
	})
}
