package domainxml

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// The parts of <cpu> beside its mode and model: the topology the guest sees
// (cpu.topology), CPU feature policies (cpu.feature) and the guest's NUMA cells
// (cpu.numa_cell). cpu.go's family is the one writer of <cpu>; these are its helpers. Unset,
// each is absent from the definition (libvirt adds none of them on its own).

// CPUTopology is <topology>: sockets × dies × cores × threads vCPUs (Dies 0 reads as 1).
type CPUTopology struct {
	Sockets, Dies, Cores, Threads uint
}

// NUMACell is one guest NUMA node (<numa><cell>).
type NUMACell struct {
	ID        uint
	CPUs      string // vCPU numbers, libvirt cpuset syntax
	MemoryKiB uint64 // exact, as libvirt counts it
	// MemAccess is shared or private; empty: the memory backing's.
	MemAccess string
}

// CPU feature policies, as libvirt names them.
var CPUFeaturePolicies = []string{"require", "disable", "optional", "force", "forbid"}

// cpuFeatureName is how libvirt's CPU map names features (sse4.2, avx512f, vmx-ept...).
var cpuFeatureName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

func (t CPUTopology) dies() uint { return maxOr(t.Dies, 1) }

// vcpus is the number of vCPUs the topology holds.
func (t CPUTopology) vcpus() uint { return t.Sockets * t.dies() * t.Cores * t.Threads }

// validateCPUParts checks the topology, features and NUMA cells of s against its sizing.
func validateCPUParts(s *Spec) error {
	return errors.Join(validateTopology(s), validateFeatures(s), validateNUMA(s, s.EffectiveMaxVCPU()))
}

// validateTopology: the topology holds exactly the domain's vCPUs (max_vcpu).
func validateTopology(s *Spec) error {
	t, maxV := s.CPUTopology, s.EffectiveMaxVCPU()
	switch {
	case t == nil:
	case t.Sockets == 0 || t.Cores == 0 || t.Threads == 0:
		return fmt.Errorf("cpu.topology: sockets, cores and threads must each be at least 1")
	case t.vcpus() != maxV:
		return fmt.Errorf("cpu.topology: sockets × dies × cores × threads = %d × %d × %d × %d = %d, but the domain has %d vCPUs "+
			"(max_vcpu, or vcpu when max_vcpu is unset): make the product %d", t.Sockets, t.dies(), t.Cores, t.Threads, t.vcpus(), maxV, maxV)
	}
	return nil
}

// validateFeatures: feature names as libvirt's CPU map spells them, policies libvirt's.
func validateFeatures(s *Spec) error {
	var errs []error
	if len(s.CPUFeatures) > 0 && (s.CPUMode == "" || (s.CPUMode == "custom" && s.CPUModel == "")) {
		errs = append(errs, fmt.Errorf("cpu.feature changes a CPU model, and the domain names none: set cpu.mode = \"host-model\" "+
			"or \"host-passthrough\", or cpu.mode = \"custom\" with cpu.model"))
	}
	for _, name := range slices.Sorted(maps.Keys(s.CPUFeatures)) {
		policy := s.CPUFeatures[name]
		if !cpuFeatureName.MatchString(name) {
			errs = append(errs, fmt.Errorf("cpu.feature: %q is not a CPU feature name (lower case, as libvirt's CPU map spells them, e.g. vmx or sse4.2)", name))
		}
		if !slices.Contains(CPUFeaturePolicies, policy) {
			errs = append(errs, fmt.Errorf("cpu.feature: feature %q has policy %q; use one of require, disable, optional, force, forbid", name, policy))
		}
	}
	return errors.Join(errs...)
}

// PlatformError is a plan-time error of one platform attribute.
type PlatformError struct {
	Attribute string
	Err       error
}

// ValidatePlatform checks cpu.topology, cpu.feature, cpu.numa_cell, cpu.pinning,
// cpu.emulator_pinning and memory_backing of s, naming the attribute of each error (a
// path, names joined by "."): what the provider reports at plan time (Build checks the
// same).
func ValidatePlatform(s Spec) []PlatformError {
	var out []PlatformError
	for _, v := range []struct {
		attr string
		err  error
	}{
		{"cpu.topology", validateTopology(&s)}, {"cpu.feature", validateFeatures(&s)},
		{"cpu.numa_cell", validateNUMA(&s, s.EffectiveMaxVCPU())}, {"cpu.pinning", pinningFamily.validate(&s)},
		{"memory_backing", validateMemoryBacking(&s)},
	} {
		if v.err != nil {
			out = append(out, PlatformError{v.attr, v.err})
		}
	}
	return out
}

// validateNUMA: cell ids unique, every vCPU 0..max_vcpu-1 in exactly one cell, and the
// cells' memory adds up to the domain's (max memory, or memory), to the KiB.
func validateNUMA(s *Spec, maxV uint) error {
	if len(s.NUMACells) == 0 {
		return nil
	}
	ids, owner := map[uint]bool{}, map[uint]uint{}
	var sum uint64
	for _, c := range s.NUMACells {
		if ids[c.ID] {
			return fmt.Errorf("cpu.numa_cell: id %d is used twice; give each cell its own id", c.ID)
		}
		ids[c.ID] = true
		if c.MemAccess != "" && c.MemAccess != "shared" && c.MemAccess != "private" {
			return fmt.Errorf("cpu.numa_cell %d: memory_access %q is neither shared nor private", c.ID, c.MemAccess)
		}
		cpus, err := ParseCPUSet(c.CPUs)
		if err != nil {
			return fmt.Errorf("cpu.numa_cell %d: cpus: %w", c.ID, err)
		}
		for _, n := range cpus {
			if n >= maxV {
				return fmt.Errorf("cpu.numa_cell %d: cpus names vCPU %d, but the domain's vCPUs are 0 to %d (max_vcpu, or vcpu)", c.ID, n, maxV-1)
			}
			if o, ok := owner[n]; ok {
				return fmt.Errorf("cpu.numa_cell %d: vCPU %d is already in cpu.numa_cell %d; each vCPU belongs to one cell", c.ID, n, o)
			}
			owner[n] = c.ID
		}
		sum += c.MemoryKiB
	}
	for n := range maxV {
		if _, ok := owner[n]; !ok {
			return fmt.Errorf("cpu.numa_cell: vCPU %d is in no cell; the cells' cpus must cover vCPUs 0 to %d", n, maxV-1)
		}
	}
	// libvirt sets <memory> to the cells' memory and the hot-plugged memory devices' (in
	// device_xml) together: the cells hold the rest.
	mem, plugged := s.EffectiveMaxMemoryKiB(), memoryDevicesKiB(s.DeviceXML)
	if plugged < mem && sum == mem-plugged {
		return nil
	}
	if sum != mem {
		f := FormatMemory(sum, mem)
		if plugged > 0 {
			f = FormatMemory(sum, mem, plugged, mem-min(plugged, mem))
			return fmt.Errorf("cpu.numa_cell: the cells' memory (memory_mib / memory_kib) adds up to %s, but the domain has %s "+
				"(max_memory_mib / max_memory_kib, or memory_mib / memory_kib) of which its memory devices in device_xml hold %s: "+
				"make the cells add up to %s", f[0], f[1], f[2], f[3])
		}
		return fmt.Errorf("cpu.numa_cell: the cells' memory (memory_mib / memory_kib) adds up to %s, but the domain has %s "+
			"(max_memory_mib / max_memory_kib, or memory_mib / memory_kib): make the cells add up to %s", f[0], f[1], f[1])
	}
	return nil
}

// memoryDevicesKiB is the size of the memory devices (<memory model='dimm'> and the
// like: hot-plugged memory) among device_xml's fragments; a fragment that does not parse
// counts nothing (device_xml's own check reports it).
func memoryDevicesKiB(fragments []string) uint64 {
	var sum uint64
	for _, f := range fragments {
		n, err := parseNode(f)
		if err != nil || n.XMLName.Local != "memory" {
			continue
		}
		var m libvirtxml.DomainMemorydev
		if err := m.Unmarshal(f); err != nil || m.Target == nil || m.Target.Size == nil {
			continue
		}
		sum += toKiB(m.Target.Size.Value, m.Target.Size.Unit)
	}
	return sum
}

// buildCPUParts writes topology, features and cells into d's <cpu> (made when needed;
// a <cpu> with none of them and no mode is left as it was).
func buildCPUParts(d *libvirtxml.Domain, s *Spec) {
	if d.CPU == nil {
		if s.CPUTopology == nil && len(s.CPUFeatures) == 0 && len(s.NUMACells) == 0 {
			return
		}
		d.CPU = &libvirtxml.DomainCPU{}
	}
	d.CPU.Topology = nil
	if t := s.CPUTopology; t != nil {
		d.CPU.Topology = &libvirtxml.DomainCPUTopology{Sockets: int(t.Sockets), Dies: int(t.dies()), Cores: int(t.Cores), Threads: int(t.Threads)}
	}
	d.CPU.Features = nil
	for _, name := range slices.Sorted(maps.Keys(s.CPUFeatures)) {
		d.CPU.Features = append(d.CPU.Features, libvirtxml.DomainCPUFeature{Name: name, Policy: s.CPUFeatures[name]})
	}
	d.CPU.Numa = buildNUMA(d.CPU.Numa, s.NUMACells)
}

// buildNUMA is the cells of cs; a cell whose id was there keeps what libvirt or the
// user added beside what is managed here (distances, caches, discard).
func buildNUMA(old *libvirtxml.DomainNuma, cs []NUMACell) *libvirtxml.DomainNuma {
	if len(cs) == 0 {
		return nil
	}
	byID := map[uint]libvirtxml.DomainCell{}
	if old != nil {
		for _, c := range old.Cell {
			if c.ID != nil {
				byID[*c.ID] = c
			}
		}
	}
	n := &libvirtxml.DomainNuma{}
	if old != nil {
		n.Interconnects = old.Interconnects
	}
	for _, c := range cs {
		x := byID[c.ID]
		id := c.ID
		x.ID, x.CPUs, x.Memory, x.Unit, x.MemAccess = &id, c.CPUs, uint(c.MemoryKiB), "KiB", c.MemAccess
		n.Cell = append(n.Cell, x)
	}
	return n
}

// parseCPUParts reads topology, features and cells of a <cpu>. A running domain's live
// <cpu> lists every feature libvirt resolved for the model (check='full'), so features
// are read from inactive definitions only (live has an id).
func parseCPUParts(c *libvirtxml.DomainCPU, s *Spec, live bool) {
	if t := c.Topology; t != nil {
		s.CPUTopology = &CPUTopology{Sockets: uint(t.Sockets), Dies: uint(max(t.Dies, 1)), Cores: uint(t.Cores), Threads: uint(t.Threads)}
	}
	for _, f := range c.Features {
		if live {
			break
		}
		if s.CPUFeatures == nil {
			s.CPUFeatures = map[string]string{}
		}
		s.CPUFeatures[f.Name] = maxOrString(f.Policy, "require") // libvirt's default policy
	}
	if c.Numa != nil {
		for _, x := range c.Numa.Cell {
			cell := NUMACell{CPUs: x.CPUs, MemoryKiB: toKiB(x.Memory, x.Unit), MemAccess: x.MemAccess}
			if x.ID != nil {
				cell.ID = *x.ID
			}
			s.NUMACells = append(s.NUMACells, cell)
		}
	}
}

func maxOrString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// sameCPUParts compares topology, features and cells by what the guest gets (cell cpus
// as sets, a missing dies as 1).
func sameCPUParts(a, b Spec) bool {
	return SameTopology(a.CPUTopology, b.CPUTopology) && SameFeatures(a.CPUFeatures, b.CPUFeatures) &&
		slices.EqualFunc(a.NUMACells, b.NUMACells, SameNUMACell)
}

// SameTopology, SameFeatures and SameNUMACell say whether a and b give the guest the
// same topology (a missing dies as 1), feature policies (none as none), cell (cpus as
// sets); SamePinning and SameMemoryBacking whether a and b want the same pins and memory
// backing. The provider keeps what the user wrote while it reads back the same ("0,1" as
// "0-1", dies = 1, virtiofs' memfd).
func SameTopology(a, b *CPUTopology) bool {
	return (a == nil) == (b == nil) && (a == nil || (a.Sockets == b.Sockets && a.dies() == b.dies() && a.Cores == b.Cores && a.Threads == b.Threads))
}

func SameFeatures(a, b map[string]string) bool { return maps.Equal(a, b) }

func SameNUMACell(x, y NUMACell) bool {
	return x.ID == y.ID && SameCPUSet(x.CPUs, y.CPUs) && x.MemoryKiB == y.MemoryKiB && x.MemAccess == y.MemAccess
}

func SamePinning(a, b Spec) bool       { return pinningFamily.same(a, b) }
func SameMemoryBacking(a, b Spec) bool { return memoryBackingFamily.same(a, b) }
