package libvirt

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// The host's CPU and NUMA topology from its capabilities (<host><cpu> and
// <host><topology><cells>): static facts, kept with the capabilities for capsTTL.
// What changes from one second to the next (free memory, free huge pages) is read by
// HostMemory (host_memory.go) on every call.

// HostCPU is the host CPU: libvirt's model name and the topology of all its CPUs.
type HostCPU struct {
	Model  string // libvirt's name of the closest CPU model, e.g. EPYC-Milan; empty when unknown
	Vendor string // e.g. AMD, Intel
	// Sockets counts every socket of the host (libvirt's own <topology sockets> counts
	// sockets per NUMA node); Dies are per socket, Cores per die, Threads per core.
	Sockets, Dies, Cores, Threads int
}

// NUMACell is one NUMA cell of the host (a host without NUMA has one, for all of it).
type NUMACell struct {
	ID          int
	MemoryBytes uint64
	CPUs        string // the cell's CPUs as a cpuset, e.g. 0-3,8-11
	Hugepages   []Hugepages
	// FreeBytes is the cell's free memory; nil in the cached capabilities, and when the
	// host cannot tell (a libvirt built without NUMA support).
	FreeBytes *uint64
}

// Hugepages is a pool of huge pages of one size: on a cell, or summed over the host.
type Hugepages struct {
	SizeKiB uint64
	Total   uint64  // pages reserved (vm.nr_hugepages and its per-size, per-node forms)
	Free    *uint64 // pages not in use; nil when unknown
}

// parseHostTopology reads the host CPU, the NUMA cells and the huge page sizes (every
// page size but the smallest, the base page) from the capabilities.
func parseHostTopology(caps *libvirtxml.Caps) (HostCPU, []NUMACell, []uint64) {
	var cpu HostCPU
	var sizes []uint64
	if c := caps.Host.CPU; c != nil {
		cpu.Model, cpu.Vendor = c.Model, c.Vendor
		if t := c.Topology; t != nil {
			cpu.Sockets, cpu.Dies, cpu.Cores, cpu.Threads = t.Sockets, max(t.Dies, 1), t.Cores, t.Threads
		}
		for _, p := range c.PageSizes {
			sizes = append(sizes, kib(uint64(p.Size), p.Unit))
		}
	}
	var cells []NUMACell
	var cpus []libvirtxml.CapsHostNUMACPU
	if caps.Host.NUMA != nil && caps.Host.NUMA.Cells != nil {
		for _, c := range caps.Host.NUMA.Cells.Cells {
			cell := NUMACell{ID: c.ID}
			if c.Memory != nil {
				cell.MemoryBytes = kib(c.Memory.Size, c.Memory.Unit) * 1024
			}
			for _, p := range c.PageInfo {
				size := kib(uint64(p.Size), p.Unit)
				sizes = append(sizes, size)
				cell.Hugepages = append(cell.Hugepages, Hugepages{SizeKiB: size, Total: p.Count})
			}
			if c.CPUS != nil {
				ids := make([]int, 0, len(c.CPUS.CPUs))
				for _, x := range c.CPUS.CPUs {
					ids = append(ids, x.ID)
				}
				cell.CPUs = formatCPUSet(ids)
				cpus = append(cpus, c.CPUS.CPUs...)
			}
			cells = append(cells, cell)
		}
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	if len(sizes) > 0 {
		sizes = sizes[1:] // the base page is no huge page
	}
	for i := range cells {
		cells[i].Hugepages = slices.DeleteFunc(cells[i].Hugepages, func(h Hugepages) bool { return !slices.Contains(sizes, h.SizeKiB) })
		slices.SortFunc(cells[i].Hugepages, func(a, b Hugepages) int { return cmp.Compare(a.SizeKiB, b.SizeKiB) })
	}
	countTopology(&cpu, cpus)
	return cpu, cells, sizes
}

// countTopology counts sockets, dies, cores and threads from the cells' CPUs where every
// CPU carries its socket, die and core id: libvirt's <cpu><topology> says sockets per
// NUMA node and always one die.
func countTopology(cpu *HostCPU, cpus []libvirtxml.CapsHostNUMACPU) {
	type die struct{ socket, die int }
	type core struct{ socket, die, core int }
	sockets, dies, cores := map[int]bool{}, map[die]bool{}, map[core]bool{}
	for _, c := range cpus {
		if c.SocketID == nil || c.CoreID == nil {
			return
		}
		d := 0
		if c.DieID != nil {
			d = *c.DieID
		}
		sockets[*c.SocketID] = true
		dies[die{*c.SocketID, d}] = true
		cores[core{*c.SocketID, d, *c.CoreID}] = true
	}
	if len(cores) == 0 {
		return
	}
	cpu.Sockets = len(sockets)
	cpu.Dies = len(dies) / len(sockets)
	cpu.Cores = len(cores) / len(dies)
	cpu.Threads = len(cpus) / len(cores)
}

// kib converts a capabilities size to KiB (libvirt writes KiB; the unit is honoured anyway).
func kib(v uint64, unit string) uint64 {
	switch unit {
	case "b", "bytes":
		return v / 1024
	case "MiB", "M":
		return v << 10
	case "GiB", "G":
		return v << 20
	case "TiB", "T":
		return v << 30
	}
	return v
}

// formatCPUSet writes CPU numbers as libvirt writes a cpuset: ascending, runs as ranges
// ("0-3,8").
func formatCPUSet(ids []int) string {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
