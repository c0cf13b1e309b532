package provider_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A guest that does not let go of a device unplugged live (here: its vCPUs paused, so it
// answers no unplug request) makes the apply fail naming the device after the detach
// timeout, and leaves the definitions consistent: the disk is still in the live and the
// persistent definition, so the state keeps it. Once the guest runs again and has let
// go, the next apply removes it from the definition without a restart.
func TestAccDomainHotplug_detachTimeout(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "detach")
	data := volumeHCL("data", name+"-data.raw", attr("capacity_bytes", 1048576), attr("format", "raw"))
	config := func(blocks ...string) string {
		return acctest.ProviderBlock("") + data + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 256), `graphics = { type = "none" }`, blockHCL("disk", attr("volume_id", disk)),
			blockHCL("network_interface", attr("network", acctest.Network()))}, blocks...)...)
	}
	dataDisk := blockHCL("disk", "volume_id = libvirt_volume.data.id", attr("target", "vdb"))
	var id int32
	// vdbIn checks where vdb is: in the live definition and in the persistent one.
	vdbIn := func(live, persistent bool) error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		if l, p := len(d.Live.Devices.Disks) == 2, len(d.Inactive.Devices.Disks) == 2; l != live || p != persistent {
			return fmt.Errorf("vdb live %v, persistent %v; want %v, %v", l, p, live, persistent)
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"volume data":    acctest.VolumeLookup(acctest.Pool(), name+"-data.raw"),
		}),
		Steps: []resource.TestStep{
			{
				Config: config(dataDisk),
				Check: acctest.HostCheck(func() error {
					acctest.WaitForAgent(t, name) // the guest is up and handles unplug requests
					_, err := acctest.SameRunningDomain(t, name, &id)
					return err
				}),
			},
			{
				PreConfig:   func() { acctest.SuspendDomain(t, name) },
				Config:      config(),
				ExpectError: regexp.MustCompile(`detach disk vdb from domain ` + name + `:\s+the\s+guest\s+did\s+not\s+release\s+it\s+within\s+30s`),
			},
			{
				// Nothing changed on the host but the request: both definitions keep vdb.
				PreConfig: func() {
					if err := vdbIn(true, true); err != nil {
						t.Fatalf("after the timed-out detach: %v", err)
					}
					acctest.ResumeDomain(t, name)
					// The guest now takes the unplug QEMU still has pending.
					deadline := time.Now().Add(90 * time.Second)
					for vdbIn(false, true) != nil && time.Now().Before(deadline) {
						time.Sleep(time.Second)
					}
					if err := vdbIn(false, true); err != nil {
						t.Fatalf("after resume: %v", err)
					}
				},
				Config:           config(),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check: acctest.HostCheck(func() error {
					if _, err := acctest.SameRunningDomain(t, name, &id); err != nil {
						return err
					}
					return vdbIn(false, false)
				}),
			},
			{Config: config(), ConfigPlanChecks: acctest.Plans(acctest.NoChange())},
		},
	})
}
