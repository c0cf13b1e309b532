package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// describeHCL is a diskless domain with a title, a description, tags and events actions
// other than libvirt's defaults, on_poweroff left out (more lines replace the defaults).
func describeHCL(name string, running bool, lines ...string) string {
	return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", withDefaults([]string{
		attr("name", name), attr("vcpu", 1), attr("memory_mib", 64), attr("running", running),
		`graphics = { type = "none" }`, `shutdown = { timeout = "2s" }`, // a BIOS ignores the power button
		attr("title", "web front"), attr("description", "the front end\nof the shop"),
		`tags = { env = "prod", team = "web" }`,
		`events = { on_reboot = "destroy", on_crash = "coredump-destroy" }`,
	}, lines)...)
}

// titleIs checks the title of the domain's definition and, when it runs, of the running
// domain, and that the domain id is id (0: not running).
func titleIs(t *testing.T, name, want string, id *int32) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		if d.Inactive.Title != want || (d.Live != nil && d.Live.Title != want) {
			return fmt.Errorf("domain %s: title %q (live %+v), want %q", name, d.Inactive.Title, d.Live != nil && d.Live.Title == want, want)
		}
		if id != nil {
			if *id == 0 {
				*id = d.ID
			} else if d.ID != *id {
				return fmt.Errorf("domain %s: id %d, was %d: restarted", name, d.ID, *id)
			}
		}
		return nil
	})
}

// Define-only: title, description, tags and events actions are written, read back and
// imported (the import writes events: the domain's differ from libvirt's defaults);
// changes rewrite the definition, a removed title leaves it; without events in the
// configuration the plan is empty, events is null and the domain keeps its actions.
func TestAccDomainDescribe_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("desc")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				// libvirt_domains lists the tags.
				Config: describeHCL(name, false) + fmt.Sprintf(`
data "libvirt_domains" "d" {
  name_prefix = %q
  depends_on  = [libvirt_domain.test]
}
`, name),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State(domRes, "title", "web front", "description", "the front end\nof the shop",
					"tags.env", "prod", "tags.team", "web", "events.on_poweroff", nil, "events.on_reboot", "destroy", "events.on_crash", "coredump-destroy"),
					acctest.State("data.libvirt_domains.d", "domains.0.tags.team", "web")...),
				Check: titleIs(t, name, "web front", nil),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts", "shutdown"}},
			{
				Config: describeHCL(name, false, attr("title", ""), `tags = { env = "test" }`,
					`events = { on_reboot = "destroy", on_crash = "preserve" }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "title", "", "tags", knownvalue.MapExact(map[string]knownvalue.Check{"env": knownvalue.StringExact("test")}), "events.on_crash", "preserve"),
				Check:             titleIs(t, name, "", nil),
			},
			{
				// Without them in the configuration, what the domain has is kept.
				Config: acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1),
					attr("memory_mib", 64), attr("running", false), `graphics = { type = "none" }`, `shutdown = { timeout = "2s" }`),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "tags.env", "test", "events", nil),
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if d.Inactive.OnReboot != "destroy" || d.Inactive.OnCrash != "preserve" {
						return fmt.Errorf("on_reboot %q, on_crash %q: want destroy, preserve kept", d.Inactive.OnReboot, d.Inactive.OnCrash)
					}
					return nil
				}),
			},
		},
	})
}

// A title change on a running domain is made live: same domain id, the running domain
// and its definition both have the new title. (The domain has no disk: it runs its BIOS.)
func TestAccDomainDescribe_titleLive(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("desc")
	id := new(int32)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{Config: describeHCL(name, true), ConfigPlanChecks: acctest.Plans(), Check: titleIs(t, name, "web front", id)},
			{
				Config:            describeHCL(name, true, attr("title", "web back"), attr("description", "")),
				ConfigPlanChecks:  acctest.Updates(domRes, "live"),
				ConfigStateChecks: acctest.State(domRes, "title", "web back", "description", "", "state", "running"),
				Check:             titleIs(t, name, "web back", id),
			},
		},
	})
}

// A domain virsh defined with a title, a description, tags in the provider's record and
// events actions imports, and what -generate-config-out writes for it plans clean.
func TestAccDomainDescribe_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "desc", `  <title>imported</title>
  <description>two
lines</description>
  <metadata><domain xmlns="https://github.com/kvmforge/terraform-provider-libvirt/domain/1"><tag name="env" value="prod"/></domain></metadata>
  <os><type arch='x86_64'>hvm</type></os>
  <on_poweroff>restart</on_poweroff>
  <on_crash>coredump-restart</on_crash>`, `"imported"`, `coredump-restart`, `env = "prod"`)
}

// virshDefinedPlansClean defines a 1-vCPU, 64 MiB qemu domain by XML (body: the elements
// after <vcpu>), checks that what -generate-config-out writes for it plans clean and
// has each of wants, and returns its name (removed when the test ends).
func virshDefinedPlansClean(t *testing.T, prefix, body string, wants ...string) string {
	t.Helper()
	name := acctest.RandomName(prefix)
	acctest.DefineDomain(t, fmt.Sprintf("<domain type='qemu'>\n  <name>%s</name>\n  <memory unit='MiB'>64</memory>\n  <vcpu>1</vcpu>\n%s\n</domain>", name, body))
	acctest.RemoveDomainAtEnd(t, name)
	generated := generateConfigPlansClean(t, domRes, name)
	for _, want := range wants {
		if !strings.Contains(generated, want) {
			t.Errorf("generated configuration lacks %s:\n%s", want, generated)
		}
	}
	return name
}
