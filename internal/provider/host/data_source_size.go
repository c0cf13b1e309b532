package host

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// libvirt_host's size: memory (free memory read on every refresh), CPUs and their
// topology, NUMA cells and huge page pools, enough for a `precondition` that a domain
// fits before anything is made.

type hostSizeModel struct {
	MemoryTotalBytes types.Int64     `tfsdk:"memory_total_bytes"`
	MemoryFreeBytes  types.Int64     `tfsdk:"memory_free_bytes"`
	CPUs             types.Int64     `tfsdk:"cpus"`
	CPUMHz           types.Int64     `tfsdk:"cpu_mhz"`
	CPUModel         types.String    `tfsdk:"cpu_model"`
	CPUVendor        types.String    `tfsdk:"cpu_vendor"`
	CPUTopology      *hostTopology   `tfsdk:"cpu_topology"`
	NUMACells        []hostNUMACell  `tfsdk:"numa_cells"`
	Hugepages        []hostHugepages `tfsdk:"hugepages"`
}

type hostTopology struct {
	Sockets int64 `tfsdk:"sockets"`
	Dies    int64 `tfsdk:"dies"`
	Cores   int64 `tfsdk:"cores"`
	Threads int64 `tfsdk:"threads"`
}

type hostNUMACell struct {
	ID          int64           `tfsdk:"id"`
	MemoryBytes int64           `tfsdk:"memory_bytes"`
	FreeBytes   types.Int64     `tfsdk:"free_bytes"`
	CPUs        string          `tfsdk:"cpus"`
	Hugepages   []hostHugepages `tfsdk:"hugepages"`
}

type hostHugepages struct {
	SizeKiB int64       `tfsdk:"size_kib"`
	Total   int64       `tfsdk:"total"`
	Free    types.Int64 `tfsdk:"free"`
}

func hostSizeAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"memory_total_bytes": tfkit.DataInt("The host's memory as libvirt counts it (`virsh nodeinfo`: the memory of its NUMA cells)."),
		"memory_free_bytes": tfkit.DataInt("Memory free now (`virsh freecell --all`), read on every refresh. Memory the kernel " +
			"holds as page cache, which it would give up for a guest, does not count as free: a conservative figure."),
		"cpus":       tfkit.DataInt("Active host CPUs (threads), as `nproc` counts them on the host."),
		"cpu_mhz":    tfkit.DataInt("The CPUs' expected frequency in MHz."),
		"cpu_model":  tfkit.DataString("libvirt's name of the host CPU model (the closest model it knows, e.g. `EPYC-Milan`); empty when unknown."),
		"cpu_vendor": tfkit.DataString("The CPU vendor, e.g. `Intel`, `AMD`; empty when unknown."),
		"cpu_topology": schema.SingleNestedAttribute{
			MarkdownDescription: "The host CPUs' topology, for `libvirt_domain.cpu_topology` and pinning: `sockets` in all, " +
				"`dies` per socket, `cores` per die, `threads` per core. Null when the host does not tell.",
			Computed: true,
			Attributes: map[string]schema.Attribute{
				"sockets": tfkit.DataInt("CPU sockets of the host (all NUMA cells)."),
				"dies":    tfkit.DataInt("Dies per socket."),
				"cores":   tfkit.DataInt("Cores per die."),
				"threads": tfkit.DataInt("Threads per core."),
			},
		},
		"numa_cells": schema.ListNestedAttribute{
			MarkdownDescription: "The host's NUMA cells, by `id` (a host without NUMA has one cell for all of it).",
			Computed:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"id":           tfkit.DataInt("The cell's number, as `numa_cell` and `memory_backing` pin to it."),
				"memory_bytes": tfkit.DataInt("The cell's memory."),
				"free_bytes":   tfkit.DataInt("The cell's memory free now, read on every refresh; null when libvirt cannot tell."),
				"cpus":         tfkit.DataString("The cell's CPUs as a cpuset, e.g. `0-3,8-11` (for `cpu_pinning`)."),
				"hugepages":    hugepagesAttr("The cell's huge page pools, by size."),
			}},
		},
		"hugepages": hugepagesAttr("The host's huge page pools, one per size the CPU supports (e.g. 2048 and 1048576 KiB), " +
			"summed over the NUMA cells: a domain with `memory_backing.hugepages` needs its memory in free pages of one size."),
	}
}

func hugepagesAttr(desc string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: desc,
		Computed:            true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"size_kib": tfkit.DataInt("The page size in KiB (`memory_backing.hugepage_size_kib`)."),
			"total":    tfkit.DataInt("Pages reserved (the kernel's `nr_hugepages` for this size), read at most once a minute."),
			"free":     tfkit.DataInt("Pages free now, read on every refresh; null when libvirt cannot tell."),
		}},
	}
}

func (m *hostSizeModel) fromHost(info *libvirt.HostInfo, mem *libvirt.HostMemory) {
	m.MemoryTotalBytes = types.Int64Value(int64(mem.TotalBytes))
	m.MemoryFreeBytes = types.Int64Value(int64(mem.FreeBytes))
	m.CPUs = types.Int64Value(int64(info.CPUs))
	m.CPUMHz = types.Int64Value(int64(info.CPUMHz))
	m.CPUModel = types.StringValue(info.CPU.Model)
	m.CPUVendor = types.StringValue(info.CPU.Vendor)
	m.CPUTopology = nil
	if t := info.CPU; t.Sockets > 0 {
		m.CPUTopology = &hostTopology{Sockets: int64(t.Sockets), Dies: int64(t.Dies), Cores: int64(t.Cores), Threads: int64(t.Threads)}
	}
	m.NUMACells = []hostNUMACell{}
	for _, c := range mem.Cells {
		m.NUMACells = append(m.NUMACells, hostNUMACell{
			ID: int64(c.ID), MemoryBytes: int64(c.MemoryBytes), FreeBytes: tfkit.Int64FromPtr(c.FreeBytes), CPUs: c.CPUs,
			Hugepages: hugepagesFrom(c.Hugepages),
		})
	}
	m.Hugepages = hugepagesFrom(mem.Hugepages)
}

func hugepagesFrom(pools []libvirt.Hugepages) []hostHugepages {
	out := []hostHugepages{}
	for _, h := range pools {
		out = append(out, hostHugepages{SizeKiB: int64(h.SizeKiB), Total: int64(h.Total), Free: tfkit.Int64FromPtr(h.Free)})
	}
	return out
}
