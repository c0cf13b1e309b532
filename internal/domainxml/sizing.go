package domainxml

import (
	"fmt"
	"math/big"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Sizing: vcpu, the memory and their hot-add ceilings max_vcpu / max_memory (Spec.VCPU,
// MaxVCPU, MemoryKiB, MaxMemoryKiB). Memory is in KiB, libvirt's own unit, from the XML
// to the provider's attributes: nothing is rounded (memory_mib / memory_kib are two forms
// of one value; the provider converts).

// KiBPerMiB converts the MiB forms (memory_mib, libvirt_clone's and the cluster
// machine's memory) to the KiB the Spec holds.
const KiBPerMiB = 1024

// MiBOf is kib in whole MiB, rounded down: for the resources whose memory is only in MiB
// (libvirt_clone, the cluster machine). libvirt_domain never rounds.
func MiBOf(kib uint64) uint64 { return kib / KiBPerMiB }

var sizingFamily = family{
	name: "sizing",
	validate: func(s *Spec) error {
		switch {
		case s.VCPU == 0:
			return fmt.Errorf("vcpu must be at least 1")
		case s.MaxVCPU != 0 && s.MaxVCPU < s.VCPU:
			return fmt.Errorf("vcpu (%d) is more than max_vcpu (%d)", s.VCPU, s.MaxVCPU)
		case s.MemoryKiB == 0:
			return fmt.Errorf("memory must be set (memory_mib or memory_kib)")
		case s.MaxMemoryKiB != 0 && s.MaxMemoryKiB < s.MemoryKiB:
			f := FormatMemory(s.MemoryKiB, s.MaxMemoryKiB)
			return fmt.Errorf("memory (%s) is more than the maximum memory (%s): raise max_memory_mib / max_memory_kib or lower memory_mib / memory_kib", f[0], f[1])
		case s.VCPUPlacement != "" && s.VCPUPlacement != "static" && s.VCPUPlacement != "auto":
			return fmt.Errorf("cpu.vcpu_placement %q: use static or auto", s.VCPUPlacement)
		}
		if s.VCPUCPUSet != "" {
			if _, err := ParseCPUSet(s.VCPUCPUSet); err != nil {
				return fmt.Errorf("cpu.vcpu_cpuset: %w", err)
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		SetSizing(d, *s)
		if s.VCPUPlacement != "" {
			d.VCPU.Placement = s.VCPUPlacement
		}
		if s.VCPUCPUSet != "" {
			d.VCPU.CPUSet = s.VCPUCPUSet
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		parseSizing(d, &p.Spec)
		if d.VCPU != nil {
			p.Spec.VCPUCPUSet = d.VCPU.CPUSet
			if d.VCPU.Placement != "static" { // libvirt's default: what a spec without it gets
				p.Spec.VCPUPlacement = d.VCPU.Placement
			}
		}
	},
	// The current values change live within the ceilings (Classify decides); the
	// ceilings themselves are structure, and so are placement and cpuset (empty in b keeps a's).
	same: func(a, b Spec) bool {
		return a.EffectiveMaxVCPU() == b.EffectiveMaxVCPU() && a.EffectiveMaxMemoryKiB() == b.EffectiveMaxMemoryKiB() &&
			(b.VCPUPlacement == "" || maxOrString(a.VCPUPlacement, "static") == b.VCPUPlacement) &&
			(b.VCPUCPUSet == "" || SameCPUSet(a.VCPUCPUSet, b.VCPUCPUSet))
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
		if s.MemoryMiB*KiBPerMiB > maxM {
			return fmt.Errorf("clone %s: memory_mib %d is above the source's maximum of %s (its max_memory_mib ceiling, which a clone keeps)",
				s.Name, s.MemoryMiB, FormatMemory(maxM)[0])
		}
		mem = s.MemoryMiB * KiBPerMiB
	}
	if cur != srcVCPU {
		d.VCPUs = nil // per-vCPU states describe the old count; libvirt writes them anew
	}
	SetSizing(d, Spec{VCPU: cur, MaxVCPU: maxV, MemoryKiB: mem, MaxMemoryKiB: maxM})
	return nil
}

// SetSizing writes the vCPUs and memory of s into d: <vcpu> holds the ceiling (max_vcpu)
// with the active count as its current attribute when below it, <memory> the memory
// ceiling and <currentMemory> the memory the guest has, both in exact KiB. It is the one
// place that writes sizes: Build, clones and cluster machines all go through it. Other attributes of
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
	dumpCore := ""
	if d.Memory != nil {
		dumpCore = d.Memory.DumpCore // <memory dumpCore>: no attribute says it; kept
	}
	d.Memory = &libvirtxml.DomainMemory{Value: uint(s.EffectiveMaxMemoryKiB()), Unit: "KiB", DumpCore: dumpCore}
	d.CurrentMemory = &libvirtxml.DomainCurrentMemory{Value: uint(s.MemoryKiB), Unit: "KiB"}
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
		s.MaxMemoryKiB = toKiB(d.Memory.Value, d.Memory.Unit)
	}
	s.MemoryKiB = s.MaxMemoryKiB
	if d.CurrentMemory != nil {
		s.MemoryKiB = toKiB(d.CurrentMemory.Value, d.CurrentMemory.Unit)
	}
	if s.MaxMemoryKiB <= s.MemoryKiB {
		s.MaxMemoryKiB = 0
	}
}

// Sizing reads the vCPUs and memory of a definition as a Spec holding only those.
func Sizing(d *libvirtxml.Domain) Spec {
	var s Spec
	parseSizing(d, &s)
	return s
}

// EffectiveMaxVCPU and EffectiveMaxMemoryKiB are the ceilings written to the XML.
func (s Spec) EffectiveMaxVCPU() uint { return max(maxOr(s.MaxVCPU, s.VCPU), s.VCPU) }
func (s Spec) EffectiveMaxMemoryKiB() uint64 {
	return max(maxOr(s.MaxMemoryKiB, s.MemoryKiB), s.MemoryKiB)
}

// maxOr is v, or def when v is 0 (no ceiling of its own).
func maxOr[T uint | uint64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// FormatMemory writes memory sizes given in KiB for a message, all in one unit: MiB when
// each is a whole number of MiB, else KiB.
func FormatMemory(kib ...uint64) []string {
	unit, div := "MiB", uint64(KiBPerMiB)
	for _, k := range kib {
		if k%KiBPerMiB != 0 {
			unit, div = "KiB", 1
		}
	}
	out := make([]string, len(kib))
	for i, k := range kib {
		out[i] = fmt.Sprintf("%d %s", k/div, unit)
	}
	return out
}

// toKiB converts a libvirt memory value with its unit (default KiB) to KiB exactly, as
// libvirt does: units are case-insensitive, k / KiB and the like count 1024, KB and the
// like 1000, b / bytes one byte; a part of a KiB rounds up.
func toKiB(v uint, unit string) uint64 {
	u := strings.ToLower(unit)
	if u == "" || u == "k" || u == "kib" {
		return uint64(v)
	}
	base, exp := int64(1024), strings.Index("bkmgtpe", u[:1])
	switch {
	case u == "b" || u == "bytes":
		exp = 0
	case exp < 0:
		return uint64(v) // not a unit libvirt takes: it refuses the domain before we see it
	case len(u) == 2 && u[1] == 'b':
		base = 1000
	}
	bytes := new(big.Int).Mul(new(big.Int).SetUint64(uint64(v)), new(big.Int).Exp(big.NewInt(base), big.NewInt(int64(exp)), nil))
	kib := new(big.Int).Div(new(big.Int).Add(bytes, big.NewInt(1023)), big.NewInt(1024))
	if !kib.IsUint64() {
		return ^uint64(0)
	}
	return kib.Uint64()
}
