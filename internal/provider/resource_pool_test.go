package provider_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

func poolConfig(name, dir string, force bool) string {
	return acctest.ProviderBlock("") + resourceHCL("libvirt_pool", "p", attr("name", name), attr("type", "dir"),
		attr("target_path", dir), attr("autostart", true), attr("force_destroy", force))
}

func TestAccPool_dir(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("pool")
	dir := testPoolDir(name)
	positive := func(a string) resource.TestCheckFunc {
		return resource.TestCheckResourceAttrWith("libvirt_pool.p", a, func(v string) error {
			if err := nonZero(v); err != nil {
				return fmt.Errorf("%s = %w", a, err)
			}
			return nil
		})
	}
	checkLive := func(*terraform.State) error {
		st, err := acctest.Client(t).ReadPool(context.Background(), name)
		if err != nil {
			return err
		}
		if !st.Active || !st.Autostart || st.Def.Type != "dir" || st.Def.Target == nil || st.Def.Target.Path != dir {
			return fmt.Errorf("pool %s: active %t autostart %t type %s target %+v; want an active autostarted dir pool on %s",
				name, st.Active, st.Autostart, st.Def.Type, st.Def.Target, dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("pool directory %s was not built: %v", dir, err)
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			poolGone(name),
			func(*terraform.State) error {
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("pool directory %s still exists after destroy (%v)", dir, err)
				}
				return nil
			},
		),
		Steps: []resource.TestStep{
			{
				Config: poolConfig(name, dir, false),
				Check:  resource.ComposeAggregateTestCheckFunc(checkLive, positive("capacity_bytes"), positive("available_bytes")),
				ConfigStateChecks: acctest.State("libvirt_pool.p",
					"id", acctest.NotNull,
					"source", nil,
				),
				ConfigPlanChecks: acctest.Plans(),
			},
			importStep("libvirt_pool.p", name, "timeouts", "allocation_bytes", "available_bytes"),
			{
				ResourceName:    "libvirt_pool.p",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   name,
			},
			{
				// A volume written into the pool changes its sizes; that is no diff.
				PreConfig: func() { acctest.CreateRawVolume(t, name, "tfacc-vol.raw", 4<<20) },
				Config:    poolConfig(name, dir, false),
				PlanOnly:  true,
			},
			{
				// Destroy refuses a pool that holds volumes.
				Config:      acctest.ProviderBlock(""),
				ExpectError: acctest.ErrorText("Storage pool " + name + " still holds 1 volume(s): tfacc-vol.raw. Delete them first, or set force_destroy = true"),
			},
			{
				Config:           poolConfig(name, dir, true),
				ConfigPlanChecks: acctest.Does("libvirt_pool.p", acctest.Update),
				Check:            checkLive,
			},
			// The test's destroy now deletes the volume, the pool and its directory.
		},
	})
}

// poolGone is a CheckDestroy: pool name is gone from the host.
func poolGone(name string) resource.TestCheckFunc {
	return acctest.CheckGone(map[string]acctest.Lookup{"pool " + name: acctest.PoolLookup(name)})
}

func TestPool_validation(t *testing.T) {
	cases := []struct{ body, want string }{
		{`type = "dir"`, `a dir pool needs target_path`},
		{"type = \"dir\"\n target_path = \"relative/dir\"", `must be a clean absolute path`},
		{"type = \"dir\"\n target_path = \"/srv/p\"\n source {\n devices = [\"/dev/sdb\"]\n }", `a dir pool has no source`},
		{`type = "logical"`, `a logical pool needs source.devices`},
		{"type = \"logical\"\n source {\n name = \"vg0\"\n }", `a logical pool needs source.devices`},
		{"type = \"logical\"\n target_path = \"/srv/x\"\n source {\n devices = [\"/dev/sdb\"]\n name = \"vg0\"\n }", `target_path is always /dev/<volume group> ("/dev/vg0" here)`},
		{"type = \"netfs\"\n target_path = \"/mnt/p\"\n source {\n host = \"nas\"\n }", `a netfs pool needs source.host (the server) and source.dir`},
		{"type = \"netfs\"\n target_path = \"/mnt/p\"\n source {\n host = \"nas\"\n dir = \"/x\"\n format = \"ntfs\"\n }", `source.format "ntfs" is not one of auto, nfs, glusterfs, cifs`},
		{`type = "sheepdog"`, `value must be one of`},
	}
	var plans []planCase
	for _, c := range cases {
		plans = append(plans, planCase{c.want, c.body, regexp.QuoteMeta(c.want)})
	}
	expectPlanErrors(t, "resource \"libvirt_pool\" \"p\" {\n  name = \"tfacc-pool-bad\"\n%s\n}\n", plans)
}

// TestAccPool_logical builds a real LVM volume group on a loop device (a sparse file in
// the test host's state directory) when lvm2 is installed on the test host; it always
// checks that a logical pool on a missing device fails cleanly, leaving no definition.
func TestAccPool_logical(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("lvm")
	logical := func(dev string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_pool", "p", attr("name", name), attr("type", "logical"),
			fmt.Sprintf("source {\n    devices = [%q]\n  }", dev))
	}
	gone := poolGone(name)

	// A device that is not there: the build fails, the definition is removed again.
	acctest.Run(t, resource.TestCase{
		CheckDestroy: gone,
		Steps: []resource.TestStep{{
			Config:      logical("/dev/tfacc-no-such-disk"),
			ExpectError: acctest.ErrorText("build storage pool " + name + ":"),
			Check:       gone,
		}},
	})
	if err := gone(nil); err != nil {
		t.Fatalf("a failed create left the pool behind: %v", err)
	}

	if _, err := exec.LookPath("vgcreate"); err != nil {
		t.Fatalf("lvm2 is not installed on the test host (apt-get install lvm2; tools/testhost.sh up installs it): %v", err)
	}
	dev := loopDevice(t, name)
	checkVG := func(*terraform.State) error {
		out, err := exec.Command("vgs", "--noheadings", "-o", "vg_name,pv_count", name).CombinedOutput()
		if err != nil || !strings.Contains(string(out), name) {
			return fmt.Errorf("volume group %s on %s: vgs says %s (%v)", name, dev, out, err)
		}
		return nil
	}
	steps := func() []resource.TestStep {
		return []resource.TestStep{
			{
				Config: logical(dev),
				Check:  resource.ComposeAggregateTestCheckFunc(checkVG, resource.TestCheckResourceAttrWith("libvirt_pool.p", "capacity_bytes", nonZero)),
				ConfigStateChecks: acctest.State("libvirt_pool.p",
					"target_path", "/dev/"+name,
					"source.name", name,
					"source.format", "lvm2",
				),
				ConfigPlanChecks: acctest.Plans(),
			},
			{
				ResourceName:    "libvirt_pool.p",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   name,
			},
		}
	}
	// First the volume group is created on the empty device; destroy leaves it there.
	acctest.Run(t, resource.TestCase{CheckDestroy: gone, Steps: steps()})
	if err := checkVG(nil); err != nil {
		t.Fatalf("destroy should leave the volume group: %v", err)
	}
	// Then a pool on the device that holds the group already uses it as it is.
	acctest.Run(t, resource.TestCase{CheckDestroy: gone, Steps: steps()})

	// A device with a file system on it is never formatted: create fails, the file system
	// stays, no pool is left.
	fsDev := loopDevice(t, name+"-fs")
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", fsDev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v %s", fsDev, err, out)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: gone,
		Steps: []resource.TestStep{{
			Config:      logical(fsDev),
			ExpectError: acctest.ErrorText("the devices were not formatted because they are not empty"),
		}},
	})
	if err := gone(nil); err != nil {
		t.Fatalf("a failed create left the pool behind: %v", err)
	}
	if out, err := exec.Command("blkid", "-o", "value", "-s", "TYPE", fsDev).Output(); err != nil || strings.TrimSpace(string(out)) != "ext4" {
		t.Fatalf("the ext4 file system on %s is gone (blkid: %q, %v)", fsDev, out, err)
	}
}

func nonZero(v string) error {
	if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
		return fmt.Errorf("%q, want a positive number of bytes", v)
	}
	return nil
}

// loopDevice attaches a 64 MiB sparse file as a loop device; at cleanup it removes the
// volume group named vg (if any), the PV label, the loop device and the file.
func loopDevice(t *testing.T, vg string) string {
	t.Helper()
	img := testPoolDir(vg) + ".img"
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		os.Remove(img)
		t.Fatalf("losetup %s: %v", img, err)
	}
	dev := strings.TrimSpace(string(out))
	defer func() {
		// libvirtd may run with a private copy of /dev made when it started (the test host
		// hides /dev/kvm so): a loop device created since is missing there.
		pid, err := os.ReadFile(os.Getenv("LIBVIRT_TEST_LIBVIRTD_PIDFILE"))
		if err != nil {
			return
		}
		if _, err := os.Stat("/proc/" + strings.TrimSpace(string(pid)) + "/root" + dev); errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s is not in libvirtd's /dev (a private copy made when it started): restart it "+
				"(tools/testhost.sh restart-libvirtd) or free a lower loop device", dev)
		}
	}()
	t.Cleanup(func() {
		// The device may hold no group or label (any more): only the detach must work.
		_ = exec.Command("vgremove", "-f", vg).Run()
		_ = exec.Command("pvremove", "-f", dev).Run()
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("cleanup: losetup -d %s: %v %s", dev, err, out)
		}
		os.Remove(img)
	})
	return dev
}

// A pool whose directory vanished (and so cannot start) is still destroyed: undefined,
// with a warning, its storage untouched.
func TestAccPool_lostDirectory(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("pool")
	dir := testPoolDir(name)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: poolGone(name),
		Steps: []resource.TestStep{
			{Config: poolConfig(name, dir, false)},
			{
				PreConfig: func() {
					acctest.StopPool(t, name)
					if err := os.Remove(dir); err != nil {
						t.Fatal(err)
					}
				},
				// The stopped pool reads without a diff (its sizes are libvirt's last known).
				Config:   poolConfig(name, dir, false),
				PlanOnly: true,
				// On the host: still defined, inactive, its directory gone.
				ConfigPlanChecks: afterPlan(func(*tfjson.Plan) error {
					active, err := acctest.Client(t).PoolActive(acctest.Ctx(t), name)
					if err != nil {
						return fmt.Errorf("pool %s on the host: %w", name, err)
					}
					if active {
						return fmt.Errorf("pool %s is active on the host, want it stopped", name)
					}
					if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
						return fmt.Errorf("the directory %s of pool %s is there (%v), want it gone", dir, name, err)
					}
					return nil
				}),
			},
		},
	})
}

// A netfs pool whose share cannot be mounted (no NFS server on the test host): create
// fails naming the mount, and neither the definition nor the mount point it built stays.
func TestAccPool_netfsUnreachable(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("nfs")
	dir := testPoolDir(name)
	gone := poolGone(name)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: gone,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + resourceHCL("libvirt_pool", "p", attr("name", name), attr("type", "netfs"),
				attr("target_path", dir), "source {\n    host   = \"127.0.0.1\"\n    dir    = \"/exports/tfacc\"\n    format = \"nfs\"\n  }"),
			ExpectError: acctest.ErrorText("start storage pool " + name + ":"),
		}},
	})
	if err := gone(nil); err != nil {
		t.Fatalf("a failed create left the pool behind: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed create left the mount point %s behind (%v)", dir, err)
	}
}
