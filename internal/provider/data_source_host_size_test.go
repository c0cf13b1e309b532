package provider_test

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// libvirt_host's memory, CPUs, NUMA cells and huge pages against this machine's kernel
// (/sys, /proc) and libvirt's own virNodeGetInfo / virNodeGetFreeMemory.
func TestAccHostDataSource_size(t *testing.T) {
	acctest.RequireAcc(t)
	ni := acctest.HostNodeInfo(t)
	k := readKernelHost(t)
	const ds = "data.libvirt_host.this"
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `data "libvirt_host" "this" {}`,
			Check: func(s *terraform.State) error {
				a := s.RootModule().Resources[ds].Primary.Attributes
				n := func(key string) int64 { v, _ := strconv.ParseInt(a[key], 10, 64); return v }
				total, free := n("memory_total_bytes"), n("memory_free_bytes")
				// The machine's memory may be hot-plugged while the test runs (virtio-mem:
				// seen here going from 10 to 23.5 GiB): the total read in between the two
				// reads of libvirt and the kernel, before the apply and now, is the one.
				ni2, k2 := acctest.HostNodeInfo(t), readKernelHost(t)
				between := func(v, a, b int64) bool { return v >= min(a, b) && v <= max(a, b) }
				switch {
				case !between(total, int64(ni.MemoryKiB)*1024, int64(ni2.MemoryKiB)*1024):
					return fmt.Errorf("memory_total_bytes %d, virNodeGetInfo says %d KiB (before) and %d KiB (now)", total, ni.MemoryKiB, ni2.MemoryKiB)
				case !between(total, k.nodeMemKiB*1024, k2.nodeMemKiB*1024) || total > max(k.memTotalKiB, k2.memTotalKiB)*1024:
					return fmt.Errorf("memory_total_bytes %d: the NUMA nodes hold %d then %d KiB, /proc/meminfo %d then %d KiB",
						total, k.nodeMemKiB, k2.nodeMemKiB, k.memTotalKiB, k2.memTotalKiB)
				case free <= 0 || free > total:
					return fmt.Errorf("memory_free_bytes %d of %d", free, total)
				// Free memory moves by gigabytes under CI's load within seconds (guests start
				// and stop, page cache): near the NUMA nodes' free memory before or now, or
				// in between.
				case !near(free, int64(acctest.HostFreeMemory(t))) || !(near(free, k.nodeFreeKiB*1024) || near(free, k2.nodeFreeKiB*1024) ||
					between(free, k.nodeFreeKiB*1024, k2.nodeFreeKiB*1024)):
					return fmt.Errorf("memory_free_bytes %d: libvirt now says %d, the NUMA nodes %d KiB (before) and %d KiB (now)",
						free, acctest.HostFreeMemory(t), k.nodeFreeKiB, k2.nodeFreeKiB)
				case n("cpus") != int64(k.cpus) || n("cpus") != int64(ni.CPUs):
					return fmt.Errorf("cpus %s, the kernel has %d online, virNodeGetInfo %d", a["cpus"], k.cpus, ni.CPUs)
				case n("cpu_topology.sockets") != int64(k.sockets) ||
					n("cpu_topology.sockets")*n("cpu_topology.dies")*n("cpu_topology.cores")*n("cpu_topology.threads") != int64(k.cpus):
					return fmt.Errorf("cpu_topology %v: the kernel has %d sockets, %d CPUs", a, k.sockets, k.cpus)
				case n("numa_cells.#") != int64(len(k.nodeCPUs)):
					return fmt.Errorf("%s NUMA cells, the kernel has %d", a["numa_cells.#"], len(k.nodeCPUs))
				case n("hugepages.#") != int64(len(k.hugepages)):
					return fmt.Errorf("%s huge page sizes, the kernel has %v", a["hugepages.#"], k.hugepages)
				}
				for i, cpus := range k.nodeCPUs {
					if got := a[fmt.Sprintf("numa_cells.%d.cpus", i)]; got != cpus {
						return fmt.Errorf("numa_cells.%d.cpus %q, the kernel's cpulist %q", i, got, cpus)
					}
				}
				for i, h := range k.hugepages {
					at := func(f string) int64 { return n(fmt.Sprintf("hugepages.%d.%s", i, f)) }
					if at("size_kib") != h[0] || at("total") != h[1] || at("free") != h[2] {
						return fmt.Errorf("hugepages.%d: %d KiB %d/%d free, the kernel %v", i, at("size_kib"), at("free"), at("total"), h)
					}
				}
				return nil
			},
		}},
	})
}

// A precondition on memory_free_bytes stops the plan of a domain that does not fit,
// before anything is made; one that fits is defined.
func TestAccHostDataSource_precondition(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("fits")
	tooBig := acctest.HostNodeInfo(t).MemoryKiB/1024*2 + 1024
	cfg := func(mib uint64) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
data "libvirt_host" "this" {}

resource "libvirt_domain" "vm" {
  name       = %[1]q
  vcpu       = 1
  memory_mib = %[2]d
  running    = false

  lifecycle {
    precondition {
      condition     = %[2]d * 1048576 <= data.libvirt_host.this.memory_free_bytes
      error_message = "Domain %[1]s needs %[2]d MiB; ${data.libvirt_host.this.hostname} has ${floor(data.libvirt_host.this.memory_free_bytes / 1048576)} MiB free."
    }
  }
}
`, name, mib)
	}
	gone := acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})
	acctest.Run(t, resource.TestCase{
		CheckDestroy: gone,
		Steps: []resource.TestStep{
			{
				Config:      cfg(tooBig),
				ExpectError: regexp.MustCompile(fmt.Sprintf(`(?s)Resource precondition failed.*Domain %s needs %d MiB; .* has \d+ MiB\s+free`, name, tooBig)),
			},
			{
				PreConfig: func() {
					if err := gone(nil); err != nil {
						t.Fatalf("after the failed plan: %v", err)
					}
				},
				Config:            cfg(64),
				ConfigStateChecks: acctest.State("libvirt_domain.vm", "memory_mib", 64),
				ConfigPlanChecks:  acctest.Plans(),
				// The domain that fits is defined on the host, stopped, with its 64 MiB.
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if d.Active || d.Inactive.Memory == nil || memoryBytes(uint64(d.Inactive.Memory.Value), d.Inactive.Memory.Unit) != 64<<20 {
						return fmt.Errorf("domain %s on the host: active %v, memory %+v; want it defined, stopped, with 64 MiB", name, d.Active, d.Inactive.Memory)
					}
					return nil
				}),
			},
		},
	})
}

// libvirt's test driver: two NUMA cells of 8 CPUs, huge page pools per cell.
func TestAccHostDataSource_testDriverCells(t *testing.T) {
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: providerAt("test:///default") + `data "libvirt_host" "this" {}`,
			ConfigStateChecks: acctest.State("data.libvirt_host.this",
				"memory_total_bytes", int64(3145728*1024),
				"cpus", 16,
				"cpu_topology", map[string]any{"sockets": 2, "dies": 1, "cores": 8, "threads": 1},
				"numa_cells", acctest.ListSize(2),
				"numa_cells.0", acctest.Partial(map[string]any{"id": 0, "memory_bytes": int64(2097152 * 1024), "cpus": "0-7"}),
				"numa_cells.1", acctest.Partial(map[string]any{"id": 1, "cpus": "8-15", "free_bytes": acctest.NotNull}),
				"hugepages", acctest.ListSize(3),
				// (free stays null: libvirt 9's test driver answers virNodeGetFreePages through
				// the daemon with an error, though virsh, which runs it in-process, shows counts)
				"hugepages.1", acctest.Partial(map[string]any{"size_kib": 2048, "total": 0}),
			),
			// The test driver asked directly: virNodeGetInfo, its capabilities' cells and pages.
			Check: hostSizeMatches("data.libvirt_host.this", acctest.TestDriverURI),
		}},
	})
}

// kernelHost is what the kernel says about the machine.
type kernelHost struct {
	memTotalKiB             int64      // /proc/meminfo MemTotal
	nodeMemKiB, nodeFreeKiB int64      // summed over /sys/devices/system/node/node*/meminfo
	nodeCPUs                []string   // each node's cpulist, by node number
	cpus, sockets           int        // online CPUs; distinct physical_package_id
	hugepages               [][3]int64 // size KiB, nr_hugepages, free_hugepages, by size
}

func readKernelHost(t *testing.T) kernelHost {
	t.Helper()
	var k kernelHost
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	num := func(p string) int64 { v, _ := strconv.ParseInt(read(p), 10, 64); return v }
	k.memTotalKiB = meminfoKiB(t, "/proc/meminfo", "MemTotal:")
	nodes, _ := filepath.Glob("/sys/devices/system/node/node[0-9]*")
	slices.SortFunc(nodes, func(a, b string) int { return nodeNumber(a) - nodeNumber(b) })
	for _, n := range nodes {
		k.nodeMemKiB += meminfoKiB(t, n+"/meminfo", "MemTotal:")
		k.nodeFreeKiB += meminfoKiB(t, n+"/meminfo", "MemFree:")
		k.nodeCPUs = append(k.nodeCPUs, read(n+"/cpulist"))
	}
	packages := map[string]bool{}
	cpus, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id")
	for _, p := range cpus {
		online := filepath.Join(filepath.Dir(filepath.Dir(p)), "online")
		if _, err := os.Stat(online); err == nil && read(online) == "0" {
			continue
		}
		k.cpus++
		packages[read(p)] = true
	}
	k.sockets = len(packages)
	sizes, _ := filepath.Glob("/sys/kernel/mm/hugepages/hugepages-*kB")
	for _, d := range sizes {
		size, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(d), "hugepages-"), "kB"), 10, 64)
		k.hugepages = append(k.hugepages, [3]int64{size, num(d + "/nr_hugepages"), num(d + "/free_hugepages")})
	}
	slices.SortFunc(k.hugepages, func(a, b [3]int64) int { return cmp.Compare(a[0], b[0]) })
	return k
}

func nodeNumber(p string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "node"))
	return n
}

// meminfoKiB reads one "Key: N kB" line of a meminfo file (a node's lines start "Node N").
func meminfoKiB(t *testing.T, path, key string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if i := slices.Index(fields, key); i >= 0 && i+1 < len(fields) {
			v, _ := strconv.ParseInt(fields[i+1], 10, 64)
			return v
		}
	}
	t.Fatalf("%s: no %s", path, key)
	return 0
}

// near: free memory read twice a moment apart, with other tests running, agrees within
// 512 MiB or a tenth.
func near(a, b int64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= max(512<<20, b/10)
}
