package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A booted guest takes devices live: a virtio data disk plugged in and out, a NIC plugged
// in and its link taken down, each a live update (the domain keeps its id) that the guest
// sees, with the disk gone from both definitions after its removal. (Bandwidth on a
// running NIC is proven with the fake only: this host has no sfq qdisc.)
func TestAccDomainHotplug_booted(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "hot")
	data := volumeHCL("data", name+"-data.raw", attr("capacity_bytes", 1048576), attr("format", "raw"))
	nic := func(lines ...string) string {
		return blockHCL("network_interface", append([]string{attr("network", acctest.Network())}, lines...)...)
	}
	config := func(blocks ...string) string {
		return acctest.ProviderBlock("") + data + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 256), `graphics = { type = "none" }`, blockHCL("disk", attr("volume_id", disk))}, blocks...)...)
	}
	dataDisk := blockHCL("disk", "volume_id = libvirt_volume.data.id", attr("target", "vdb"))
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
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"volume data":    acctest.VolumeLookup(acctest.Pool(), name+"-data.raw"),
		}),
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

// macOf is the MAC of the last NIC.
func macOf(nics []libvirtxml.DomainInterface) string {
	if len(nics) == 0 || nics[len(nics)-1].MAC == nil {
		return "none"
	}
	return strings.ToLower(nics[len(nics)-1].MAC.Address)
}
