package libvirt

import (
	"os"
	"reflect"
	"slices"
	"testing"
)

func u64(n uint64) *uint64 { return &n }

func readCaps(t *testing.T, file string) *Capabilities {
	t.Helper()
	text, err := os.ReadFile("testdata/caps/" + file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCapabilities(string(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Two sockets, one NUMA cell each, hyperthreads numbered after the cores (0-3,8-11): the
// topology counts both sockets (libvirt's <topology sockets='1'> is per cell), the base
// 4 KiB page is no huge page pool.
func TestParseCapabilities_twoCells(t *testing.T) {
	c := readCaps(t, "capabilities-numa2.xml")
	if want := (HostCPU{Model: "Cascadelake-Server-noTSX", Vendor: "Intel", Sockets: 2, Dies: 1, Cores: 4, Threads: 2}); c.CPU != want {
		t.Errorf("cpu %+v, want %+v", c.CPU, want)
	}
	if !slices.Equal(c.HugepageSizesKiB, []uint64{2048, 1048576}) {
		t.Errorf("sizes %v", c.HugepageSizesKiB)
	}
	want := []NUMACell{
		{ID: 0, MemoryBytes: 32594808 * 1024, CPUs: "0-3,8-11", Hugepages: []Hugepages{{SizeKiB: 2048, Total: 512}, {SizeKiB: 1048576, Total: 2}}},
		{ID: 1, MemoryBytes: 33027480 * 1024, CPUs: "4-7,12-15", Hugepages: []Hugepages{{SizeKiB: 2048, Total: 256}, {SizeKiB: 1048576, Total: 0}}},
	}
	if !reflect.DeepEqual(c.Cells, want) {
		t.Errorf("cells\n got %+v\nwant %+v", c.Cells, want)
	}
}

// The test host: one cell for the whole machine, no huge pages reserved.
func TestParseCapabilities_testHostTopology(t *testing.T) {
	c := readCaps(t, "capabilities.xml")
	if c.CPU.Sockets != 1 || c.CPU.Dies != 1 || c.CPU.Cores != 2 || c.CPU.Threads != 1 || c.CPU.Vendor != "AMD" {
		t.Errorf("cpu %+v", c.CPU)
	}
	if len(c.Cells) != 1 || c.Cells[0].CPUs != "0-1" || len(c.Cells[0].Hugepages) != 2 || c.Cells[0].Hugepages[0].Total != 0 {
		t.Errorf("cells %+v", c.Cells)
	}
}

// Without ids on the cells' CPUs (older libvirt, offline CPUs) the <topology> element
// stands; without either, nothing is made up.
func TestParseCapabilities_topologyFallback(t *testing.T) {
	c, err := ParseCapabilities(`<capabilities><host><cpu><arch>x86_64</arch><topology sockets='1' cores='6' threads='2'/></cpu>
<topology><cells num='1'><cell id='0'><memory unit='KiB'>1024</memory><cpus num='2'><cpu id='0'/><cpu id='1'/></cpus></cell></cells></topology>
</host></capabilities>`)
	if err != nil {
		t.Fatal(err)
	}
	if want := (HostCPU{Sockets: 1, Dies: 1, Cores: 6, Threads: 2}); c.CPU != want || c.Cells[0].MemoryBytes != 1<<20 || c.Cells[0].CPUs != "0-1" {
		t.Errorf("cpu %+v cells %+v", c.CPU, c.Cells)
	}
	if c, _ := ParseCapabilities(`<capabilities><host><cpu><arch>i686</arch></cpu></host></capabilities>`); c.CPU != (HostCPU{}) || c.Cells != nil || c.HugepageSizesKiB != nil {
		t.Errorf("empty host: %+v", c)
	}
}

// Free counts land on copies of the cached cells (the cache is never written), per cell
// and summed for the host; what libvirt did not tell stays nil.
func TestFreeMemoryMerge(t *testing.T) {
	c := readCaps(t, "capabilities-numa2.xml")
	info := &HostInfo{MemoryTotalBytes: 65622288 * 1024, Cells: c.Cells, HugepageSizesKiB: c.HugepageSizesKiB}
	f := freeMemory{
		cells: map[int]uint64{0: 10 << 30, 1: 20 << 30},
		pages: map[int]map[uint64]uint64{0: {2048: 500, 1048576: 1}, 1: {2048: 256, 1048576: 0}},
	}
	m := f.merge(info)
	if m.TotalBytes != 65622288*1024 || m.FreeBytes != 30<<30 {
		t.Errorf("total %d free %d", m.TotalBytes, m.FreeBytes)
	}
	wantHost := []Hugepages{{SizeKiB: 2048, Total: 768, Free: u64(756)}, {SizeKiB: 1048576, Total: 2, Free: u64(1)}}
	if !reflect.DeepEqual(m.Hugepages, wantHost) {
		t.Errorf("host pools %+v", m.Hugepages)
	}
	if *m.Cells[1].FreeBytes != 20<<30 || *m.Cells[0].Hugepages[0].Free != 500 || m.Cells[1].CPUs != "4-7,12-15" {
		t.Errorf("cells %+v", m.Cells)
	}
	if c.Cells[0].FreeBytes != nil || c.Cells[0].Hugepages[0].Free != nil {
		t.Errorf("the cached cells were written: %+v", c.Cells)
	}

	// A libvirt without NUMA support: the host's free memory only.
	m = (&freeMemory{host: u64(5 << 30)}).merge(info)
	if m.FreeBytes != 5<<30 || m.Cells[0].FreeBytes != nil || m.Hugepages[0].Free != nil || m.Hugepages[0].Total != 768 {
		t.Errorf("no NUMA: %+v", m)
	}
}

func TestCellRunsAndCPUSet(t *testing.T) {
	if got := cellRuns([]int{0, 1, 2, 4, 6, 7}); !reflect.DeepEqual(got, []cellRun{{0, 3}, {4, 1}, {6, 2}}) {
		t.Errorf("runs %v", got)
	}
	for _, tc := range []struct {
		ids  []int
		want string
	}{{nil, ""}, {[]int{0}, "0"}, {[]int{1, 0}, "0-1"}, {[]int{3, 1, 2, 8, 10, 9, 12, 12}, "1-3,8-10,12"}} {
		if got := formatCPUSet(tc.ids); got != tc.want {
			t.Errorf("formatCPUSet(%v) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}
