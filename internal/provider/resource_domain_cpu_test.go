package provider_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// cpuPlatformHCL is a stopped domain with every CPU and memory setting: the cpu group
// (topology, feature policies, two NUMA cells, pins written as "0,1", which libvirt
// stores as "0-1") and a
// file-backed, locked memory backing of 2 MiB huge pages (defined only: the test host
// reserves no huge pages, so it could not start).
func cpuPlatformHCL(name, disk string) string {
	return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 2
  memory_mib = 256
  running    = false
  qemu_agent = false
  disk {
    path = %q
  }
  cpu = {
    mode     = "custom"
    model    = "qemu64"
    topology = { sockets = 1, cores = 2, threads = 1 }
    feature  = { vmx = "disable", x2apic = "optional" }
    numa_cell = [
      { id = 0, cpus = "0", memory_mib = 128 },
      { id = 1, cpus = "1", memory_mib = 128, memory_access = "shared" },
    ]
    pinning          = { "0" = "0", "1" = "0,1" }
    emulator_pinning = "1"
  }
  memory_backing = {
    hugepages         = true
    hugepage_size_kib = 2048
    source       = "file"
    access       = "shared"
    locked       = true
    nosharepages = true
    discard      = true
  }
}
`, name, disk)
}

// checkPlatformXML: the persistent definition has what the configuration says.
func checkPlatformXML(t *testing.T, name string) resource.TestCheckFunc {
	return acctest.HostCheck(func() error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		c, tune, mb := d.Inactive.CPU, d.Inactive.CPUTune, d.Inactive.MemoryBacking
		switch {
		case c == nil || c.Topology == nil || c.Topology.Sockets != 1 || c.Topology.Cores != 2 || c.Topology.Threads != 1:
			return fmt.Errorf("cpu topology %+v", c)
		case len(c.Features) != 2 || c.Numa == nil || len(c.Numa.Cell) != 2 || c.Numa.Cell[1].MemAccess != "shared" || c.Numa.Cell[1].Memory != 131072:
			return fmt.Errorf("cpu features/numa %+v %+v", c.Features, c.Numa)
		case tune == nil || len(tune.VCPUPin) != 2 || !domainxml.SameCPUSet(tune.VCPUPin[1].CPUSet, "0-1") || tune.EmulatorPin == nil:
			return fmt.Errorf("cputune %+v", tune)
		case mb == nil || mb.MemoryHugePages == nil || len(mb.MemoryHugePages.Hugepages) != 1 || mb.MemoryHugePages.Hugepages[0].Size != 2048 || mb.MemorySource == nil || mb.MemorySource.Type != "file" || mb.MemoryLocked == nil || mb.MemoryDiscard == nil || mb.MemoryNosharepages == nil:
			return fmt.Errorf("memory backing %+v", mb)
		}
		return nil
	})
}

// Every CPU and memory setting on a stopped domain: the definition has them, the second
// plan is empty (libvirt's "0-1" and KiB cells are no drift), the import matches; with a
// virtiofs share, memory_backing = { locked = true } is locked memfd shared memory and
// plans clean, and without it the share's own memory stays; removing everything
// rewrites the definition without any of it.
func TestAccDomainCPU_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name, disk := acctest.DomainDisk(t, "cpu")
	plain := func(lines ...string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 2),
			attr("memory_mib", 256), attr("running", false), attr("qemu_agent", false), blockHCL("disk", attr("path", disk))}, lines...)...)
	}
	share := fsBlock(attr("source", shareDir(t, "f", "x")), attr("target", "share"))
	// backing checks the memfd shared memory a virtiofs share has, locked or not.
	backing := func(locked bool) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			mb := d.Inactive.MemoryBacking
			if mb == nil || mb.MemorySource == nil || mb.MemorySource.Type != "memfd" || mb.MemoryAccess == nil || mb.MemoryAccess.Mode != "shared" ||
				(mb.MemoryLocked != nil) != locked {
				return fmt.Errorf("memory backing %+v, want memfd shared memory, locked %t", mb, locked)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           cpuPlatformHCL(name, disk),
				ConfigPlanChecks: acctest.Plans(),
				// The cpu group in state is exactly what was written: nothing libvirt filled in
				// (fallback, check, dies = 1) and the pins as written.
				ConfigStateChecks: acctest.State(domRes, "state", "shutoff", "cpu", map[string]any{
					"mode": "custom", "model": "qemu64", "fallback": nil, "check": nil, "iothreads": nil,
					"topology": map[string]any{"sockets": 1, "dies": nil, "cores": 2, "threads": 1},
					"feature":  map[string]any{"vmx": "disable", "x2apic": "optional"},
					"numa_cell": []any{map[string]any{"id": 0, "cpus": "0", "memory_mib": 128, "memory_kib": nil, "memory_access": nil},
						map[string]any{"id": 1, "cpus": "1", "memory_mib": 128, "memory_kib": nil, "memory_access": "shared"}},
					"pinning": map[string]any{"0": "0", "1": "0,1"}, "emulator_pinning": "1", "vcpu_placement": nil, "vcpu_cpuset": nil,
				}, "memory_backing.source", "file", "memory_backing.hugepages", true, "memory_backing.hugepage_size_kib", 2048),
				Check: checkPlatformXML(t, name),
			},
			{
				ResourceName:            domRes,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateId:           name,
				ImportStateVerifyIgnore: []string{"timeouts", "cpu.pinning.1"}, // "0-1" as libvirt stores it
			},
			{
				// With a virtiofs share, memory_backing's source and access default to memfd and
				// shared, which reads back as no change. The cpu group left out: its parts are
				// removed, and state holds a null group (the mode libvirt keeps stays out).
				Config:            plain(`memory_backing = { locked = true }`, share),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "cpu", nil),
				Check:             backing(true),
			},
			{
				Config:           plain(share),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check:            backing(false),
			},
			{
				Config:           plain(),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if c := d.Inactive.CPU; (c != nil && (c.Topology != nil || c.Numa != nil || len(c.Features) > 0)) || d.Inactive.CPUTune != nil || d.Inactive.MemoryBacking != nil {
						return fmt.Errorf("left over: cpu %+v, cputune %+v, memory backing %+v", c, d.Inactive.CPUTune, d.Inactive.MemoryBacking)
					}
					return nil
				}),
			},
		},
	})
}

// A domain virsh defined with every CPU and memory setting (and huge pages, which the
// host need not have for a definition) imports through -generate-config-out and plans
// clean; the cpu group has its mode and I/O threads, not host-model's default check.
func TestAccDomainCPU_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name, disk := acctest.DomainDisk(t, "cpuimp")
	acctest.RemoveDomainAtEnd(t, name) // the import leaves the domain to the test
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>256</memory>
  <memoryBacking><hugepages><page size='2048' unit='KiB'/></hugepages><nosharepages/><locked/><source type='memfd'/><access mode='shared'/><discard/></memoryBacking>
  <vcpu>2</vcpu>
  <iothreads>2</iothreads>
  <cputune><vcpupin vcpu='0' cpuset='0,1'/><vcpupin vcpu='1' cpuset='1'/><emulatorpin cpuset='0-1'/></cputune>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <cpu mode='host-model'>
    <topology sockets='1' cores='2' threads='1'/>
    <feature policy='disable' name='vmx'/>
    <numa><cell id='0' cpus='0' memory='128' unit='MiB'/><cell id='1' cpus='1' memory='131072' memAccess='private'/></numa>
  </cpu>
  <devices>
    <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='%s'/><target dev='vda' bus='virtio'/></disk>
  </devices>
</domain>`, name, disk))
	generated := generateConfigPlansClean(t, domRes, name)
	for _, want := range []string{`hugepage_size_kib\s+= 2048`, `memory_access\s+= "private"`, `vmx\s+= "disable"`, `emulator_pinning\s+= "0-1"`,
		`mode\s+= "host-model"`, `iothreads\s+= 2`} {
		if !regexp.MustCompile(want).MatchString(generated) {
			t.Errorf("the generated configuration lacks %s:\n%s", want, generated)
		}
	}
	if regexp.MustCompile(`check\s+= "`).MatchString(generated) {
		t.Errorf("the generated configuration names host-model's default check:\n%s", generated)
	}
}

// The v3 rule and cpu.fallback / cpu.check on a stopped domain: a domain made without the
// cpu group has a null one in state (libvirt's custom qemu64 stays out) and imports so;
// fallback and check written are in the definition, in state as written, and imported;
// a change rewrites the definition; left out again, they keep what the domain has while
// the mode stays, and a new mode gets libvirt's check for it.
func TestAccDomainCPU_fallbackCheck(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("cpuchk")
	config := func(cpu string) string {
		lines := []string{attr("name", name), attr("vcpu", 1), attr("memory_mib", 64), attr("running", false), attr("qemu_agent", false)}
		if cpu != "" {
			lines = append(lines, "cpu = "+cpu)
		}
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", lines...)
	}
	// cpuXML checks the definition's <cpu>: mode, model, the model's fallback and check.
	cpuXML := func(mode, model, fallback, check string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			c := d.Inactive.CPU
			gotModel, gotFallback := "", ""
			if c != nil && c.Model != nil {
				gotModel, gotFallback = c.Model.Value, c.Model.Fallback
			}
			if c == nil || c.Mode != mode || gotModel != model || gotFallback != fallback || c.Check != check {
				return fmt.Errorf("cpu %+v model %q fallback %q, want mode %s model %q fallback %q check %s", c, gotModel, gotFallback, mode, model, fallback, check)
			}
			return nil
		})
	}
	// update_method is the last update's, which an import has not seen.
	importStep := resource.TestStep{ResourceName: domRes, ImportState: true, ImportStateVerify: true, ImportStateId: name,
		ImportStateVerifyIgnore: []string{"update_method", "timeouts"}}
	written := `{ mode = "custom", model = "qemu64", fallback = "forbid", check = "partial" }`
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            config(""),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "cpu", nil),
				Check:             cpuXML("custom", "qemu64", "forbid", "none"),
			},
			importStep,
			{
				Config:           config(written),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "cpu", map[string]any{"mode": "custom", "model": "qemu64", "fallback": "forbid",
					"check": "partial", "topology": nil, "feature": nil, "numa_cell": nil, "pinning": nil, "emulator_pinning": nil, "iothreads": nil,
					"vcpu_placement": nil, "vcpu_cpuset": nil}),
				Check: cpuXML("custom", "qemu64", "forbid", "partial"),
			},
			importStep,
			{
				Config:            config(`{ mode = "custom", model = "qemu64", fallback = "allow", check = "full" }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "cpu.fallback", "allow", "cpu.check", "full"),
				Check:             cpuXML("custom", "qemu64", "allow", "full"),
			},
			{
				// Left out: the domain keeps them (nothing to do), state has them null.
				Config:            config(`{ mode = "custom", model = "qemu64" }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "none"),
				ConfigStateChecks: acctest.State(domRes, "cpu.fallback", nil, "cpu.check", nil),
				Check:             cpuXML("custom", "qemu64", "allow", "full"),
			},
			{
				Config:            config(`{ mode = "host-model" }`),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes, "cpu.mode", "host-model", "cpu.model", nil, "cpu.check", nil),
				Check:             cpuXML("host-model", "", "", "partial"),
			},
		},
	})
}
