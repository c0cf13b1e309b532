package libvirt

import (
	"context"
	"fmt"
	"slices"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// HostInfo is what the daemon says about the host and its hypervisor.
type HostInfo struct {
	Hostname          string
	Arch              string
	HypervisorType    string // e.g. QEMU
	LibvirtVersion    string // of the daemon, e.g. 9.0.0
	HypervisorVersion string // e.g. 7.2.0
	DomainTypes       []string
	DefaultDomainType string   // kvm when offered, else qemu (what libvirt_domain uses)
	FirmwareTypes     []string // firmware auto-selection values, e.g. bios, efi
	FirmwarePaths     []string // loader images the host offers
	Machines          []string // machine types (names and aliases) for hvm guests of the host's arch, any domain type

	// What virNodeGetInfo and the capabilities say about the host's size (host_numa.go);
	// HostMemory adds what is free now.
	MemoryTotalBytes uint64
	CPUs             int // active CPUs
	CPUMHz           int
	CPU              HostCPU
	Cells            []NUMACell // without free memory
	HugepageSizesKiB []uint64
}

// HostInfo reads the host's capabilities and, for its default domain type, its domain
// capabilities (firmware), at most once per capsTTL (host_caps.go).
func (c *Client) HostInfo(ctx context.Context) (*HostInfo, error) {
	return hostCache.get(c, capsTTL, func() (*HostInfo, error) { return c.hostInfo(ctx) })
}

func (c *Client) hostInfo(ctx context.Context) (*HostInfo, error) {
	info := &HostInfo{}
	err := c.Read(ctx, "read host capabilities", func(l *golibvirt.Libvirt) error {
		var err error
		if info.Hostname, err = l.ConnectGetHostname(); err != nil {
			return err
		}
		if info.HypervisorType, err = l.ConnectGetType(); err != nil {
			return err
		}
		lib, err := l.ConnectGetLibVersion()
		if err != nil {
			return err
		}
		info.LibvirtVersion = formatVersion(lib)
		hv, err := l.ConnectGetVersion()
		if err != nil {
			return err
		}
		info.HypervisorVersion = formatVersion(hv)
		return info.readNodeInfo(l)
	})
	if err != nil {
		return nil, err
	}
	caps, err := c.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	info.Arch = caps.HostArch
	info.Cells, info.HugepageSizesKiB = caps.Cells, caps.HugepageSizesKiB
	if caps.CPU.Sockets > 0 {
		info.CPU = caps.CPU
	} else {
		info.CPU.Model, info.CPU.Vendor = caps.CPU.Model, caps.CPU.Vendor
	}
	if g, ok := caps.Guest(info.Arch); ok {
		info.DomainTypes, info.Machines = g.DomainTypes, g.Machines
	}
	info.DefaultDomainType = DefaultDomainType(info.DomainTypes)
	if info.DefaultDomainType == "" || info.DefaultDomainType == "test" {
		return info, nil // the test driver has no firmware to report
	}
	dc, err := c.DomainCapabilities(ctx, "", info.Arch, "", info.DefaultDomainType)
	if err != nil {
		return nil, err
	}
	info.FirmwareTypes, info.FirmwarePaths = dc.FirmwareTypes, dc.FirmwarePaths
	return info, nil
}

// readNodeInfo reads virNodeGetInfo: memory, CPUs, and the topology for a host whose
// capabilities tell none (hostInfo prefers theirs: it counts sockets across NUMA nodes).
func (info *HostInfo) readNodeInfo(l *golibvirt.Libvirt) error {
	_, memKiB, cpus, mhz, nodes, sockets, cores, threads, err := l.NodeGetInfo()
	if refused(err) {
		return nil // a driver without it: the sizes stay unknown, the rest of HostInfo stands
	}
	if err != nil {
		return err
	}
	info.MemoryTotalBytes, info.CPUs, info.CPUMHz = memKiB*1024, int(cpus), int(mhz)
	// virNodeInfo's sockets are per NUMA node.
	info.CPU = HostCPU{Sockets: int(max(nodes, 1) * sockets), Dies: 1, Cores: int(cores), Threads: int(threads)}
	return nil
}

// machines lists the machine types (names and canonical names) offered for hvm guests of arch.
func machines(caps *libvirtxml.Caps, arch string) []string {
	var out []string
	add := func(ms []libvirtxml.CapsGuestMachine) {
		for _, m := range ms {
			for _, n := range []string{m.Name, m.Canonical} {
				if n != "" && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	for _, g := range caps.Guests {
		if g.OSType != "hvm" || (arch != "" && g.Arch.Name != arch) {
			continue
		}
		add(g.Arch.Machines)
		for _, d := range g.Arch.Domains {
			add(d.Machines)
		}
	}
	slices.Sort(out)
	return out
}

// DefaultDomainType is kvm when the host offers it, else qemu (TCG), else test (libvirt's
// test driver, test:///default: no guest runs, for trying configurations and for fleet
// benchmarks), else "".
func DefaultDomainType(offered []string) string {
	for _, t := range []string{"kvm", "qemu", "test"} {
		if slices.Contains(offered, t) {
			return t
		}
	}
	return ""
}

func firmware(dc *libvirtxml.DomainCaps) (types, paths []string) {
	if dc.OS == nil {
		return nil, nil
	}
	for _, e := range dc.OS.Enums {
		if e.Name == "firmware" {
			types = append(types, e.Values...)
		}
	}
	if dc.OS.Loader != nil {
		paths = append(paths, dc.OS.Loader.Values...)
	}
	slices.Sort(types)
	return types, paths
}

// formatVersion turns libvirt's major*1e6+minor*1e3+micro into "major.minor.micro".
func formatVersion(v uint64) string {
	return fmt.Sprintf("%d.%d.%d", v/1000000, (v/1000)%1000, v%1000)
}
