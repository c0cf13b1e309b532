package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// cpuOf is d's mode, model, fallback and check, space separated.
func cpuOf(d *libvirtxml.Domain) string {
	if d.CPU == nil {
		return "none"
	}
	model, fallback := "-", "-"
	if d.CPU.Model != nil {
		model, fallback = d.CPU.Model.Value, d.CPU.Model.Fallback
	}
	return strings.Join([]string{d.CPU.Mode, model, fallback, maxOrString(d.CPU.Check, "-")}, " ")
}

// cpu.fallback and cpu.check as written; left empty they keep the domain's while the mode
// (and for the fallback the model) stay, and a new mode or model gets libvirt's default
// (no check: libvirt's for the mode; fallback allow).
func TestCPU_fallbackAndCheck(t *testing.T) {
	libvirts := &libvirtxml.Domain{CPU: &libvirtxml.DomainCPU{Mode: "custom", Match: "exact", Check: "none",
		Model: &libvirtxml.DomainCPUModel{Value: "qemu64", Fallback: "forbid"}}}
	spec := func(mode, model, fallback, check string) Spec {
		s := fsSpec()
		s.CPUMode, s.CPUModel, s.CPUFallback, s.CPUCheck = mode, model, fallback, check
		return s
	}
	for name, c := range map[string]struct {
		base *libvirtxml.Domain
		s    Spec
		want string
	}{
		"written":                {nil, spec("custom", "qemu64", "forbid", "full"), "custom qemu64 forbid full"},
		"a new model":            {nil, spec("custom", "Haswell", "", ""), "custom Haswell allow -"},
		"kept while model stays": {libvirts, spec("custom", "qemu64", "", ""), "custom qemu64 forbid none"},
		"another model":          {libvirts, spec("custom", "Haswell", "", ""), "custom Haswell allow none"},
		"another mode":           {libvirts, spec("host-model", "", "", ""), "host-model - - -"},
		"check on host-model":    {libvirts, spec("host-model", "", "", "full"), "host-model - - full"},
		"no mode keeps the cpu":  {libvirts, spec("", "", "", ""), "custom qemu64 forbid none"},
	} {
		var base *libvirtxml.Domain
		if c.base != nil {
			b, _ := build(t, nil, fsSpec())
			b.CPU = &libvirtxml.DomainCPU{}
			*b.CPU = *c.base.CPU
			m := *c.base.CPU.Model
			b.CPU.Model = &m
			base = b
		}
		d, text := build(t, base, c.s)
		if got := cpuOf(d); got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
		p, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if !cpuFamily.same(p.Spec, c.s) {
			t.Errorf("%s: what was built reads back as a change: %+v", name, p.Spec)
		}
	}
	// What is wanted, against what the domain has: an empty value keeps it.
	has := spec("custom", "qemu64", "forbid", "none")
	for _, c := range []struct {
		next Spec
		same bool
	}{
		{spec("", "", "", ""), true},
		{spec("custom", "qemu64", "", ""), true},
		{spec("custom", "qemu64", "allow", ""), false},
		{spec("custom", "qemu64", "", "full"), false},
		{spec("custom", "Haswell", "forbid", ""), false},
		{spec("host-model", "", "", ""), false},
		{spec("custom", "qemu64", "forbid", "none"), true},
	} {
		next := c.next
		if got := cpuFamily.same(has, next); got != c.same {
			t.Errorf("same(%s %s %s %s) = %t", next.CPUMode, next.CPUModel, next.CPUFallback, next.CPUCheck, got)
		}
	}
}

func TestCPU_validateModeParts(t *testing.T) {
	for want, s := range map[string]Spec{
		`cpu.check "all"`:                 {CPUMode: "host-model", CPUCheck: "all"},
		`cpu.fallback "maybe"`:            {CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "maybe"},
		`cpu.model "qemu64" needs`:        {CPUMode: "host-model", CPUModel: "qemu64"},
		"cpu.fallback is the fallback of": {CPUMode: "host-model", CPUFallback: "forbid"},
		"cpu.check needs cpu.mode":        {CPUCheck: "full"},
	} {
		if err := validateCPUMode(&s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error with %q, got %v", want, err)
		}
	}
	if err := validateCPUMode(&Spec{CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "forbid", CPUCheck: "full"}); err != nil {
		t.Errorf("a valid cpu: %v", err)
	}
}

// What import leaves out: the CPU a definition made without cpu.mode gets, with
// libvirt's check for it.
func TestCPU_isDefault(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		want bool
	}{
		{Spec{}, true},
		{Spec{Type: "qemu", Arch: "x86_64", CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "forbid", CPUCheck: "none"}, true},
		{Spec{Type: "qemu", CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "forbid"}, true},
		{Spec{Type: "kvm", Arch: "x86_64", CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "forbid", CPUCheck: "partial"}, true},
		{Spec{Type: "qemu", Arch: "x86_64", CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "forbid", CPUCheck: "full"}, false},
		{Spec{Type: "qemu", Arch: "x86_64", CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "allow", CPUCheck: "none"}, false},
		{Spec{Type: "qemu", Arch: "aarch64", CPUMode: "custom", CPUModel: "cortex-a57", CPUFallback: "forbid", CPUCheck: "none"}, true},
		{Spec{Type: "kvm", Arch: "aarch64", CPUMode: "host-passthrough", CPUCheck: "none"}, true},
		{Spec{Type: "qemu", Arch: "x86_64", CPUMode: "host-model", CPUCheck: "partial"}, false},
		{Spec{Type: "qemu", Arch: "ppc64le", CPUMode: "custom", CPUModel: "POWER9", CPUFallback: "forbid", CPUCheck: "none"}, false},
	} {
		if got := IsDefaultCPU(c.s); got != c.want {
			t.Errorf("IsDefaultCPU(%+v) = %t", c.s, got)
		}
	}
	for _, c := range [][3]string{{"host-passthrough", "kvm", "none"}, {"maximum", "qemu", "none"}, {"host-model", "qemu", "partial"},
		{"custom", "qemu", "none"}, {"custom", "kvm", "partial"}, {"", "kvm", ""}} {
		if got := DefaultCPUCheck(c[0], c[1]); got != c[2] {
			t.Errorf("DefaultCPUCheck(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}
