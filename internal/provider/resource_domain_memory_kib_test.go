package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// memoryXML checks the persistent definition's <memory>, <currentMemory> and NUMA cells,
// in KiB, exactly.
func memoryXML(t *testing.T, name string, maxKiB, curKiB uint, cellsKiB ...uint) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		x := d.Inactive
		if x.Memory == nil || x.Memory.Value != maxKiB || (x.Memory.Unit != "KiB" && x.Memory.Unit != "") ||
			x.CurrentMemory == nil || x.CurrentMemory.Value != curKiB || (x.CurrentMemory.Unit != "KiB" && x.CurrentMemory.Unit != "") {
			return fmt.Errorf("memory %+v, currentMemory %+v; want %d and %d KiB", x.Memory, x.CurrentMemory, maxKiB, curKiB)
		}
		var got []uint
		if x.CPU != nil && x.CPU.Numa != nil {
			for _, c := range x.CPU.Numa.Cell {
				if c.Unit != "KiB" && c.Unit != "" {
					return fmt.Errorf("cell %+v is not in KiB", c)
				}
				got = append(got, c.Memory)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(cellsKiB) && (len(got) > 0 || len(cellsKiB) > 0) {
			return fmt.Errorf("NUMA cells of %v KiB, want %v", got, cellsKiB)
		}
		return nil
	})
}

// A stopped domain sized in KiB that no whole MiB holds: the definition has exactly those
// KiB, state holds the KiB forms (the MiB ones null), the second plan is empty and an
// import reads the same; written in MiB instead, the memory is an update of the
// definition and state holds memory_mib.
func TestAccDomainMemoryKiB_exact(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("kib")
	config := func(memory string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), memory,
			attr("max_memory_kib", 2000004), attr("running", false), attr("qemu_agent", false))
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config(attr("memory_kib", 1000000)),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "memory_kib", 1000000, "memory_mib", nil,
					"max_memory_kib", 2000004, "max_memory_mib", nil),
				Check: memoryXML(t, name, 2000004, 1000000),
			},
			{
				ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
				ImportStateVerifyIgnore: []string{"update_method", "timeouts"},
			},
			{
				Config:           config(attr("memory_mib", 1024)),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "memory_mib", 1024, "memory_kib", nil,
					"max_memory_kib", 2000004, "max_memory_mib", nil),
				Check: memoryXML(t, name, 2000004, 1048576),
			},
		},
	})
}

// A domain defined outside Terraform with memory and NUMA cells in KiB that are no whole
// MiB imports exactly: -generate-config-out writes memory_kib (and the cells' memory_kib)
// and plans clean; the imported state has memory_kib = 1000001 and memory_mib null; a
// configuration with those values plans clean, and a harmless change (description)
// leaves every KiB as it was.
func TestAccDomainMemoryKiB_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("kibimp")
	acctest.RemoveDomainAtEnd(t, name) // the import leaves the domain to the test
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='KiB'>1000001</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <cpu mode='host-model'>
    <numa><cell id='0' cpus='0' memory='500000' unit='KiB'/><cell id='1' cpus='1' memory='500001' unit='KiB'/></numa>
  </cpu>
</domain>`, name))
	generated := generateConfigPlansClean(t, domRes, name)
	for _, want := range []string{`memory_kib\s+= 1000001`, `memory_kib\s+= 500000\b`, `memory_kib\s+= 500001\b`} {
		if !regexp.MustCompile(want).MatchString(generated) {
			t.Errorf("the generated configuration lacks %s:\n%s", want, generated)
		}
	}
	if regexp.MustCompile(`memory_mib\s+= \d`).MatchString(generated) {
		t.Errorf("the generated configuration writes a memory in MiB:\n%s", generated)
	}
	// The domain as written by hand: no graphics, no ACPI / APIC, no serial port (the
	// provider's defaults for a domain it makes), so these are written too.
	config := func(extra string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 2),
			attr("memory_kib", 1000001), attr("running", false), attr("qemu_agent", false), attr("cpu", hcl(`{
    mode = "host-model"
    numa_cell = [
      { id = 0, cpus = "0", memory_kib = 500000 },
      { id = 1, cpus = "1", memory_kib = 500001 },
    ]
  }`)), attr("graphics", hcl(`{ type = "none" }`)), attr("features", hcl(`{ acpi = false, apic = false }`)),
			attr("devices", hcl(`{ serial = [] }`)), extra)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: config(""), ResourceName: domRes, ImportState: true, ImportStateId: name, ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("imported %d states", len(states))
					}
					a := states[0].Attributes
					for k, want := range map[string]string{"memory_kib": "1000001", "memory_mib": "", "max_memory_kib": "", "max_memory_mib": "",
						"cpu.numa_cell.#": "2", "cpu.numa_cell.0.memory_kib": "500000", "cpu.numa_cell.0.memory_mib": "",
						"cpu.numa_cell.1.memory_kib": "500001", "cpu.numa_cell.1.memory_mib": ""} {
						if a[k] != want {
							return fmt.Errorf("imported %s = %q, want %q (null: \"\")", k, a[k], want)
						}
					}
					return nil
				},
			},
			{
				Config:           config(""),
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
				Check:            memoryXML(t, name, 1000001, 1000001, 500000, 500001),
			},
			{
				Config:           config(attr("description", "x")),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check:            memoryXML(t, name, 1000001, 1000001, 500000, 500001),
			},
		},
	})
}
