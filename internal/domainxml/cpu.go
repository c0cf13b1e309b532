package domainxml

import "libvirt.org/go/libvirtxml"

// CPU: cpu_mode (host-passthrough, host-model, custom) and, for custom, cpu_model.

var cpuFamily = family{
	name:     "cpu",
	validate: func(*Spec) error { return nil },
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
	},
	same: func(a, b Spec) bool { return a.CPUMode == b.CPUMode && a.CPUModel == b.CPUModel },
}
