package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func bootHCL(name string, lines ...string) string {
	return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
		attr("memory_mib", 64), attr("running", false), `graphics = { type = "none" }`}, lines...)...)
}

// bootIs checks the definition's <os><boot dev> list and boot menu (timeout "" none).
func bootIs(t *testing.T, name string, menu bool, timeout string, devs ...string) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		var got []string
		for _, b := range d.Inactive.OS.BootDevices {
			got = append(got, b.Dev)
		}
		m, to := d.Inactive.OS.BootMenu != nil && d.Inactive.OS.BootMenu.Enable == "yes", ""
		if m {
			to = d.Inactive.OS.BootMenu.Timeout
		}
		if strings.Join(got, ",") != strings.Join(devs, ",") || m != menu || to != timeout {
			return fmt.Errorf("boot %v menu %v timeout %q, want %v menu %v timeout %q", got, m, to, devs, menu, timeout)
		}
		return nil
	})
}

// Define-only, the v3 rule for os: left null, os is null in state and libvirt has the
// default (hd, no menu); os.boot and os.boot_menu written are in state exactly as
// written and in the definition in order, with the menu's timeout; the import writes
// the same os (it differs from the defaults); removing os takes the domain back to the
// default (hd, no menu), and os is null again.
func TestAccDomainBoot_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("boot")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{Config: bootHCL(name), ConfigPlanChecks: acctest.Plans(), ConfigStateChecks: acctest.State(domRes, "os", nil),
				Check: bootIs(t, name, false, "", "hd")},
			{
				Config:           bootHCL(name, `os = { boot = ["network", "cdrom", "hd"], boot_menu = { enabled = true, timeout_ms = 2500 } }`),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "os.boot", []any{"network", "cdrom", "hd"}, "os.boot_menu.enabled", true,
					"os.boot_menu.timeout_ms", 2500, "os.arch", nil, "os.machine", nil, "os.emulator", nil, "os.kernel", nil, "os.smbios", nil),
				Check: bootIs(t, name, true, "2500", "network", "cdrom", "hd"),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts", "update_method"}},
			{
				// The menu object with enabled left null: a menu, and null stays null.
				Config:            bootHCL(name, `os = { boot_menu = {} }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "os.boot", nil, "os.boot_menu.enabled", nil, "os.boot_menu.timeout_ms", nil),
				Check:             bootIs(t, name, true, "", "hd"),
			},
			{Config: bootHCL(name), ConfigPlanChecks: acctest.Updates(domRes, "definition"), ConfigStateChecks: acctest.State(domRes, "os", nil),
				Check: bootIs(t, name, false, "", "hd")},
		},
	})
}

// A virsh-defined domain booting from cdrom then hd with a menu imports, and what
// -generate-config-out writes for it plans clean.
func TestAccDomainBoot_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "boot", `  <os><type arch='x86_64'>hvm</type><boot dev='cdrom'/><boot dev='hd'/><bootmenu enable='yes' timeout='3000'/></os>`, `"cdrom", "hd"`, `timeout_ms = 3000`)
}
