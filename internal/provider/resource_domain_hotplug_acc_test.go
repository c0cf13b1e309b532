package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A booted guest takes devices live: a virtio data disk plugged in and out, a NIC plugged
// in and its link taken down, each a live update (the domain keeps its id) that the guest
// sees, with the disk gone from both definitions after its removal. (Bandwidth on a
// running NIC is proven with the fake only: this host has no sfq qdisc.)
func TestAccDomainHotplug_booted(t *testing.T) {
	name, config, dataDisk, gone := hotplugFixture(t, "hot")
	nic := func(lines ...string) string {
		return blockHCL("network_interface", append([]string{attr("network", acctest.Network())}, lines...)...)
	}
	var id int32
	// same checks the domain kept its running id and runs the guest command want.
	same := func(what, cmd, want string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.SameRunningDomain(t, name, &id)
			if err != nil {
				return err
			}
			if cmd == "" {
				return nil
			}
			acctest.WaitForAgent(t, name)
			// The guest takes a moment to see a device plugged in (ACPI under TCG): ask again
			// for up to 30 s until the answer is the one wanted.
			script := `for i in $(seq 30); do out=$(` + cmd + `); [ "$out" = "` + want + `" ] && break; sleep 1; done; echo "$out"`
			out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", strings.ReplaceAll(script, "MAC", macOf(d.Live.Devices.Interfaces)))
			if err != nil {
				return err
			}
			if got := strings.TrimSpace(out); got != want {
				return fmt.Errorf("%s: the guest says %q, want %q", what, got, want)
			}
			return nil
		})
	}
	vdbIn := func(want bool) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			for _, x := range []struct {
				what  string
				disks int
			}{{"live", len(d.Live.Devices.Disks)}, {"inactive", len(d.Inactive.Devices.Disks)}} {
				if has := x.disks == 2; has != want {
					return fmt.Errorf("the %s definition of %s has %d disks; want vdb: %v", x.what, name, x.disks, want)
				}
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: gone,
		Steps: []resource.TestStep{
			{Config: config(nic()), Check: same("boot", "", "")},
			{
				Config:           config(nic(), dataDisk),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            resource.ComposeAggregateTestCheckFunc(vdbIn(true), same("disk added", "ls /sys/block | grep -c vdb", "1")),
			},
			{
				Config:           config(nic()),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            resource.ComposeAggregateTestCheckFunc(vdbIn(false), same("disk removed", "ls /sys/block | grep -c vdb; true", "0")),
			},
			{
				Config:           config(nic(), nic()),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            same("nic added", "grep -lx MAC /sys/class/net/*/address | wc -l", "1"),
			},
			{
				Config:           config(nic(), nic(attr("link_state", "down"))),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            same("link down", `for n in /sys/class/net/*; do grep -qx MAC $n/address && ip link set ${n##*/} up && cat $n/carrier; done`, "0"),
			},
		},
	})
}

// hotplugFixture is a booted tiny guest's configuration (config adds blocks to the
// domain), a 1 MiB data disk vdb to plug into it, and the check that both are gone.
func hotplugFixture(t *testing.T, kind string) (name string, config func(blocks ...string) string, dataDisk string, gone resource.TestCheckFunc) {
	name, disk := acctest.DomainDisk(t, kind)
	data := volumeHCL("data", name+"-data.raw", attr("capacity_bytes", 1048576), attr("format", "raw"))
	config = func(blocks ...string) string {
		return acctest.ProviderBlock("") + data + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 256), `graphics = { type = "none" }`, blockHCL("disk", attr("volume_id", disk))}, blocks...)...)
	}
	gone = acctest.CheckGone(map[string]acctest.Lookup{
		"domain " + name: acctest.DomainLookup(name),
		"volume data":    acctest.VolumeLookup(acctest.Pool(), name+"-data.raw"),
	})
	return name, config, blockHCL("disk", "volume_id = libvirt_volume.data.id", attr("target", "vdb")), gone
}

// macOf is the MAC of the last NIC.
func macOf(nics []libvirtxml.DomainInterface) string {
	if len(nics) == 0 || nics[len(nics)-1].MAC == nil {
		return "none"
	}
	return strings.ToLower(nics[len(nics)-1].MAC.Address)
}

// A guest that does not let go of a device unplugged live (here: its vCPUs paused, so it
// answers no unplug request) makes the apply fail naming the device after the detach
// timeout, and leaves the definitions consistent: the disk is still in the live and the
// persistent definition, so the state keeps it. Once the guest runs again and has let
// go, the next apply removes it from the definition without a restart.
func TestAccDomainHotplug_detachTimeout(t *testing.T) {
	name, withDisks, dataDisk, gone := hotplugFixture(t, "detach")
	config := func(blocks ...string) string {
		return withDisks(append([]string{blockHCL("network_interface", attr("network", acctest.Network()))}, blocks...)...)
	}
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
		CheckDestroy: gone,
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
