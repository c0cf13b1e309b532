package provider_test

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

const (
	allocCapacity = 4 << 20
	lvCapacity    = 16 << 20
)

// allocationIs checks what libvirt reports as the allocation of pool/name.
func allocationIs(t *testing.T, pool, name string, want func(alloc, capacity uint64) error) resource.TestCheckFunc {
	return acctest.CheckVolume(t, pool, name, func(v *libvirt.VolumeInfo) error {
		if err := want(v.Allocation, v.Capacity); err != nil {
			return fmt.Errorf("volume %s/%s: %w", pool, name, err)
		}
		return nil
	})
}

func thick(alloc, capacity uint64) error {
	if alloc != capacity {
		return fmt.Errorf("allocation %d, want all of its capacity %d (thick)", alloc, capacity)
	}
	return nil
}

func sparse(alloc, capacity uint64) error {
	if alloc >= capacity {
		return fmt.Errorf("allocation %d, want less than its capacity %d (sparse)", alloc, capacity)
	}
	return nil
}

// In a dir pool a volume without allocation_bytes is what it always was (an empty raw
// volume fully written); allocation_bytes = 0 makes a sparse file, which stays 0 in state
// (also for a qcow2 file, whose allocation libvirt reports as what it uses).
func TestAccVolume_allocationDir(t *testing.T) {
	acctest.RequireAcc(t)
	pool, base := acctest.Pool(), acctest.RandomName("alloc")
	thickName, sparseName, qcowName := base+"-thick.raw", base+"-sparse.raw", base+"-sparse.qcow2"
	config := acctest.ProviderBlock("") +
		volumeHCL("thick", thickName, attr("format", "raw"), attr("capacity_bytes", allocCapacity)) +
		volumeHCL("sparse", sparseName, attr("format", "raw"), attr("capacity_bytes", allocCapacity), attr("allocation_bytes", 0)) +
		volumeHCL("qcow", qcowName, attr("capacity_bytes", allocCapacity), attr("allocation_bytes", 0))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			thickName: acctest.VolumeLookup(pool, thickName), sparseName: acctest.VolumeLookup(pool, sparseName),
			qcowName: acctest.VolumeLookup(pool, qcowName),
		}),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					allocationIs(t, pool, thickName, thick), allocationIs(t, pool, sparseName, sparse), allocationIs(t, pool, qcowName, sparse),
					fileBlocks(t, pool, sparseName, 0),
				),
				ConfigStateChecks: append(append(
					acctest.State("libvirt_volume.thick", "allocation_bytes", allocCapacity),
					acctest.State("libvirt_volume.sparse", "allocation_bytes", 0)...),
					acctest.State("libvirt_volume.qcow", "allocation_bytes", 0)...),
				ConfigPlanChecks: acctest.Plans(),
			},
			importStep("libvirt_volume.thick", pool+"/"+thickName, "timeouts", "format"),
			importStep("libvirt_volume.sparse", pool+"/"+sparseName, "timeouts", "format"),
			{Config: config, PlanOnly: true},
		},
	})
}

// fileBlocks checks that the file of pool/name holds at most want bytes of data on disk.
func fileBlocks(t *testing.T, pool, name string, want int64) resource.TestCheckFunc {
	return acctest.CheckVolume(t, pool, name, func(v *libvirt.VolumeInfo) error {
		var st syscall.Stat_t
		if err := syscall.Stat(v.Path, &st); err != nil {
			return err
		}
		if used := st.Blocks * 512; used > want {
			return fmt.Errorf("file %s uses %d bytes on disk, want at most %d (sparse)", v.Path, used, want)
		}
		return nil
	})
}

// TestAccVolume_allocationLogical makes a logical pool on a loop device with a volume
// without allocation_bytes (a thick LV: lvs shows no snapshot, its size is the capacity)
// and one with allocation_bytes = 0 (a sparse LV). It needs a kernel with device-mapper:
// where there is none (this project's CI machines: their kernel has no device-mapper and
// loads no modules) it skips, saying so, and tools/ci/allowed-skips.txt names it; the
// failure there is TestAccVolume_allocationLogicalNoDeviceMapper's, and the LV XML of
// both allocations is unit-tested (internal/libvirt TestVolumeXMLAllocation).
func TestAccVolume_allocationLogical(t *testing.T) {
	acctest.RequireAcc(t)
	name, dev, pool := logicalPoolOnLoop(t)
	if err := deviceMapper(); err != nil {
		t.Skipf("no device-mapper in this kernel, so no LV can be made here: %v", err)
	}
	lv := func(label string, lines ...string) string {
		// 16 MiB: more than the one 4 MiB extent a sparse LV's copy-on-write space takes,
		// which libvirt reports as its allocation.
		return resourceHCL("libvirt_volume", label, append([]string{attr("name", label), attr("pool", hcl("libvirt_pool.p.name")),
			attr("format", "raw"), attr("capacity_bytes", lvCapacity)}, lines...)...)
	}
	config := acctest.ProviderBlock("") + pool + lv("thick") + lv("sparse", attr("allocation_bytes", 0))
	gone := acctest.CheckGone(map[string]acctest.Lookup{"pool " + name: acctest.PoolLookup(name)})
	lvAttr := func(lv string) (string, error) {
		out, err := exec.Command("lvs", "--noheadings", "--units", "b", "--nosuffix", "-o", "lv_attr,lv_size", name+"/"+lv).Output()
		return strings.TrimSpace(string(out)), err
	}
	checkLVs := func(*terraform.State) error {
		if a, err := lvAttr("thick"); err != nil || strings.HasPrefix(a, "s") || strings.HasPrefix(a, "V") || !strings.HasSuffix(a, fmt.Sprint(lvCapacity)) {
			return fmt.Errorf("LV %s/thick on %s: lvs says %q (%v), want a plain LV of %d bytes (no snapshot, no thin LV)", name, dev, a, err, lvCapacity)
		}
		if a, err := lvAttr("sparse"); err != nil || !strings.HasPrefix(a, "s") {
			return fmt.Errorf("LV %s/sparse: lvs says %q (%v), want a sparse (snapshot-backed) LV", name, a, err)
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: gone,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(checkLVs,
					allocationIs(t, name, "thick", thick), allocationIs(t, name, "sparse", sparse)),
				ConfigStateChecks: append(acctest.State("libvirt_volume.thick", "allocation_bytes", lvCapacity),
					acctest.State("libvirt_volume.sparse", "allocation_bytes", 0)...),
				ConfigPlanChecks: acctest.Plans(),
			},
			importStep("libvirt_volume.thick", name+"/thick", "timeouts"),
		},
	})
}

// TestAccVolume_allocationLogicalNoDeviceMapper: on a host whose kernel has no
// device-mapper (dmsetup finds no driver), a logical pool still builds and starts on a
// loop device, but no LV can be made: the volume create fails naming device-mapper, and
// nothing but the pool is left (lvs lists no LV). On a host with device-mapper it skips,
// saying so (TestAccVolume_allocationLogical runs there; tools/ci/allowed-skips.txt).
func TestAccVolume_allocationLogicalNoDeviceMapper(t *testing.T) {
	acctest.RequireAcc(t)
	name, _, pool := logicalPoolOnLoop(t)
	if deviceMapper() == nil {
		t.Skip("this kernel has device-mapper: TestAccVolume_allocationLogical makes real LVs here")
	}
	lv := resourceHCL("libvirt_volume", "thick", attr("name", "thick"), attr("pool", hcl("libvirt_pool.p.name")),
		attr("format", "raw"), attr("capacity_bytes", lvCapacity))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"pool " + name: acctest.PoolLookup(name)}),
		Steps: []resource.TestStep{
			{Config: acctest.ProviderBlock("") + pool},
			{Config: acctest.ProviderBlock("") + pool + lv, ExpectError: acctest.ErrorText("device-mapper")},
			{
				Config: acctest.ProviderBlock("") + pool,
				Check: func(*terraform.State) error {
					// Stdout only: lvs warns on stderr of descriptors the test binary leaves open.
					out, err := exec.Command("lvs", "--noheadings", name).Output()
					if err != nil {
						var stderr []byte
						if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
							stderr = ee.Stderr
						}
						return fmt.Errorf("lvs %s: %v: %s", name, err, stderr)
					}
					if strings.TrimSpace(string(out)) != "" {
						return fmt.Errorf("a failed create left LVs in %s: %s", name, out)
					}
					return nil
				},
			},
		},
	})
}

// logicalPoolOnLoop is a test's volume group name, the loop device it goes on, and the
// libvirt_pool "p" configuration of a logical pool on it. lvm2 must be installed.
func logicalPoolOnLoop(t *testing.T) (name, dev, pool string) {
	t.Helper()
	if _, err := exec.LookPath("vgcreate"); err != nil {
		t.Fatalf("lvm2 is not installed on the test host (apt-get install lvm2; tools/testhost.sh up installs it): %v", err)
	}
	name = acctest.RandomName("lvm")
	dev = loopDevice(t, name)
	pool = resourceHCL("libvirt_pool", "p", attr("name", name), attr("type", "logical"), blockHCL("source", attr("devices", hcl(fmt.Sprintf("[%q]", dev)))))
	return name, dev, pool
}

// deviceMapper is nil when the kernel has device-mapper (dmsetup lists its targets).
func deviceMapper() error {
	if out, err := exec.Command("dmsetup", "targets").CombinedOutput(); err != nil {
		return fmt.Errorf("dmsetup targets: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
