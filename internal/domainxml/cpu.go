package domainxml

import "libvirt.org/go/libvirtxml"

// CPU: cpu_mode (host-passthrough, host-model, custom) and, for custom, cpu_model, and
// the rest of <cpu> (cpu_topology.go: topology, features, NUMA cells). This family is the
// one writer of <cpu>. No change of it reaches a running domain live.

var cpuFamily = family{
	name:     "cpu",
	validate: validateCPUParts,
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		switch s.CPUMode {
		case "":
			// Keep what is there: libvirt writes its own default (custom qemu64 under TCG).
		case "custom":
			d.CPU = &libvirtxml.DomainCPU{Mode: "custom", Match: "exact"}
			if s.CPUModel != "" {
				d.CPU.Model = &libvirtxml.DomainCPUModel{Value: s.CPUModel, Fallback: "allow"}
			}
		default:
			if d.CPU == nil || d.CPU.Mode != s.CPUMode {
				d.CPU = &libvirtxml.DomainCPU{Mode: s.CPUMode}
			}
		}
		buildCPUParts(d, s)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.CPU == nil {
			return
		}
		s := &p.Spec
		s.CPUMode = d.CPU.Mode
		if s.CPUMode == "" {
			s.CPUMode = "custom"
		}
		if s.CPUMode == "custom" && d.CPU.Model != nil {
			s.CPUModel = d.CPU.Model.Value
		}
		parseCPUParts(d.CPU, s, d.ID != nil)
	},
	same: func(a, b Spec) bool {
		return a.CPUMode == b.CPUMode && a.CPUModel == b.CPUModel && sameCPUParts(a, b)
	},
}
