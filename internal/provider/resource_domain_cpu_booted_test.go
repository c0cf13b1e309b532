package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// The must-show: a guest with 1 socket × 2 cores × 1 thread and two NUMA cells
// sees 2 CPUs and 2 NUMA nodes (read inside it through the agent); its vCPU pins then
// change live: the same domain id, and the running domain's pins are the new ones.
func TestAccDomainCPU_numaBooted(t *testing.T) {
	acctest.RequireAcc(t)
	name, disk := acctest.DomainDisk(t, "numa")
	config := func(pin0, pin1, emulator string, balloon ...string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 2), attr("memory_mib", 256),
			strings.Join(balloon, ""),
			`graphics = { type = "none" }`, blockHCL("disk", attr("volume_id", disk)),
			"cpu_topology = { sockets = 1, cores = 2, threads = 1 }",
			blockHCL("numa_cell", attr("id", 0), attr("cpus", "0"), attr("memory_mib", 128)),
			blockHCL("numa_cell", attr("id", 1), attr("cpus", "1"), attr("memory_mib", 128)),
			fmt.Sprintf("cpu_pinning = { \"0\" = %q, \"1\" = %q }", pin0, pin1), attr("emulator_pinning", emulator))
	}
	var id int32
	// pins checks the running domain's vCPU and emulator pins (what virsh vcpupin and
	// emulatorpin show) and that it is the domain first started.
	// pins also checks the balloon's statistics period, live and persistent (0: none).
	pins := func(pin0, pin1, emulator string, statsSec uint) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.SameRunningDomain(t, name, &id)
			if err != nil {
				return err
			}
			if got := balloonPeriod(d.Inactive); got != statsSec || (statsSec != 0 && balloonPeriod(d.Live) != statsSec) {
				return fmt.Errorf("memballoon stats period of %s: persistent %d live %d, want %d", name, got, balloonPeriod(d.Live), statsSec)
			}
			for what, tune := range map[string]*libvirtxml.DomainCPUTune{"live": d.Live.CPUTune, "persistent": d.Inactive.CPUTune} {
				got := map[uint]string{}
				if tune != nil {
					for _, p := range tune.VCPUPin {
						got[p.VCPU] = p.CPUSet
					}
				}
				if tune == nil || !domainxml.SameCPUSet(got[0], pin0) || !domainxml.SameCPUSet(got[1], pin1) || tune.EmulatorPin == nil ||
					!domainxml.SameCPUSet(tune.EmulatorPin.CPUSet, emulator) {
					return fmt.Errorf("%s pins of %s: %+v, want vCPU 0 on %s, vCPU 1 on %s, emulator on %s", what, name, tune, pin0, pin1, emulator)
				}
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config("0", "1", "0", balloon10),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeTestCheckFunc(pins("0", "1", "0", 10), acctest.HostCheck(func() error {
					acctest.WaitForAgent(t, name)
					out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", "nproc; ls -d /sys/devices/system/node/node*")
					if err != nil {
						return err
					}
					if got := strings.Fields(out); len(got) != 3 || got[0] != "2" || got[1] != "/sys/devices/system/node/node0" || got[2] != "/sys/devices/system/node/node1" {
						return fmt.Errorf("the guest sees %q; want 2 CPUs and NUMA nodes node0 and node1", out)
					}
					return nil
				})),
			},
			{
				// New pins and a new statistics period: live, the same running domain.
				Config:           config("1", "0,1", "0-1", strings.Replace(balloon10, "10", "5", 1)),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            pins("1", "0-1", "0-1", 5),
			},
			{
				// Without memballoon the statistics stop live and the definition has none.
				Config:           config("1", "0,1", "0-1"),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            pins("1", "0-1", "0-1", 0),
			},
		},
	})
}

const balloon10 = `devices = { memballoon = { model = "virtio", stats_period_sec = 10 } }`

// balloonPeriod is d's memory-statistics period in seconds (0: none).
func balloonPeriod(d *libvirtxml.Domain) uint {
	if d == nil || d.Devices == nil || d.Devices.MemBalloon == nil || d.Devices.MemBalloon.Stats == nil {
		return 0
	}
	return d.Devices.MemBalloon.Stats.Period
}
