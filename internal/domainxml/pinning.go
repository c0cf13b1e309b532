package domainxml

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Pinning: which host CPUs each vCPU (cpu.pinning, <cputune><vcpupin>) and the emulator
// threads (cpu.emulator_pinning, <emulatorpin>) may run on. A new or changed pin reaches a
// running domain live (virDomainPinVcpuFlags / virDomainPinEmulator, live and config);
// removing one, or pinning a vCPU that is not online, restarts it. The rest of <cputune>
// (shares, quotas, I/O thread pins) is kept as it is.

const (
	// LivePinVCPU pins vCPU VCPU to the host CPUs CPUSet, live and in the definition.
	LivePinVCPU LiveOpKind = "pin-vcpu"
	// LivePinEmulator pins the emulator threads to CPUSet, live and in the definition.
	LivePinEmulator LiveOpKind = "pin-emulator"
)

var pinningFamily = family{
	name: "cpu pinning",
	validate: func(s *Spec) error {
		maxV := s.EffectiveMaxVCPU()
		for _, v := range slices.Sorted(maps.Keys(s.CPUPinning)) {
			if v >= maxV {
				return fmt.Errorf("cpu.pinning: vCPU %d does not exist: the domain's vCPUs are 0 to %d (max_vcpu, or vcpu)", v, maxV-1)
			}
			if _, err := ParseCPUSet(s.CPUPinning[v]); err != nil {
				return fmt.Errorf("cpu.pinning, vCPU %d: %w", v, err)
			}
		}
		if s.EmulatorPinning != "" {
			if _, err := ParseCPUSet(s.EmulatorPinning); err != nil {
				return fmt.Errorf("cpu.emulator_pinning: %w", err)
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		if d.CPUTune == nil {
			if len(s.CPUPinning) == 0 && s.EmulatorPinning == "" {
				return nil
			}
			d.CPUTune = &libvirtxml.DomainCPUTune{}
		}
		t := d.CPUTune
		t.VCPUPin, t.EmulatorPin = nil, nil
		for _, v := range slices.Sorted(maps.Keys(s.CPUPinning)) {
			t.VCPUPin = append(t.VCPUPin, libvirtxml.DomainCPUTuneVCPUPin{VCPU: v, CPUSet: s.CPUPinning[v]})
		}
		if s.EmulatorPinning != "" {
			t.EmulatorPin = &libvirtxml.DomainCPUTuneEmulatorPin{CPUSet: s.EmulatorPinning}
		}
		if emptyCPUTune(t) {
			d.CPUTune = nil
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.CPUTune == nil {
			return
		}
		for _, pin := range d.CPUTune.VCPUPin {
			if p.Spec.CPUPinning == nil {
				p.Spec.CPUPinning = map[uint]string{}
			}
			p.Spec.CPUPinning[pin.VCPU] = pin.CPUSet
		}
		if e := d.CPUTune.EmulatorPin; e != nil {
			p.Spec.EmulatorPinning = e.CPUSet
		}
	},
	same: func(a, b Spec) bool {
		return maps.EqualFunc(a.CPUPinning, b.CPUPinning, SameCPUSet) && len(a.CPUPinning) == len(b.CPUPinning) &&
			(a.EmulatorPinning == b.EmulatorPinning || (a.EmulatorPinning != "" && b.EmulatorPinning != "" && SameCPUSet(a.EmulatorPinning, b.EmulatorPinning)))
	},
	live: pinningLive,
}

// pinningLive: a pin added or changed is one live call; a pin removed has no live form
// (libvirt would need the host's full CPU list, and keeps the pin in the definition), nor
// has a pin of a vCPU that is not online.
func pinningLive(old, next Spec, _ *libvirtxml.Domain) ([]LiveOp, string) {
	var ops []LiveOp
	for _, v := range slices.Sorted(maps.Keys(old.CPUPinning)) {
		if _, ok := next.CPUPinning[v]; !ok {
			return nil, fmt.Sprintf("cpu.pinning of vCPU %d is removed (unpinning has no live form)", v)
		}
	}
	for _, v := range slices.Sorted(maps.Keys(next.CPUPinning)) {
		set := next.CPUPinning[v]
		if was, ok := old.CPUPinning[v]; ok && SameCPUSet(was, set) {
			continue
		}
		if v >= min(old.VCPU, next.VCPU) {
			return nil, fmt.Sprintf("cpu.pinning of vCPU %d changes while that vCPU is not online", v)
		}
		ops = append(ops, LiveOp{Kind: LivePinVCPU, Noun: "vcpu", Device: fmt.Sprint(v), VCPU: v, CPUSet: set})
	}
	switch {
	case old.EmulatorPinning != "" && next.EmulatorPinning == "":
		return nil, "cpu.emulator_pinning is removed (unpinning has no live form)"
	case next.EmulatorPinning != "" && (old.EmulatorPinning == "" || !SameCPUSet(old.EmulatorPinning, next.EmulatorPinning)):
		ops = append(ops, LiveOp{Kind: LivePinEmulator, Noun: "emulator", Device: "threads", CPUSet: next.EmulatorPinning})
	}
	return ops, ""
}

// emptyCPUTune reports whether t holds nothing (then the element is left out).
func emptyCPUTune(t *libvirtxml.DomainCPUTune) bool { return reflect.ValueOf(*t).IsZero() }
