package domainxml

import (
	"strings"
	"testing"
)

func TestExtraXMLOwnedForms(t *testing.T) {
	for f, want := range map[string]string{
		// typed forms stay the families'
		`<cpu mode='host-model'/>`:                        "managed by cpu",
		`<memoryBacking><hugepages/></memoryBacking>`:     "managed by memory_backing",
		`<os><type arch='x86_64'>hvm</type></os>`:         "managed by os",
		`<os><loader type='pflash'>/x.fd</loader></os>`:   "managed by os",
		`<qemu:commandline xmlns:qemu='` + qemuNS + `'/>`: "managed by qemu",
		`<app:x xmlns:app='urn:app'/>`:                    "not an element libvirt",
		// forms no family types
		`<cpu mode='custom' match='minimum'><model>qemu64</model></cpu>`:                                    "",
		`<cpu mode='host-passthrough' migratable='off'/>`:                                                   "",
		`<cpu mode='custom' match='exact'><model>qemu64</model><vendor>AMD</vendor></cpu>`:                  "",
		`<memoryBacking><allocation mode='immediate'/></memoryBacking>`:                                     "",
		`<memoryBacking><hugepages><page size='2048' unit='KiB' nodeset='0'/></hugepages></memoryBacking>`:  "",
		`<vcpus><vcpu id='0' enabled='yes' hotpluggable='no'/></vcpus>`:                                     "",
		`<iothreadids><iothread id='4'/></iothreadids>`:                                                     "",
		`<os><bios useserial='yes' rebootTimeout='5000'/></os>`:                                             "",
		`<os><loader stateless='yes'/></os>`:                                                                "",
		`<os><firmware><feature enabled='no' name='secure-boot'/></firmware></os>`:                          "",
		`<qemu:capabilities xmlns:qemu='` + qemuNS + `'><qemu:del capability='drive'/></qemu:capabilities>`: "",
	} {
		err := CheckExtraXML([]string{f})[0]
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", f, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want one saying %q", f, err, want)
		}
	}
}

func TestExtraXMLOwnedBuild(t *testing.T) {
	s := fsSpec()
	s.VCPU, s.MaxVCPU = 1, 2
	vcpus := `<vcpus><vcpu id='0' enabled='yes' hotpluggable='no'/><vcpu id='1' enabled='no' hotpluggable='yes'/></vcpus>`
	cpu := `<cpu mode='custom' match='minimum'><model fallback='allow'>qemu64</model></cpu>`
	osPart := `<os><bios useserial='yes' rebootTimeout='5000'/></os>`
	s.ExtraXML = []string{vcpus, cpu, osPart}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.VCPUs == nil || len(d.VCPUs.VCPU) != 2 || d.CPU == nil || d.CPU.Match != "minimum" || d.OS.BIOS == nil || d.OS.Type == nil {
		t.Fatalf("built %+v %+v %+v", d.VCPUs, d.CPU, d.OS)
	}
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.CPUMode != "" {
		t.Errorf("an escaped <cpu> read as cpu.mode %q", p.Spec.CPUMode)
	}
	for _, f := range s.ExtraXML {
		if !ExtraXMLPresent(p.Spec.ExtraXML, f) {
			t.Errorf("%s does not read back from %q", f, p.Spec.ExtraXML)
		}
	}
	// A typed cpu beside a <cpu> fragment is refused.
	bad := s
	bad.CPUMode = "host-model"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "whole") {
		t.Errorf("cpu.mode with a <cpu> fragment: %v", err)
	}
	// Fragments that go take their elements with them.
	s.ExtraXML, s.ExtraXMLWas = nil, []string{vcpus, cpu, osPart}
	again, err := Build(d, s)
	if err != nil {
		t.Fatal(err)
	}
	if again.VCPUs != nil || again.CPU != nil || again.OS.BIOS != nil || again.OS.Type == nil {
		t.Errorf("left: %+v %+v %+v", again.VCPUs, again.CPU, again.OS)
	}
}

func TestPlatformScalars(t *testing.T) {
	s := fsSpec()
	s.VCPU = 2
	s.VCPUPlacement, s.VCPUCPUSet = "auto", "0-1"
	s.FWCfg, s.FWCfgFiles = map[string]string{"opt/a": "1"}, map[string]string{"opt/b": "/var/lib/b.cfg"}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.VCPUPlacement != "auto" || p.Spec.VCPUCPUSet != "0-1" || p.Spec.FWCfgFiles["opt/b"] != "/var/lib/b.cfg" || p.Spec.FWCfg["opt/a"] != "1" {
		t.Fatalf("read back %q %q %v %v", p.Spec.VCPUPlacement, p.Spec.VCPUCPUSet, p.Spec.FWCfgFiles, p.Spec.FWCfg)
	}
	if !sizingFamily.same(p.Spec, s) || !smbiosFamily.same(p.Spec, s) {
		t.Error("a spec differs from what it built")
	}
	s.FWCfg = map[string]string{"opt/b": "x"}
	if err := s.Validate(); err == nil {
		t.Error("a name in fw_cfg and fw_cfg_files is accepted")
	}
}

func TestNUMAWithMemoryDevices(t *testing.T) {
	s := fsSpec()
	s.VCPU, s.MemoryKiB = 1, 768*KiBPerMiB
	s.NUMACells = []NUMACell{{ID: 0, CPUs: "0", MemoryKiB: 256 * KiBPerMiB}}
	if err := validateNUMA(&s, 1); err == nil {
		t.Fatal("cells short of the memory without memory devices are accepted")
	}
	s.DeviceXML = []string{`<memory model='dimm'><target><size unit='KiB'>524288</size><node>0</node></target></memory>`}
	if err := validateNUMA(&s, 1); err != nil {
		t.Fatal(err)
	}
	s.DeviceXML = []string{`<memory model='dimm'><target><size unit='MiB'>256</size><node>0</node></target></memory>`}
	if err := validateNUMA(&s, 1); err == nil || !strings.Contains(err.Error(), "memory devices") {
		t.Fatalf("cells short of memory less devices: %v", err)
	}
}

func TestBootOrderInDeviceXML(t *testing.T) {
	s := fsSpec()
	s.DeviceXML = []string{`<redirdev bus='usb' type='tcp'><source mode='connect' host='localhost' service='4000'/><protocol type='raw'/><boot order='1'/></redirdev>`}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.OS.BootDevices) != 0 {
		t.Errorf("<os><boot dev> beside a device_xml boot order: %+v", d.OS.BootDevices)
	}
}
