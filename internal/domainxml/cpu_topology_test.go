package domainxml

import (
	"strings"
	"testing"
)

func cpuSpec() Spec {
	s := fsSpec()
	s.VCPU, s.MemoryKiB = 2, 256*KiBPerMiB
	s.CPUTopology = &CPUTopology{Sockets: 1, Cores: 2, Threads: 1}
	s.CPUMode, s.CPUModel = "custom", "qemu64"
	s.CPUFeatures = map[string]string{"vmx": "disable", "sse4.2": "require"}
	s.NUMACells = []NUMACell{{ID: 0, CPUs: "0", MemoryKiB: 128 * KiBPerMiB}, {ID: 1, CPUs: "1", MemoryKiB: 128 * KiBPerMiB, MemAccess: "shared"}}
	s.CPUPinning = map[uint]string{0: "0", 1: "0,1"}
	s.EmulatorPinning = "1"
	s.MemoryBacking = &MemoryBacking{Locked: true, NoSharePages: true, Discard: true, Source: "file", Access: "shared"}
	return s
}

// What libvirt 9.0 returned (virsh dumpxml --inactive) for a definition with every
// platform part: dies filled in, cell memory in KiB, cpusets rewritten ("0,1" as "0-1").
const libvirtPlatform = `<domain type='qemu'>
  <name>fs</name>
  <memory unit='KiB'>262144</memory>
  <currentMemory unit='KiB'>262144</currentMemory>
  <memoryBacking><nosharepages/><locked/><source type='file'/><access mode='shared'/><discard/></memoryBacking>
  <vcpu placement='static'>2</vcpu>
  <cputune><vcpupin vcpu='0' cpuset='0'/><vcpupin vcpu='1' cpuset='0-1'/><emulatorpin cpuset='1'/></cputune>
  <os><type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type><boot dev='hd'/></os>
  <cpu mode='custom' match='exact' check='none'>
    <model fallback='forbid'>qemu64</model>
    <topology sockets='1' dies='1' cores='2' threads='1'/>
    <feature policy='require' name='sse4.2'/>
    <feature policy='disable' name='vmx'/>
    <numa>
      <cell id='0' cpus='0' memory='131072' unit='KiB'/>
      <cell id='1' cpus='1' memory='131072' unit='KiB' memAccess='shared'/>
    </numa>
  </cpu>
  <devices><disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='/p/a.qcow2'/><target dev='vda' bus='virtio'/></disk>
    <serial type='pty'><target type='isa-serial' port='0'><model name='isa-serial'/></target></serial>
    <console type='pty'><target type='serial' port='0'/></console></devices>
</domain>`

func TestCPUParts_roundTripAndLibvirtFilled(t *testing.T) {
	s := cpuSpec()
	_, text := build(t, nil, s)
	for _, want := range []string{`<topology sockets="1" dies="1" cores="2" threads="1">`, `<feature policy="require" name="sse4.2">`,
		`<cell id="1" cpus="1" memory="131072" unit="KiB" memAccess="shared">`, `<vcpupin vcpu="1" cpuset="0,1">`, `<emulatorpin cpuset="1">`,
		`<locked>`, `<source type="file">`, `<discard>`} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	for name, x := range map[string]string{"built": text, "libvirt's": libvirtPlatform} {
		p, err := Parse(x)
		if err != nil {
			t.Fatal(err)
		}
		if c := PlanChange(p.Spec, s, true, true, nil); c.Change != ChangeNone { // what the domain has, then what is wanted
			t.Errorf("%s XML reads back as a change (%s): %+v", name, c.Reason, p.Spec)
		}
	}
	// A domain that never had any keeps <cpu> out, and unset parts are removed.
	plain := fsSpec()
	d, text := build(t, nil, plain)
	if d.CPU != nil || strings.Contains(text, "cputune") || strings.Contains(text, "memoryBacking") {
		t.Errorf("nothing set writes nothing:\n%s", text)
	}
	full, _ := build(t, nil, s)
	plain.VCPU = 2
	if d, _ = build(t, full, plain); d.CPU.Topology != nil || d.CPU.Numa != nil || d.CPU.Features != nil || d.CPUTune != nil || d.MemoryBacking != nil {
		t.Errorf("unset parts are removed: %+v %+v %+v", d.CPU, d.CPUTune, d.MemoryBacking)
	}
}

func TestCPUParts_validate(t *testing.T) {
	for want, edit := range map[string]func(*Spec){
		"= 4, but the domain has 2 vCPUs":                func(s *Spec) { s.CPUTopology.Sockets = 2 },
		"sockets, cores and threads must each be":        func(s *Spec) { s.CPUTopology.Threads = 0 },
		`policy "maybe"; use one of require`:             func(s *Spec) { s.CPUFeatures["vmx"] = "maybe" },
		`"VMX" is not a CPU feature name`:                func(s *Spec) { s.CPUFeatures["VMX"] = "require" },
		"vCPU 1 is in no cell":                           func(s *Spec) { s.NUMACells = []NUMACell{{CPUs: "0", MemoryKiB: 256 * KiBPerMiB}} },
		"vCPU 0 is already in cpu.numa_cell 0":           func(s *Spec) { s.NUMACells[1].CPUs = "0-1" },
		"names vCPU 2, but the domain's vCPUs":           func(s *Spec) { s.NUMACells[1].CPUs = "1-2" },
		"adds up to 192 MiB, but the domain has 256 MiB": func(s *Spec) { s.NUMACells[1].MemoryKiB = 64 * KiBPerMiB },
		"and the domain names none: set cpu.mode":        func(s *Spec) { s.CPUMode, s.CPUModel = "", "" },
		"id 0 is used twice":                             func(s *Spec) { s.NUMACells[1].ID = 0 },
		`numa_cell 0: cpus: cpuset "x"`:                  func(s *Spec) { s.NUMACells[0].CPUs = "x" },
		"cpu.pinning: vCPU 2 does not exist":             func(s *Spec) { s.CPUPinning[2] = "0" },
		"cpu.pinning, vCPU 0: cpuset \"1-0\"":            func(s *Spec) { s.CPUPinning[0] = "1-0" },
		"cpu.emulator_pinning: cpuset \"^1\" names no":   func(s *Spec) { s.EmulatorPinning = "^1" },
		"hugepage_size_kib = 2048 needs hugepages":       func(s *Spec) { s.MemoryBacking.HugePageSizeKiB = 2048 },
		"hugepage_size_kib = 3000 is not a page":         func(s *Spec) { s.MemoryBacking.HugePages, s.MemoryBacking.HugePageSizeKiB = true, 3000 },
		"hugepages cannot come from source = anony":      func(s *Spec) { s.MemoryBacking.HugePages, s.MemoryBacking.Source = true, "anonymous" },
		`source "disk" is not anonymous, memfd or`:       func(s *Spec) { s.MemoryBacking.Source = "disk" },
		`access = private, but the virtiofs share "a"`: func(s *Spec) {
			s.MemoryBacking.Access, s.Filesystems = "private", []Filesystem{{Source: "/srv", Target: "a"}}
		},
		`numa_cell 1: memory_access = private, but the virtiofs`: func(s *Spec) {
			s.NUMACells[1].MemAccess, s.Filesystems = "private", []Filesystem{{Source: "/srv", Target: "a"}}
		},
	} {
		s := cpuSpec()
		edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error with %q, got %v", want, err)
		}
	}
	s := cpuSpec()
	s.MaxVCPU, s.CPUTopology.Sockets = 4, 2 // the product counts max_vcpu
	s.NUMACells[1].CPUs = "1-3"
	if err := s.Validate(); err != nil {
		t.Errorf("topology of max_vcpu: %v", err)
	}
}

func TestCPUSet(t *testing.T) {
	for set, want := range map[string]string{"0,1": "0-1", "0-3,^2": "0,1,3", " 4 , 2": "2,4"} {
		if !SameCPUSet(set, want) {
			t.Errorf("%q and %q hold the same CPUs", set, want)
		}
	}
	if SameCPUSet("0-1", "0-2") {
		t.Error("0-1 is not 0-2")
	}
	if m, err := CPUMap("0,9"); err != nil || len(m) != 2 || m[0] != 1 || m[1] != 2 {
		t.Errorf("CPUMap(0,9) = %v, %v", m, err)
	}
	for _, bad := range []string{"", "a", "1-", "3-1", "^0-1", "99999"} {
		if _, err := ParseCPUSet(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
}
