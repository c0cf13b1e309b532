package domainxml

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Sizing: vcpu, memory_mib and their hot-add ceilings max_vcpu / max_memory_mib
// (Spec.VCPU, MaxVCPU, MemoryMiB, MaxMemoryMiB).

var sizingFamily = family{
	name: "sizing",
	validate: func(s *Spec) error {
		switch {
		case s.VCPU == 0:
			return fmt.Errorf("vcpu must be at least 1")
		case s.MaxVCPU != 0 && s.MaxVCPU < s.VCPU:
			return fmt.Errorf("vcpu (%d) is more than max_vcpu (%d)", s.VCPU, s.MaxVCPU)
		case s.MaxMemoryMiB != 0 && s.MaxMemoryMiB < s.MemoryMiB:
			return fmt.Errorf("memory_mib (%d) is more than max_memory_mib (%d)", s.MemoryMiB, s.MaxMemoryMiB)
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		SetSizing(d, *s)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) { parseSizing(d, &p.Spec) },
	// The current values change live within the ceilings (Classify decides); the
	// ceilings themselves are structure.
	same: func(a, b Spec) bool {
		return a.EffectiveMaxVCPU() == b.EffectiveMaxVCPU() && a.EffectiveMaxMemoryMiB() == b.EffectiveMaxMemoryMiB()
	},
	derive: deriveSizing,
}

// deriveSizing gives a clone the source's ceilings (and so its hot-add headroom) with
// the current vCPUs and memory the clone asks for, within them.
func deriveSizing(d *libvirtxml.Domain, s *CloneSpec) error {
	cur, maxV, mem, maxM := Ceilings(d)
	srcVCPU := cur
	if s.VCPU != 0 {
		if s.VCPU > maxV {
			return fmt.Errorf("clone %s: vcpu %d is above the source's maximum of %d vCPUs (its max_vcpu hot-add ceiling, which a clone keeps)", s.Name, s.VCPU, maxV)
		}
		cur = s.VCPU
	}
	if s.MemoryMiB != 0 {
		if s.MemoryMiB > maxM {
			return fmt.Errorf("clone %s: memory_mib %d is above the source's maximum of %d MiB (its max_memory_mib ceiling, which a clone keeps)", s.Name, s.MemoryMiB, maxM)
		}
		mem = s.MemoryMiB
	}
	if cur != srcVCPU {
		d.VCPUs = nil // per-vCPU states describe the old count; libvirt writes them anew
	}
	SetSizing(d, Spec{VCPU: cur, MaxVCPU: maxV, MemoryMiB: mem, MaxMemoryMiB: maxM})
	return nil
}

// SetSizing writes the vCPUs and memory of s into d: <vcpu> holds the ceiling (max_vcpu)
// with the active count as its current attribute when below it, <memory> the memory
// ceiling and <currentMemory> the memory the guest has. It is the one place that writes
// sizes: Build, clones and cluster machines all go through it. Other attributes of
// <vcpu> (placement, cpuset) are kept; per-vCPU states (<vcpus>) are dropped when the
// ceiling changes, since they describe the old count.
func SetSizing(d *libvirtxml.Domain, s Spec) {
	maxV := s.EffectiveMaxVCPU()
	if d.VCPU == nil {
		d.VCPU = &libvirtxml.DomainVCPU{Placement: "static"}
	}
	if d.VCPU.Value != maxV {
		d.VCPUs = nil
	}
	d.VCPU.Value = maxV
	d.VCPU.Current = 0
	if s.VCPU < maxV {
		d.VCPU.Current = s.VCPU
	}
	d.Memory = &libvirtxml.DomainMemory{Value: uint(s.EffectiveMaxMemoryMiB() * 1024), Unit: "KiB"}
	d.CurrentMemory = &libvirtxml.DomainCurrentMemory{Value: uint(s.MemoryMiB * 1024), Unit: "KiB"}
}

func parseSizing(d *libvirtxml.Domain, s *Spec) {
	if d.VCPU != nil {
		s.VCPU = d.VCPU.Value
		if d.VCPU.Current > 0 && d.VCPU.Current < d.VCPU.Value {
			s.VCPU = d.VCPU.Current
			s.MaxVCPU = d.VCPU.Value
		}
	}
	if d.Memory != nil {
		s.MaxMemoryMiB = toMiB(d.Memory.Value, d.Memory.Unit)
	}
	s.MemoryMiB = s.MaxMemoryMiB
	if d.CurrentMemory != nil {
		s.MemoryMiB = toMiB(d.CurrentMemory.Value, d.CurrentMemory.Unit)
	}
	if s.MaxMemoryMiB <= s.MemoryMiB {
		s.MaxMemoryMiB = 0
	}
}

// Sizing reads the vCPUs and memory of a definition as a Spec holding only those.
func Sizing(d *libvirtxml.Domain) Spec {
	var s Spec
	parseSizing(d, &s)
	return s
}

// EffectiveMaxVCPU and EffectiveMaxMemoryMiB are the ceilings written to the XML.
func (s Spec) EffectiveMaxVCPU() uint { return max(maxOr(s.MaxVCPU, s.VCPU), s.VCPU) }
func (s Spec) EffectiveMaxMemoryMiB() uint64 {
	return max(maxOr(s.MaxMemoryMiB, s.MemoryMiB), s.MemoryMiB)
}

// maxOr is v, or def when v is 0 (no ceiling of its own).
func maxOr[T uint | uint64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// toMiB converts a libvirt memory value with its unit (default KiB) to MiB.
func toMiB(v uint, unit string) uint64 {
	n := uint64(v)
	switch strings.ToLower(unit) {
	case "b", "bytes":
		return n / (1 << 20)
	case "k", "kib", "":
		return n / 1024
	case "kb":
		return n * 1000 / (1 << 20)
	case "m", "mib":
		return n
	case "mb":
		return n * 1000 * 1000 / (1 << 20)
	case "g", "gib":
		return n * 1024
	case "gb":
		return n * 1000 * 1000 * 1000 / (1 << 20)
	case "t", "tib":
		return n * 1024 * 1024
	}
	return n / 1024
}
