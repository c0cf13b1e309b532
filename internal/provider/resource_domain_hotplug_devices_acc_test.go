package provider_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A booted guest with two virtiofs shares loses one live: the guest reads both, lets one
// go (umount), and the share is detached from the running domain (same id) and from its
// definition while the other stays mounted and readable; the second plan is empty. What
// cannot be proven with a device here is planned: a PCI hostdev added to the running
// domain plans `live` (the host's own host bridge passes the plan's node-device check;
// nothing is applied), and a share added back plans `restart` (libvirt 9.0's virtiofs
// hot-plug crashes libvirtd on a host without cgroups, this one).
func TestAccDomainHotplugDevices_virtiofsRemoved(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "hotfs")
	token := acctest.RandomName("from-host")
	keep, gone := shareDir(t, "host.txt", token+"-keep"), shareDir(t, "host.txt", token+"-gone")
	config := func(blocks ...string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1),
			attr("memory_mib", 256), `graphics = { type = "none" }`, blockHCL("disk", attr("volume_id", disk))}, blocks...)...)
	}
	keepFS := fsBlock(attr("source", keep), attr("target", "keep"))
	goneFS := fsBlock(attr("source", gone), attr("target", "gone"))
	var id int32
	// guest runs a shell command in the guest and wants its output.
	guest := func(what, cmd, want string) error {
		acctest.WaitForAgent(t, name)
		out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", cmd)
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(out); got != want {
			return fmt.Errorf("%s: the guest says %q, want %q", what, got, want)
		}
		return nil
	}
	// shares checks the running domain (same id) and both its definitions hold exactly the
	// mount tags want.
	shares := func(want ...string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.SameRunningDomain(t, name, &id)
			if err != nil {
				return err
			}
			for what, def := range map[string][]string{"live": tags(d.Live.Devices.Filesystems), "inactive": tags(d.Inactive.Devices.Filesystems)} {
				if strings.Join(def, ",") != strings.Join(want, ",") {
					return fmt.Errorf("the %s definition of %s has shares %q, want %q", what, name, def, want)
				}
			}
			return nil
		})
	}
	pciPlan := func(method string, blocks ...string) resource.TestStep {
		return resource.TestStep{
			Config: config(blocks...), PlanOnly: true, ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				acctest.PlanIs(domRes, "update_method", method),
			}},
		}
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: config(keepFS, goneFS),
				Check: resource.ComposeAggregateTestCheckFunc(shares("keep", "gone"), acctest.HostCheck(func() error {
					return guest("both shares", `mkdir -p /mnt/keep /mnt/gone && mount -t virtiofs keep /mnt/keep &&
mount -t virtiofs gone /mnt/gone && echo $(cat /mnt/keep/host.txt) $(cat /mnt/gone/host.txt) && umount /mnt/gone`,
						token+"-keep "+token+"-gone")
				})),
			},
			{
				Config:           config(keepFS),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check: resource.ComposeAggregateTestCheckFunc(shares("keep"), acctest.HostCheck(func() error {
					return guest("the kept share", "cat /mnt/keep/host.txt", token+"-keep")
				})),
			},
			pciPlan("live", keepFS, blockHCL("hostdev", attr("pci", "0000:00:00.0"))),
			pciPlan("restart", keepFS, goneFS),
		},
	})
}

// tags are the mount tags of shares, in order.
func tags(fss []libvirtxml.DomainFilesystem) []string {
	var out []string
	for _, f := range fss {
		if f.Target != nil {
			out = append(out, f.Target.Dir)
		}
	}
	return out
}
