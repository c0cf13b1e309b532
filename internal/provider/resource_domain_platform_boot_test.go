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

// bootIs checks the definition's <os><boot dev> list and boot menu.
func bootIs(t *testing.T, name string, menu bool, devs ...string) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		var got []string
		for _, b := range d.Inactive.OS.BootDevices {
			got = append(got, b.Dev)
		}
		m := d.Inactive.OS.BootMenu != nil && d.Inactive.OS.BootMenu.Enable == "yes"
		if strings.Join(got, ",") != strings.Join(devs, ",") || m != menu {
			return fmt.Errorf("boot %v menu %v, want %v menu %v", got, m, devs, menu)
		}
		return nil
	})
}

// Define-only: boot_devices and boot_menu are written in order, imported, and taken
// back to the default (hd, no menu) when removed; without them, today's hd.
func TestAccDomainBoot_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("boot")
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{Config: bootHCL(name), ConfigPlanChecks: acctest.Plans(), ConfigStateChecks: acctest.State(domRes, "boot_devices", nil, "boot_menu", nil),
				Check: bootIs(t, name, false, "hd")},
			{
				Config:            bootHCL(name, `boot_devices = ["network", "cdrom", "hd"]`, attr("boot_menu", true)),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "boot_devices", []any{"network", "cdrom", "hd"}, "boot_menu", true),
				Check:             bootIs(t, name, true, "network", "cdrom", "hd"),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts", "update_method"}},
			{Config: bootHCL(name), ConfigPlanChecks: acctest.Updates(domRes, "definition"), Check: bootIs(t, name, false, "hd")},
		},
	})
}

// A virsh-defined domain booting from cdrom then hd with a menu imports, and what
// -generate-config-out writes for it plans clean.
func TestAccDomainBoot_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "boot", `  <os><type arch='x86_64'>hvm</type><boot dev='cdrom'/><boot dev='hd'/><bootmenu enable='yes' timeout='3000'/></os>`, `"cdrom", "hd"`)
}
