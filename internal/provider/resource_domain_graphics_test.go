package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// graphicsHCL is a diskless domain with the console graphics (an HCL object) and more lines.
func graphicsHCL(name string, running bool, graphics string, lines ...string) string {
	return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", append([]string{
		attr("name", name), attr("vcpu", 1), attr("memory_mib", 64), attr("running", running),
		attr("qemu_agent", false), `shutdown = { timeout = "2s" }`, // a BIOS ignores the power button
		"graphics = " + graphics,
	}, lines...)...)
}

// passwordIs checks the console password libvirt has (read with the secure flag): of the
// running domain when live, else of its definition.
func passwordIs(t *testing.T, name string, live bool, want string) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		got, err := acctest.ConsolePassword(t, name, live)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("domain %s (live %v): console password %q, want %q", name, live, got, want)
		}
		return nil
	})
}

// Define-only: a fixed port, a websocket and a keymap are written, read back (second plan
// empty) and import with the password (read with the secure flag).
func TestAccDomainGraphics_fixedDefineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("gfx")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           graphicsHCL(name, false, `{ type = "vnc", port = 5911, websocket = 5711, keymap = "de", password = "one" }`),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "graphics.port", 5911, "graphics.autoport", false, "graphics.websocket", 5711,
					"graphics.keymap", "de", "graphics.password", "one", "console_url", ""),
				Check: resource.ComposeTestCheckFunc(passwordIs(t, name, false, "one"), acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if v := d.Inactive.Devices.Graphics[0].VNC; v == nil || v.Port != 5911 || v.AutoPort != "no" || v.WebSocket != 5711 || v.Keymap != "de" {
						return fmt.Errorf("domain %s: graphics %+v", name, d.Inactive.Devices.Graphics[0])
					}
					return nil
				})),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts", "shutdown"}},
		},
	})
}

// A running domain with autoport (and websocket -1) plans clean (the definition keeps port -1 while the live
// port is libvirt's, shown by console_url); a password change is made live (same domain
// id, the running domain has the new one), and so is the write-only form, which the state
// never holds, on each bump of its version.
func TestAccDomainGraphics_passwordLive(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("gfx")
	id := new(int32)
	same := acctest.HostCheck(func() error { _, err := acctest.SameRunningDomain(t, name, id); return err })
	// websocket and keymap too: QEMU compares them when the password changes.
	vnc := func(more string) string { return `{ type = "vnc", websocket = -1, keymap = "en-us", ` + more + ` }` }
	wo := func(password string, version int) string {
		return graphicsHCL(name, true, vnc(""), attr("graphics_password_wo", password), attr("graphics_password_wo_version", version))
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            graphicsHCL(name, true, vnc(`password = "one"`)),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "graphics.port", -1, "graphics.autoport", true, "state", "running"),
				Check: resource.ComposeTestCheckFunc(same, passwordIs(t, name, true, "one"),
					resource.TestCheckResourceAttrWith(domRes, "console_url", func(v string) error {
						d, err := acctest.InspectDomain(t, name)
						if err != nil {
							return err
						}
						if want := fmt.Sprintf("vnc://127.0.0.1:%d", d.Live.Devices.Graphics[0].VNC.Port); v != want {
							return fmt.Errorf("console_url %q, want %q (the live port)", v, want)
						}
						return nil
					})),
			},
			{
				Config:            graphicsHCL(name, true, vnc(`password = "two"`)),
				ConfigPlanChecks:  acctest.Updates(domRes, "live"),
				ConfigStateChecks: acctest.State(domRes, "graphics.password", "two"),
				Check:             resource.ComposeTestCheckFunc(same, passwordIs(t, name, true, "two"), passwordIs(t, name, false, "two")),
			},
			{
				Config:            wo("three", 1),
				ConfigPlanChecks:  acctest.Updates(domRes, "live"),
				ConfigStateChecks: acctest.State(domRes, "graphics.password", nil, "graphics_password_wo", nil, "graphics_password_wo_version", 1),
				Check:             resource.ComposeTestCheckFunc(same, passwordIs(t, name, true, "three"), passwordIs(t, name, false, "three")),
			},
			{
				Config:            wo("four", 2),
				ConfigPlanChecks:  acctest.Updates(domRes, "live"),
				ConfigStateChecks: acctest.State(domRes, "graphics.password", nil, "graphics_password_wo", nil),
				Check:             resource.ComposeTestCheckFunc(same, passwordIs(t, name, true, "four"), passwordIs(t, name, false, "four")),
			},
		},
	})
}

// A domain virsh defined with a fixed port, a websocket and a keymap imports, and what
// -generate-config-out writes for it plans clean.
func TestAccDomainGraphics_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "gfx", `  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <graphics type='vnc' port='5912' autoport='no' websocket='5712' keymap='fr-ch' listen='127.0.0.1'/>
  </devices>`, `port      = 5912`, `keymap    = "fr-ch"`, `websocket = 5712`)
}
