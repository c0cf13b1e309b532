package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A virsh-defined domain with SMBIOS tables, <os><smbios mode="sysinfo">, and fw_cfg
// entries (a value one and a file one) imports, and what -generate-config-out writes
// for it plans clean.
func TestAccDomainSMBIOS_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	virshDefinedPlansClean(t, "smbios", `  <sysinfo type='smbios'>
    <bios><entry name='vendor'>kvmforge</entry></bios>
    <system><entry name='manufacturer'>kvmforge</entry><entry name='product'>Appliance</entry></system>
    <baseBoard><entry name='serial'>42</entry></baseBoard>
  </sysinfo>
  <sysinfo type='fwcfg'>
    <entry name='opt/com.example/role'>db</entry>
  </sysinfo>
  <os><type arch='x86_64'>hvm</type><smbios mode='sysinfo'/></os>`, `"Appliance"`, `"opt/com.example/role"`, `serial = "42"`)
}

// Define-only: the SMBIOS tables v3 adds (two base boards in order, the chassis, OEM
// strings) are in the definition and in state exactly as written (mode left null: the
// sysinfo tables ask for it), the second plan is empty and the import writes the same
// os; a second OEM string order is a change.
func TestAccDomainSMBIOS_tables(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("smbios")
	config := func(oem string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 64),
			attr("running", false), `graphics = { type = "none" }`, fmt.Sprintf(`os = {
    smbios = {
      system      = { product = "Appliance" }
      base_board  = [{ serial = "42", product = "main" }, { serial = "43", product = "riser" }]
      chassis     = { asset = "A-7" }
      oem_strings = %s
    }
  }`, oem))
	}
	tables := func(oem ...string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			var got []string
			for _, si := range d.Inactive.SysInfo {
				if sm := si.SMBIOS; sm != nil {
					for _, b := range sm.BaseBoard {
						for _, e := range b.Entry {
							got = append(got, "board:"+e.Name+"="+e.Value)
						}
					}
					if sm.Chassis != nil {
						for _, e := range sm.Chassis.Entry {
							got = append(got, "chassis:"+e.Name+"="+e.Value)
						}
					}
					if sm.OEMStrings != nil {
						got = append(got, sm.OEMStrings.Entry...)
					}
				}
			}
			want := append([]string{"board:product=main", "board:serial=42", "board:product=riser", "board:serial=43", "chassis:asset=A-7"}, oem...)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				return fmt.Errorf("SMBIOS of %s: %v, want %v", name, got, want)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config(`["role:db", "rack:7"]`),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "os.smbios.mode", nil, "os.smbios.bios", nil, "os.smbios.chassis.asset", "A-7",
					"os.smbios.base_board", knownvalue.ListExact([]knownvalue.Check{
						knownvalue.MapExact(map[string]knownvalue.Check{"serial": knownvalue.StringExact("42"), "product": knownvalue.StringExact("main")}),
						knownvalue.MapExact(map[string]knownvalue.Check{"serial": knownvalue.StringExact("43"), "product": knownvalue.StringExact("riser")}),
					}),
					"os.smbios.oem_strings", []any{"role:db", "rack:7"}, "os.arch", nil, "os.machine", nil, "os.boot", nil),
				Check: tables("role:db", "rack:7"),
			},
			{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name, ImportStateVerifyIgnore: []string{"timeouts", "update_method"}},
			{
				Config:            config(`["rack:7", "role:db"]`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "os.smbios.oem_strings", []any{"rack:7", "role:db"}),
				Check:             tables("rack:7", "role:db"),
			},
		},
	})
}
