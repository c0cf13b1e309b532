package domainxml

import "libvirt.org/go/libvirtxml"

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

// Sizing reads the vCPUs and memory of a definition as a Spec holding only those.
func Sizing(d *libvirtxml.Domain) Spec {
	p, err := FromDomain(&libvirtxml.Domain{VCPU: d.VCPU, Memory: d.Memory, CurrentMemory: d.CurrentMemory})
	if err != nil {
		return Spec{}
	}
	s := p.Spec
	return Spec{VCPU: s.VCPU, MaxVCPU: s.MaxVCPU, MemoryMiB: s.MemoryMiB, MaxMemoryMiB: s.MaxMemoryMiB}
}
