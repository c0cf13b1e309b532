package domainxml

import (
	"os"
	"strings"
	"testing"
)

// TestArch: a fresh x86 definition is as before (acpi, apic, no <cpu>, no machine); an
// aarch64 one gets virt, cortex-a57 (host-passthrough under kvm), no apic and acpi only
// with UEFI; arch and emulator round-trip; empty keeps; a change of either is a restart
// change; bad values and acpi on aarch64 without UEFI are refused.
func TestArch(t *testing.T) {
	base := Spec{Name: "a", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB}
	cases := []struct {
		name                       string
		arch, typ, firmware, emu   string
		machine, cpuMode, cpuModel string
		acpi, apic                 bool
	}{
		{name: "x86 as before", acpi: true, apic: true},
		{name: "x86_64 explicit", arch: ArchX86_64, emu: "/usr/bin/qemu-system-x86_64", acpi: true, apic: true},
		{name: "aarch64 tcg", arch: ArchAArch64, machine: "virt", cpuMode: "custom", cpuModel: "cortex-a57"},
		{name: "aarch64 kvm", arch: ArchAArch64, typ: "kvm", machine: "virt", cpuMode: "host-passthrough"},
		{name: "aarch64 uefi", arch: ArchAArch64, firmware: FirmwareUEFI, machine: "virt", cpuMode: "custom", cpuModel: "cortex-a57", acpi: true},
		{name: "armv7l", arch: "armv7l", machine: "virt", cpuMode: "custom", cpuModel: "cortex-a15"},
		{name: "ppc64le", arch: "ppc64le"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base
			s.Arch, s.Firmware, s.Emulator = c.arch, c.firmware, c.emu
			if c.typ != "" {
				s.Type = c.typ
			}
			d, err := Build(nil, s)
			if err != nil {
				t.Fatal(err)
			}
			if d.OS.Type.Arch != c.arch || d.OS.Type.Machine != c.machine || d.Devices.Emulator != c.emu {
				t.Errorf("os %+v emulator %q", d.OS.Type, d.Devices.Emulator)
			}
			mode, model := "", ""
			if d.CPU != nil {
				mode = d.CPU.Mode
				if d.CPU.Model != nil {
					model = d.CPU.Model.Value
				}
			}
			if mode != c.cpuMode || model != c.cpuModel {
				t.Errorf("cpu %q %q", mode, model)
			}
			f := d.Features
			if (f != nil && f.ACPI != nil) != c.acpi || (f != nil && f.APIC != nil) != c.apic {
				t.Errorf("features %+v", f)
			}
			p, _ := FromDomain(d)
			if p.Spec.Arch != c.arch || p.Spec.Emulator != c.emu || !archFamily.same(p.Spec, s) {
				t.Errorf("round trip %q %q", p.Spec.Arch, p.Spec.Emulator)
			}
		})
	}

	// What libvirt 9.0 returned for a definition Build made for aarch64 (virsh dumpxml).
	text, err := os.ReadFile("testdata/aarch64-virt-defined.xml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.Arch, want.Graphics, want.QemuAgent = ArchAArch64, Graphics{Type: GraphicsVNC}, true
	if p.Spec.Arch != ArchAArch64 || p.Spec.Emulator != "/usr/bin/qemu-system-aarch64" || !SameMachine("virt", p.Spec.Machine) ||
		!archFamily.same(p.Spec, want) || !osFamily.same(p.Spec, Spec{Machine: "virt"}) {
		t.Errorf("libvirt's aarch64 definition reads as arch %q emulator %q machine %q", p.Spec.Arch, p.Spec.Emulator, p.Spec.Machine)
	}
	// An update that leaves arch and emulator out keeps them.
	d, _ := Build(nil, want)
	d2, err := Build(d, base)
	if err != nil || d2.OS.Type.Arch != ArchAArch64 || d2.OS.Type.Machine != "virt" {
		t.Errorf("keep: %v %+v", err, d2.OS.Type)
	}

	old := base
	old.Arch, old.Emulator = ArchX86_64, "/usr/bin/qemu-system-x86_64"
	for _, next := range []Spec{{Emulator: "/usr/local/bin/qemu-system-x86_64"}, {Arch: ArchAArch64}} {
		n := old
		if next.Arch != "" {
			n.Arch, n.Emulator = next.Arch, ""
		} else {
			n.Emulator = next.Emulator
		}
		if pl := PlanChange(old, n, true, true, nil); pl.Change != ChangeRestart {
			t.Errorf("%+v: %s", next, pl.Change)
		}
		if pl := PlanChange(old, base, true, true, nil); pl.Change != ChangeNone {
			t.Errorf("unset: %s", pl.Change)
		}
	}
	// A new arch on an existing definition drops the old binary unless one is given.
	x, _ := Build(nil, old)
	n := old
	n.Arch, n.Emulator = ArchAArch64, ""
	if y, _ := Build(x, n); y.Devices.Emulator != "" || y.OS.Type.Arch != ArchAArch64 {
		t.Errorf("arch change kept %q", y.Devices.Emulator)
	}

	yes := true
	for _, bad := range []struct {
		s    Spec
		want string
	}{
		{Spec{Arch: "x86-64"}, `arch "x86-64"`},
		{Spec{Emulator: "qemu-system-x86_64"}, "absolute path"},
		{Spec{Arch: ArchAArch64, Features: &Features{ACPI: &yes}}, "needs firmware = \"uefi\""},
	} {
		if err := archFamily.validate(&bad.s); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v", bad.s, err)
		}
	}
}
