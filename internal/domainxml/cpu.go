package domainxml

import (
	"errors"
	"fmt"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// CPU: cpu.mode (host-passthrough, host-model, custom, maximum) and, for custom,
// cpu.model with its fallback, cpu.check, and the rest of <cpu> (cpu_topology.go:
// topology, features, NUMA cells). This family is the one writer of <cpu>. No change of
// it reaches a running domain live.
//
// An empty mode keeps the <cpu> the domain has (libvirt writes its own default: custom
// qemu64, fallback forbid, check none under TCG). An empty check keeps the domain's while
// the mode stays (a new mode gets libvirt's default for it); an empty fallback keeps the
// domain's while mode and model stay (a new model gets allow, libvirt's default).

// The values of cpu.check and cpu.fallback, as libvirt names them.
var (
	CPUChecks    = []string{"none", "partial", "full"}
	CPUFallbacks = []string{"allow", "forbid"}
)

const cpuModeCustom = "custom"

var cpuFamily = family{
	name: "cpu",
	validate: func(s *Spec) error {
		return errors.Join(validateCPUMode(s), validateCPUParts(s))
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		old := d.CPU
		sameMode := old != nil && cpuModeOf(old) == s.CPUMode
		switch s.CPUMode {
		case "":
			// Keep what is there: libvirt writes its own default (custom qemu64 under TCG).
		case cpuModeCustom:
			d.CPU = &libvirtxml.DomainCPU{Mode: cpuModeCustom, Match: "exact"}
			if s.CPUModel != "" {
				fallback := "allow"
				if sameMode && old.Model != nil && old.Model.Value == s.CPUModel && old.Model.Fallback != "" {
					fallback = old.Model.Fallback
				}
				d.CPU.Model = &libvirtxml.DomainCPUModel{Value: s.CPUModel, Fallback: maxOrString(s.CPUFallback, fallback)}
			}
		default:
			if !sameMode {
				d.CPU = &libvirtxml.DomainCPU{Mode: s.CPUMode}
			}
		}
		if s.CPUMode != "" {
			check := ""
			if sameMode {
				check = old.Check
			}
			d.CPU.Check = maxOrString(s.CPUCheck, check)
		}
		buildCPUParts(d, s)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.CPU == nil || untypedElement(d, "cpu") { // extra_xml holds it whole
			return
		}
		s := &p.Spec
		s.CPUMode, s.CPUCheck = cpuModeOf(d.CPU), d.CPU.Check
		if s.CPUMode == cpuModeCustom && d.CPU.Model != nil {
			s.CPUModel, s.CPUFallback = d.CPU.Model.Value, d.CPU.Model.Fallback
		}
		parseCPUParts(d.CPU, s, d.ID != nil)
	},
	same: func(a, b Spec) bool { return sameCPUMode(a, b) && sameCPUParts(a, b) },
}

// cpuModeOf is c's mode (libvirt's default, custom, when it names none).
func cpuModeOf(c *libvirtxml.DomainCPU) string { return maxOrString(c.Mode, cpuModeCustom) }

// sameCPUMode: b (what is wanted) asks for the mode, model, fallback and check a has; an
// empty value in b keeps a's.
func sameCPUMode(a, b Spec) bool {
	if b.CPUMode == "" {
		return true
	}
	keeps := func(x, y string) bool { return y == "" || x == y }
	return a.CPUMode == b.CPUMode && a.CPUModel == b.CPUModel && keeps(a.CPUCheck, b.CPUCheck) && keeps(a.CPUFallback, b.CPUFallback)
}

// validateCPUMode: a model goes with the custom mode, a fallback with a model, a check
// with a mode (without one libvirt replaces the <cpu> by its default and drops it).
func validateCPUMode(s *Spec) error {
	var errs []error
	if s.CPUCheck != "" && !slices.Contains(CPUChecks, s.CPUCheck) {
		errs = append(errs, fmt.Errorf("cpu.check %q: use none, partial or full", s.CPUCheck))
	}
	if s.CPUFallback != "" && !slices.Contains(CPUFallbacks, s.CPUFallback) {
		errs = append(errs, fmt.Errorf("cpu.fallback %q: use allow or forbid", s.CPUFallback))
	}
	if s.CPUModel != "" && s.CPUMode != cpuModeCustom {
		errs = append(errs, fmt.Errorf("cpu.model %q needs cpu.mode = \"custom\"", s.CPUModel))
	}
	if s.CPUFallback != "" && (s.CPUMode != cpuModeCustom || s.CPUModel == "") {
		errs = append(errs, fmt.Errorf("cpu.fallback is the fallback of a CPU model: it needs cpu.mode = \"custom\" with cpu.model"))
	}
	if s.CPUCheck != "" && s.CPUMode == "" {
		errs = append(errs, fmt.Errorf("cpu.check needs cpu.mode (without one the domain keeps libvirt's CPU and its check)"))
	}
	return errors.Join(errs...)
}

// DefaultCPUCheck is the check libvirt gives a CPU of mode in a domain of domainType when
// none is asked: none for host-passthrough and maximum, partial for host-model, and for a
// custom model none under TCG (qemu), partial under kvm.
func DefaultCPUCheck(mode, domainType string) string {
	switch mode {
	case "":
		return ""
	case "host-model":
		return "partial"
	case cpuModeCustom:
		if domainType == "kvm" {
			return "partial"
		}
	}
	return "none"
}

// IsDefaultCPU reports whether the mode, model, fallback and check of s are what a
// definition made without cpu.mode gets: the arch's DefaultCPU (arch.go), or on x86
// libvirt's own (custom qemu64, fallback forbid), with libvirt's check for it. What
// import leaves out of cpu.mode / cpu.model / cpu.fallback / cpu.check.
func IsDefaultCPU(s Spec) bool {
	if s.CPUMode == "" {
		return true
	}
	want := DefaultCPU(s.Arch, s.Type)
	if want == nil {
		if !IsX86(s.Arch) {
			return false // another arch's libvirt default: written, to be kept
		}
		want = &libvirtxml.DomainCPU{Mode: cpuModeCustom, Model: &libvirtxml.DomainCPUModel{Value: "qemu64", Fallback: "forbid"}}
	}
	model, fallback := "", ""
	if want.Model != nil {
		model, fallback = want.Model.Value, want.Model.Fallback
	}
	return s.CPUMode == cpuModeOf(want) && s.CPUModel == model && s.CPUFallback == fallback &&
		(s.CPUCheck == "" || s.CPUCheck == DefaultCPUCheck(s.CPUMode, s.Type))
}
