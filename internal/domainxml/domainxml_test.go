package domainxml

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

func sample() Spec {
	return Spec{
		Name: "web-1", Type: "qemu", VCPU: 1, MaxVCPU: 2, MemoryKiB: 256 * KiBPerMiB, MaxMemoryKiB: 384 * KiBPerMiB,
		Firmware: FirmwareBIOS,
		Disks: []Disk{
			{VolumeID: "/pool/web-1.qcow2", Path: "/pool/web-1.qcow2", Format: "qcow2", BootOrder: 1},
			{Path: "/srv/data.raw", Format: "raw"},
			{Path: "/srv/tools.iso", Device: DeviceCDROM},
		},
		CloudInit:  &CloudInit{ID: "default/seed.iso", Path: "/pool/seed.iso"},
		Interfaces: []Interface{{Network: "default", MAC: "52:54:00:aa:bb:cc"}, {Bridge: "br0"}},
		Graphics:   Graphics{Type: GraphicsVNC, Listen: DefaultListen},
		QemuAgent:  true,
	}
}

func build(t *testing.T, base *libvirtxml.Domain, s Spec) (*libvirtxml.Domain, string) {
	t.Helper()
	d, err := Build(base, s)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	text, err := d.Marshal()
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return d, text
}

// domainFixture is testdata/name, a definition as libvirt returns it.
func domainFixture(t *testing.T, name string) *libvirtxml.Domain {
	t.Helper()
	text, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var d libvirtxml.Domain
	if err := d.Unmarshal(string(text)); err != nil {
		t.Fatal(err)
	}
	return &d
}

func TestBuild_defaults(t *testing.T) {
	_, text := build(t, nil, Spec{Name: "a", Type: "kvm", VCPU: 2, MemoryKiB: 512 * KiBPerMiB,
		Disks:      []Disk{{Path: "/p/a.qcow2", Format: "qcow2"}},
		Interfaces: []Interface{{Network: "default"}},
		Graphics:   Graphics{Type: GraphicsVNC}, QemuAgent: true})
	for _, want := range []string{
		`<domain type="kvm">`, `<vcpu placement="static">2</vcpu>`, `<memory unit="KiB">524288</memory>`,
		`<currentMemory unit="KiB">524288</currentMemory>`, `<acpi></acpi>`,
		`<target dev="vda" bus="virtio"></target>`, `<driver name="qemu" type="qcow2">`,
		`<model type="virtio"></model>`, `<source network="default">`,
		`<serial type="pty">`, `<console type="pty">`, `name="org.qemu.guest_agent.0"`,
		`<graphics type="vnc" port="-1" autoport="yes" listen="127.0.0.1">`, `<boot dev="hd">`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, "<mac") || strings.Contains(text, "machine=") || strings.Contains(text, "<metadata") {
		t.Errorf("libvirt's choices must be left to libvirt:\n%s", text)
	}
}

func TestBuild_headroomFirmwareCPU(t *testing.T) {
	s := sample()
	s.Firmware, s.CPUMode, s.Machine = FirmwareUEFI, "host-passthrough", "q35"
	_, text := build(t, nil, s)
	for _, want := range []string{
		`<vcpu placement="static" current="1">2</vcpu>`, `<memory unit="KiB">393216</memory>`,
		`<currentMemory unit="KiB">262144</currentMemory>`, `<os firmware="efi">`, `machine="q35"`,
		`<cpu mode="host-passthrough">`, `<boot order="1">`,
		`<target dev="sda" bus="sata"></target>`, `<target dev="sdb" bus="sata"></target>`, `<readonly>`,
		`<mac address="52:54:00:aa:bb:cc">`, `<source bridge="br0">`,
		`volume="/pool/web-1.qcow2"`, `<domain xmlns="https://github.com/kvmforge/terraform-provider-libvirt/domain/1">`,
		`<cloudinit target="sdb" id="default/seed.iso" path="/pool/seed.iso"></cloudinit>`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, `<boot dev=`) {
		t.Errorf("per-device boot order excludes <os><boot dev>:\n%s", text)
	}
}

func TestFillDiskDefaults(t *testing.T) {
	tests := []struct {
		name  string
		disks []Disk
		ci    *CloudInit
		want  []string
		ciT   string
	}{
		{"virtio in order", []Disk{{}, {}, {}}, nil, []string{"vda", "vdb", "vdc"}, ""},
		{"user target skipped", []Disk{{}, {Target: "vda"}}, nil, []string{"vdb", "vda"}, ""},
		{"cdrom on sata", []Disk{{}, {Device: DeviceCDROM}}, &CloudInit{}, []string{"vda", "sda"}, "sdb"},
		{"scsi and sata share sd", []Disk{{Bus: "scsi"}, {Bus: "sata"}}, &CloudInit{Target: "sda"}, []string{"sdb", "sdc"}, "sda"},
		{"ide", []Disk{{Bus: "ide"}}, nil, []string{"hda"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			FillDiskDefaults(tc.disks, tc.ci)
			var got []string
			for _, d := range tc.disks {
				got = append(got, d.Target)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("targets %v, want %v", got, tc.want)
			}
			if tc.ci != nil && tc.ci.Target != tc.ciT {
				t.Errorf("cloud-init target %s, want %s", tc.ci.Target, tc.ciT)
			}
		})
	}
	if TargetName("vd", 26) != "vdaa" || TargetName("sd", 27) != "sdab" {
		t.Errorf("TargetName: %s %s", TargetName("vd", 26), TargetName("sd", 27))
	}
}

// What libvirt 9 returns for a domain Build made: addresses, aliases, controllers, a
// chosen MAC and machine, the CPU it fills in under TCG, loader and nvram paths, vnet
// names, the agent state. Parse must give back exactly the user's Spec.
const libvirtFilled = `<domain type='qemu' id='7'>
  <name>web-1</name>
  <uuid>8d24d164-d0b5-43b9-81fd-4ee366818f31</uuid>
  <metadata>
    <other:app xmlns:other="http://example.com/other"><x/></other:app>
    <kvmforge:domain xmlns:kvmforge="https://github.com/kvmforge/terraform-provider-libvirt/domain/1">
      <kvmforge:disk target="vda" volume="/pool/web-1.qcow2" path="/pool/web-1.qcow2"/>
      <kvmforge:cloudinit target="sdb" id="default/seed.iso" path="/pool/seed.iso"/>
    </kvmforge:domain>
  </metadata>
  <memory unit='KiB'>393216</memory>
  <currentMemory unit='KiB'>262144</currentMemory>
  <vcpu placement='static' current='1'>2</vcpu>
  <os firmware='efi'>
    <type arch='x86_64' machine='pc-q35-7.2'>hvm</type>
    <loader readonly='yes' type='pflash'>/usr/share/OVMF/OVMF_CODE_4M.fd</loader>
    <nvram template='/usr/share/OVMF/OVMF_VARS_4M.fd'>/var/lib/libvirt/qemu/nvram/web-1_VARS.fd</nvram>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='custom' match='exact' check='full'><model fallback='forbid'>qemu64</model><feature policy='require' name='x2apic'/></cpu>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='/pool/web-1.qcow2' index='3'/>
      <backingStore type='file' index='4'><format type='qcow2'/><source file='/pool/base.qcow2'/><backingStore/></backingStore>
      <target dev='vda' bus='virtio'/>
      <boot order='1'/>
      <alias name='virtio-disk0'/>
      <address type='pci' domain='0x0000' bus='0x04' slot='0x00' function='0x0'/>
    </disk>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw'/>
      <source file='/srv/data.raw'/>
      <target dev='vdb' bus='virtio'/>
      <address type='pci' domain='0x0000' bus='0x05' slot='0x00' function='0x0'/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='/srv/tools.iso'/>
      <target dev='sda' bus='sata'/>
      <readonly/>
      <address type='drive' controller='0' bus='0' target='0' unit='0'/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='/pool/seed.iso'/>
      <target dev='sdb' bus='sata'/>
      <readonly/>
      <address type='drive' controller='0' bus='0' target='0' unit='1'/>
    </disk>
    <controller type='sata' index='0'/>
    <interface type='network'>
      <mac address='52:54:00:AA:BB:CC'/>
      <source network='default' portid='0c6f6b1a-3cc5-4e55-9d1c-04c2e7d3f6a1' bridge='virbr0'/>
      <target dev='vnet3'/>
      <model type='virtio'/>
      <alias name='net0'/>
      <address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x0'/>
    </interface>
    <interface type='bridge'>
      <mac address='52:54:00:12:34:56'/>
      <source bridge='br0'/>
      <target dev='vnet4'/>
      <model type='virtio'/>
    </interface>
    <serial type='pty'><source path='/dev/pts/3'/><target type='isa-serial' port='0'><model name='isa-serial'/></target></serial>
    <console type='pty' tty='/dev/pts/3'><source path='/dev/pts/3'/><target type='serial' port='0'/></console>
    <channel type='unix'>
      <source mode='bind' path='/run/libvirt/qemu/channel/7-web-1/org.qemu.guest_agent.0'/>
      <target type='virtio' name='org.qemu.guest_agent.0' state='connected'/>
      <alias name='channel0'/>
    </channel>
    <graphics type='vnc' port='5901' autoport='yes' listen='127.0.0.1'><listen type='address' address='127.0.0.1'/></graphics>
    <memballoon model='virtio'/>
  </devices>
</domain>`

func TestParse_ignoresLibvirtFilled(t *testing.T) {
	p, err := Parse(libvirtFilled)
	if err != nil {
		t.Fatal(err)
	}
	want := sample()
	want.Firmware, want.Machine, want.CPUMode, want.CPUModel = FirmwareUEFI, "pc-q35-7.2", "custom", "qemu64"
	want.CPUFallback, want.CPUCheck = "forbid", "full"
	want.Arch, want.Emulator = ArchX86_64, "/usr/bin/qemu-system-x86_64"
	want.Disks[0].Target, want.Disks[0].Bus, want.Disks[0].Device = "vda", "virtio", DeviceDisk
	want.Disks[1].Target, want.Disks[1].Bus, want.Disks[1].Device = "vdb", "virtio", DeviceDisk
	want.Disks[2].Target, want.Disks[2].Bus, want.Disks[2].Format = "sda", "sata", "raw"
	want.CloudInit.Target = "sdb"
	want.UUID = "8d24d164-d0b5-43b9-81fd-4ee366818f31"
	want.Interfaces[0].Model, want.Interfaces[1].Model = "virtio", "virtio"
	want.Interfaces[1].MAC = "52:54:00:12:34:56"
	// Another application's metadata reads back as an extra_xml fragment (metadata_foreign.go).
	want.ExtraXML = []string{`<metadata><other:app xmlns:other="http://example.com/other"><x/></other:app></metadata>`}
	if !reflect.DeepEqual(p.Spec, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", p.Spec, want)
	}
	if p.GraphicsPort != 5901 || !p.AgentConnected || p.NVRAM != "/var/lib/libvirt/qemu/nvram/web-1_VARS.fd" || p.ID == nil || *p.ID != 7 {
		t.Errorf("runtime facts: %+v", p)
	}
	if Classify(want, p.Spec, true, true) != ChangeNone {
		t.Errorf("a parsed definition differs from itself")
	}
}

func TestRoundTrip(t *testing.T) {
	tests := map[string]Spec{
		"sample": sample(),
		"minimal": {Name: "m", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Firmware: FirmwareBIOS,
			Graphics: Graphics{Type: GraphicsNone}},
		"spice": {Name: "s", Type: "kvm", VCPU: 4, MemoryKiB: 4096 * KiBPerMiB, Firmware: FirmwareBIOS, CPUMode: "custom", CPUModel: "Haswell", CPUFallback: "allow",
			Graphics: Graphics{Type: GraphicsSpice, Listen: "0.0.0.0"}, Disks: []Disk{{Path: "/dev/vg/lv", Format: "raw", Bus: "scsi"}}},
	}
	for name, s := range tests {
		t.Run(name, func(t *testing.T) {
			_, text := build(t, nil, s)
			p, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			want := s
			want.Disks = append([]Disk(nil), s.Disks...)
			if s.CloudInit != nil {
				c := *s.CloudInit
				want.CloudInit = &c
			}
			FillDiskDefaults(want.Disks, want.CloudInit)
			for i := range want.Disks {
				if want.Disks[i].Format == "" {
					want.Disks[i].Format = "raw"
				}
			}
			for i := range want.Interfaces {
				if want.Interfaces[i].Model == "" {
					want.Interfaces[i].Model = DefaultNIC
				}
			}
			if !reflect.DeepEqual(p.Spec, want) {
				t.Errorf("round trip:\n got %+v\nwant %+v\n%s", p.Spec, want, text)
			}
		})
	}
}

func TestBuild_mergeKeepsUnmanaged(t *testing.T) {
	var base libvirtxml.Domain
	if err := base.Unmarshal(libvirtFilled); err != nil {
		t.Fatal(err)
	}
	s := sample()
	s.Firmware, s.Machine = FirmwareUEFI, "pc-q35-7.2"
	s.VCPU, s.MaxVCPU = 2, 4
	s.QemuAgent = false
	s.Disks = s.Disks[:1]
	d, text := build(t, &base, s)
	if d.UUID != base.UUID || d.ID != nil {
		t.Errorf("uuid %s id %v", d.UUID, d.ID)
	}
	if d.Devices.Disks[0].Address == nil || d.Devices.Interfaces[0].Address == nil {
		t.Errorf("same devices must keep their addresses")
	}
	if d.Devices.MemBalloon == nil || len(d.Devices.Controllers) != 1 || d.OS.Loader == nil {
		t.Errorf("unmanaged parts lost")
	}
	if len(d.Devices.Channels) != 0 {
		t.Errorf("agent channel not removed")
	}
	if !strings.Contains(text, `<other:app xmlns:other="http://example.com/other"><x/></other:app>`) {
		t.Errorf("other metadata lost:\n%s", d.Metadata.XML)
	}
	if strings.Count(text, `xmlns="`+MetadataNS+`"`) != 1 || strings.Contains(text, `target="vdb"`) {
		t.Errorf("metadata:\n%s", d.Metadata.XML)
	}
	if d.Devices.Interfaces[0].Target != nil || d.Devices.Disks[0].Alias != nil {
		t.Errorf("vnet names and aliases belong to libvirt")
	}
	// A machine change drops addresses and controllers; a firmware change drops the loader.
	s.Machine, s.Firmware = "pc", FirmwareBIOS
	d, _ = build(t, &base, s)
	if d.Devices.Disks[0].Address != nil || d.Devices.Controllers != nil || d.OS.Loader != nil || d.OS.NVRam != nil || d.OS.Firmware != "" {
		t.Errorf("machine/firmware change kept stale layout: %+v %+v", d.Devices.Disks[0].Address, d.OS)
	}
}

func TestClassify(t *testing.T) {
	base := sample()
	mod := func(f func(*Spec)) Spec {
		s := sample()
		f(&s)
		return s
	}
	tests := []struct {
		name          string
		new           Spec
		before, after bool
		want          Change
	}{
		{"same", base, true, true, ChangeNone},
		{"vcpu up within max", mod(func(s *Spec) { s.VCPU = 2 }), true, true, ChangeLive},
		{"memory up within max", mod(func(s *Spec) { s.MemoryKiB = 384 * KiBPerMiB }), true, true, ChangeLive},
		{"memory down", mod(func(s *Spec) { s.MemoryKiB = 200 * KiBPerMiB }), true, true, ChangeLive},
		{"vcpu down", mod(func(s *Spec) { s.VCPU = 1; s.MaxVCPU = 2 }), true, true, ChangeNone},
		{"vcpu beyond max", mod(func(s *Spec) { s.VCPU = 3; s.MaxVCPU = 3 }), true, true, ChangeRestart},
		{"max raised", mod(func(s *Spec) { s.MaxVCPU = 4 }), true, true, ChangeRestart},
		{"stopped domain", mod(func(s *Spec) { s.VCPU = 2 }), false, false, ChangeDefinition},
		{"being stopped", mod(func(s *Spec) { s.MaxVCPU = 4 }), true, false, ChangeDefinition},
		{"machine alias", mod(func(s *Spec) { s.Machine = "pc-i440fx-7.2" }), true, true, ChangeNone},
		{"nic model", mod(func(s *Spec) { s.Interfaces[0].Model = "e1000" }), true, true, ChangeRestart},
		{"new disk", mod(func(s *Spec) { s.Disks = append(s.Disks, Disk{Path: "/x"}) }), true, true, ChangeLive},
		{"new sata disk", mod(func(s *Spec) { s.Disks = append(s.Disks, Disk{Path: "/x", Bus: "sata"}) }), true, true, ChangeRestart},
		{"cloudinit", mod(func(s *Spec) { s.CloudInit = nil }), true, true, ChangeRestart},
		{"volume path resolved later", mod(func(s *Spec) { s.Disks[0].Path = "" }), true, true, ChangeNone},
		{"key written as path", mod(func(s *Spec) { s.Disks[0].VolumeID = "" }), true, true, ChangeNone},
		{"pool/name for a path", mod(func(s *Spec) { s.Disks[0].VolumeID = "default/web-1.qcow2" }), true, true, ChangeRestart},
		{"graphics", mod(func(s *Spec) { s.Graphics.Type = GraphicsSpice }), true, true, ChangeRestart},
	}
	base.Machine = "pc"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(base, tc.new, tc.before, tc.after); got != tc.want {
				t.Errorf("Classify = %s, want %s", got, tc.want)
			}
		})
	}
	down := sample()
	down.VCPU = 2
	if got := Classify(down, sample(), true, true); got != ChangeRestart {
		t.Errorf("vcpu down: %s, want restart", got)
	}
}

func TestValidate(t *testing.T) {
	for name, s := range map[string]Spec{
		"no vcpu":       {MemoryKiB: 1 * KiBPerMiB},
		"no memory":     {VCPU: 1},
		"vcpu over max": {VCPU: 3, MaxVCPU: 2, MemoryKiB: 1},
		"mem over max":  {VCPU: 1, MemoryKiB: 512 * KiBPerMiB, MaxMemoryKiB: 256 * KiBPerMiB},
		"no source":     {VCPU: 1, MemoryKiB: 1, Disks: []Disk{{}}},
		"two targets":   {VCPU: 1, MemoryKiB: 1, Disks: []Disk{{Path: "/a", Target: "vda"}, {Path: "/b", Target: "vda"}}},
		"nic both":      {VCPU: 1, MemoryKiB: 1, Interfaces: []Interface{{Network: "n", Bridge: "b"}}},
		"nic neither":   {VCPU: 1, MemoryKiB: 1, Interfaces: []Interface{{}}},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzParse: any XML either fails to parse or yields a Spec that Build accepts (when it
// validates) and that reads back the same after Build.
func FuzzParse(f *testing.F) {
	f.Add(libvirtFilled)
	_, text := build(&testing.T{}, nil, sample())
	f.Add(text)
	f.Add(`<domain type='kvm'><name>x</name><vcpu>1</vcpu><devices><disk device='cdrom'/></devices></domain>`)
	// Found by fuzzing: no <devices> at all, and VNC without a listen address.
	f.Add(`<domain><vcpu>1</vcpu></domain>`)
	f.Add(`<domain><vcpu>1</vcpu><devices><graphics type='vnc'/></devices></domain>`)
	f.Add(`<domain><metadata><kvmforge:domain xmlns:kvmforge="https://github.com/kvmforge/terraform-provider-libvirt/domain/1"><kvmforge:disk target="" path=""/></kvmforge:domain></metadata></domain>`)
	// Found by fuzzing: a cdrom with no target, a NIC with no model (Build fills both in).
	f.Add(`<domain><vcpu>1</vcpu><devices><disk device='cdrom'><source file='/x.iso'/></disk></devices></domain>`)
	f.Add(`<domain><vcpu>1</vcpu><devices><interface type='bridge'><source bridge='0'/></interface></devices></domain>`)
	for _, fixture := range append([]string{"testdata/filesystem-libvirt.xml", "testdata/hostdevs_libvirt.xml"}, everyFamilyFixtures...) {
		if b, err := os.ReadFile(fixture); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Parse(in)
		if err != nil {
			return
		}
		s := p.Spec
		if s.Validate() != nil {
			return
		}
		d, err := Build(nil, s)
		if err != nil {
			return
		}
		out, err := d.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		p2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of built XML: %v\n%s", err, out)
		}
		if Classify(s, p2.Spec, true, true) != ChangeNone {
			t.Fatalf("built XML reads back differently:\n%+v\n%+v\n%s", s, p2.Spec, out)
		}
	})
}
