package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

const cloneSourceXML = `<domain type='qemu'>
  <name>web</name>
  <uuid>11111111-2222-3333-4444-555555555555</uuid>
  <genid>aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee</genid>
  <metadata>
    <other:thing xmlns:other="https://example.com/other">keep me</other:thing>
    <kvmforge:domain xmlns:kvmforge="https://github.com/kvmforge/terraform-provider-libvirt/domain/1"><kvmforge:disk target="vda" volume="default/web.qcow2" path="/pool/web.qcow2"/><kvmforge:cloudinit target="sda" id="default/seed-web.iso" path="/pool/seed-web.iso"/></kvmforge:domain>
  </metadata>
  <memory unit='KiB'>524288</memory>
  <currentMemory unit='KiB'>262144</currentMemory>
  <vcpu placement='static' current='1'>4</vcpu>
  <sysinfo type='smbios'><system><entry name='manufacturer'>acme</entry><entry name='uuid'>11111111-2222-3333-4444-555555555555</entry></system></sysinfo>
  <sysinfo type='fwcfg'><entry name='opt/com.coreos/config' file='/pool/web.ign'/></sysinfo>
  <os firmware='efi'>
    <type arch='x86_64' machine='pc-q35-7.2'>hvm</type>
    <nvram template='/usr/share/OVMF/OVMF_VARS_4M.fd'>/var/lib/libvirt/qemu/nvram/web_VARS.fd</nvram>
  </os>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='/pool/web.qcow2'/>
      <backingStore type='file'><format type='qcow2'/><source file='/pool/base.qcow2'/></backingStore>
      <target dev='vda' bus='virtio'/>
      <serial>web-root</serial>
    </disk>
    <disk type='volume' device='disk'>
      <driver name='qemu' type='raw'/>
      <source pool='default' volume='web-data.raw'/>
      <target dev='vdb' bus='virtio'/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='/pool/seed-web.iso'/>
      <target dev='sda' bus='sata'/>
      <readonly/>
    </disk>
    <disk type='file' device='cdrom'>
      <source file='/isos/tools.iso'/>
      <target dev='sdb' bus='sata'/>
      <readonly/>
    </disk>
    <interface type='network'>
      <mac address='52:54:00:aa:bb:01'/>
      <source network='default'/>
      <target dev='vnet3'/>
      <model type='virtio'/>
    </interface>
    <interface type='bridge'>
      <mac address='52:54:00:aa:bb:02'/>
      <source bridge='br0'/>
      <model type='e1000'/>
    </interface>
    <channel type='unix'>
      <source mode='bind' path='/var/lib/libvirt/qemu/channel/target/domain-3-web/org.qemu.guest_agent.0'/>
      <target type='virtio' name='org.qemu.guest_agent.0'/>
    </channel>
    <graphics type='vnc' port='5901' autoport='no' listen='127.0.0.1'/>
  </devices>
</domain>`

func parseXML(t *testing.T, text string) *libvirtxml.Domain {
	t.Helper()
	var d libvirtxml.Domain
	if err := d.Unmarshal(text); err != nil {
		t.Fatal(err)
	}
	return &d
}

func cloneSpecFor(name string) CloneSpec {
	return CloneSpec{
		Name: name,
		UUID: "99999999-8888-7777-6666-555555555555",
		Disks: []CloneDisk{
			{Target: "vda", Path: "/pool/" + CloneVolumeName(name, "vda"), Format: "qcow2", Key: "/pool/" + CloneVolumeName(name, "vda")},
			{Target: "vdb", Path: "/pool/" + CloneVolumeName(name, "vdb"), Format: "qcow2", Key: "/pool/" + CloneVolumeName(name, "vdb")},
		},
		MACs:      CloneMACs(name, 2, []string{"52:54:00:aa:bb:01", "52:54:00:aa:bb:02"}),
		NVRAM:     CloneNVRAMPath("/var/lib/libvirt/qemu/nvram/web_VARS.fd", name),
		CloudInit: &CloudInit{ID: "default/seed-" + name + ".iso", Path: "/pool/seed-" + name + ".iso"},
		Meta: CloneMeta{SourceID: "web", SourceUUID: "11111111-2222-3333-4444-555555555555", Mode: CloneLinked, Pool: "default", Running: "running",
			Disks: []CloneMetaDisk{{Target: "vda", Key: "/pool/web2-vda.qcow2", Pool: "default", Name: "web2-vda.qcow2", Path: "/pool/web2-vda.qcow2", Backing: "/pool/base.qcow2"}}},
	}
}

func TestDeriveClone(t *testing.T) {
	src := parseXML(t, cloneSourceXML)
	before, _ := src.Marshal()
	s := cloneSpecFor("web2")
	s.VCPU = 3
	d, err := DeriveClone(src, s)
	if err != nil {
		t.Fatal(err)
	}
	text, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := src.Marshal(); after != before {
		t.Error("DeriveClone changed the source definition")
	}
	// Round trip through XML, as libvirt gets it.
	d = parseXML(t, text)

	if d.Name != "web2" || d.UUID != s.UUID {
		t.Errorf("name/uuid = %s/%s", d.Name, d.UUID)
	}
	if d.GenID == nil || d.GenID.Value != "" {
		t.Errorf("genid = %+v, want an empty <genid/> (libvirt makes a new one)", d.GenID)
	}
	if strings.Contains(text, "52:54:00:aa:bb:0") {
		t.Errorf("the clone carries a MAC of the source:\n%s", text)
	}
	if strings.Contains(text, "vnet3") || strings.Contains(text, "domain-3-web") {
		t.Errorf("the clone keeps the source's vnet name or agent socket path:\n%s", text)
	}
	for i, n := range d.Devices.Interfaces {
		if n.MAC == nil || n.MAC.Address != s.MACs[i] {
			t.Errorf("interface %d: mac %+v, want %s", i, n.MAC, s.MACs[i])
		}
	}
	if d.Devices.Interfaces[1].Source.Bridge == nil || d.Devices.Interfaces[1].Model.Type != "e1000" {
		t.Errorf("interface settings not kept: %+v", d.Devices.Interfaces[1])
	}

	// Disks: own files, qcow2, no backing store from the source, no serial; cdroms of
	// the source gone, the clone's seed on the first free sd target, read-only.
	if len(d.Devices.Disks) != 3 {
		t.Fatalf("disks: %d, want 2 disks and the clone's seed", len(d.Devices.Disks))
	}
	for i, target := range []string{"vda", "vdb"} {
		x := d.Devices.Disks[i]
		if x.Target.Dev != target || x.Source.File == nil || x.Source.File.File != "/pool/web2-"+target+".qcow2" || x.Driver.Type != "qcow2" {
			t.Errorf("disk %s: %+v %+v %+v", target, x.Target, x.Source, x.Driver)
		}
		if x.BackingStore != nil || x.Serial != "" || x.Source.Volume != nil {
			t.Errorf("disk %s keeps something of the source's: %+v", target, x)
		}
	}
	seed := d.Devices.Disks[2]
	if seed.Device != "cdrom" || seed.Target.Dev != "sda" || seed.Target.Bus != "sata" || seed.ReadOnly == nil || seed.Source.File.File != "/pool/seed-web2.iso" {
		t.Errorf("seed: %+v %+v", seed.Target, seed.Source)
	}
	if strings.Contains(text, "seed-web.iso") && !strings.Contains(text, "seed-web2.iso") || strings.Contains(text, "tools.iso") || strings.Contains(text, `"/pool/seed-web.iso"`) {
		t.Errorf("a cdrom of the source is still attached:\n%s", text)
	}

	// UEFI: the clone's own varstore path; the template stays.
	if got := NVRAMPath(d); got != "/var/lib/libvirt/qemu/nvram/web2_VARS.fd" {
		t.Errorf("nvram = %q", got)
	}
	if d.OS.NVRam.Template != "/usr/share/OVMF/OVMF_VARS_4M.fd" || d.OS.Firmware != "efi" {
		t.Errorf("os: %+v", d.OS)
	}

	// Sizing: ceilings of the source, vcpu overridden, memory kept.
	if d.VCPU.Value != 4 || d.VCPU.Current != 3 {
		t.Errorf("vcpu = %+v, want 3 of 4", d.VCPU)
	}
	if d.Memory.Value != 524288 || d.CurrentMemory.Value != 262144 {
		t.Errorf("memory = %+v / %+v", d.Memory, d.CurrentMemory)
	}

	// No fixed ports; no Ignition; no SMBIOS uuid of the source, other entries kept.
	if g := d.Devices.Graphics[0].VNC; g.AutoPort != "yes" || g.Port != -1 {
		t.Errorf("vnc = %+v", g)
	}
	if strings.Contains(text, "com.coreos") || strings.Contains(text, "<entry name=\"uuid\"") {
		t.Errorf("ignition or SMBIOS uuid kept:\n%s", text)
	}
	if !strings.Contains(text, "acme") {
		t.Errorf("SMBIOS manufacturer lost")
	}

	// Metadata: foreign kept, libvirt_domain's rewritten for the clone, the clone record.
	if !strings.Contains(text, "keep me") {
		t.Error("foreign metadata lost")
	}
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.CloudInit == nil || p.Spec.CloudInit.ID != "default/seed-web2.iso" {
		t.Errorf("cloud-init read back: %+v", p.Spec.CloudInit)
	}
	if len(p.Spec.Disks) != 2 || p.Spec.Disks[0].VolumeID != "/pool/web2-vda.qcow2" {
		t.Errorf("disks read back: %+v", p.Spec.Disks)
	}
	m, ok := ParseCloneMeta(d)
	if !ok || m.Mode != CloneLinked || m.SourceID != "web" || m.Pool != "default" || len(m.Disks) != 1 || m.Disks[0].Backing != "/pool/base.qcow2" {
		t.Errorf("clone record: %+v %v", m, ok)
	}
	if _, ok := ParseCloneMeta(src); ok {
		t.Error("the source has no clone record")
	}

	// A clone of a clone carries one record: its own.
	s3 := cloneSpecFor("web3")
	s3.Meta.SourceID = "web2"
	d3, err := DeriveClone(d, s3)
	if err != nil {
		t.Fatal(err)
	}
	t3, _ := d3.Marshal()
	if n := strings.Count(t3, `<clone xmlns="`+CloneMetadataNS+`"`); n != 1 {
		t.Errorf("%d clone records in a clone of a clone", n)
	}
	if m, _ := ParseCloneMeta(d3); m.SourceID != "web2" {
		t.Errorf("clone of a clone: record %+v", m)
	}
}

func TestDeriveCloneErrors(t *testing.T) {
	src := parseXML(t, cloneSourceXML)
	cases := map[string]struct {
		edit func(*CloneSpec)
		want string
	}{
		"vcpu above the ceiling":   {func(s *CloneSpec) { s.VCPU = 5 }, "clone web2: vcpu 5 is above the source's maximum of 4"},
		"memory above the ceiling": {func(s *CloneSpec) { s.MemoryMiB = 1024 }, "clone web2: memory_mib 1024 is above the source's maximum of 512 MiB"},
		"uefi without nvram":       {func(s *CloneSpec) { s.NVRAM = "" }, "needs its own nvram"},
		"a disk missing":           {func(s *CloneSpec) { s.Disks = s.Disks[:1] }, "no clone disk for the source's disk vdb"},
		"a MAC missing":            {func(s *CloneSpec) { s.MACs = s.MACs[:1] }, "1 MACs for 2 interfaces"},
		"no uuid":                  {func(s *CloneSpec) { s.UUID = "" }, "needs a name and a UUID"},
	}
	for name, c := range cases {
		s := cloneSpecFor("web2")
		c.edit(&s)
		_, err := DeriveClone(src, s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

func TestSourceDisks(t *testing.T) {
	disks, err := SourceDisks(parseXML(t, cloneSourceXML))
	if err != nil {
		t.Fatal(err)
	}
	if len(disks) != 2 || disks[0] != (SourceDisk{Target: "vda", Path: "/pool/web.qcow2", Format: "qcow2"}) ||
		disks[1] != (SourceDisk{Target: "vdb", Pool: "default", Volume: "web-data.raw", Format: "raw"}) {
		t.Errorf("disks = %+v", disks)
	}
	block := strings.Replace(cloneSourceXML, "<source file='/pool/web.qcow2'/>", "<source dev='/dev/sdz'/>", 1)
	block = strings.Replace(block, "<disk type='file' device='disk'>", "<disk type='block' device='disk'>", 1)
	if _, err := SourceDisks(parseXML(t, block)); err == nil || !strings.Contains(err.Error(), "block device /dev/sdz") {
		t.Errorf("block device: err = %v", err)
	}
	none := parseXML(t, `<domain type='qemu'><name>x</name><devices><disk type='file' device='cdrom'><target dev='sda' bus='sata'/></disk></devices></domain>`)
	if disks, err := SourceDisks(none); err != nil || len(disks) != 0 {
		t.Errorf("cdrom only: %v %v", disks, err)
	}
}

func TestCloneMACsAndNames(t *testing.T) {
	a := CloneMACs("web2", 3, nil)
	b := CloneMACs("web2", 3, nil)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("not stable: %v %v", a, b)
	}
	seen := map[string]bool{}
	for _, m := range a {
		if !strings.HasPrefix(m, "52:54:00:") || len(m) != 17 || seen[m] {
			t.Errorf("bad or repeated MAC %s in %v", m, a)
		}
		seen[m] = true
	}
	if c := CloneMACs("web3", 1, nil); c[0] == a[0] {
		t.Errorf("two names, one MAC: %s", c[0])
	}
	// A MAC to avoid (the source's) is never given out.
	avoided := CloneMACs("web2", 1, []string{strings.ToUpper(a[0])})
	if avoided[0] == a[0] {
		t.Errorf("avoided MAC given out: %s", avoided[0])
	}
	if got := CloneVolumeName("web2", "vdb"); got != "web2-vdb.qcow2" {
		t.Errorf("volume name %s", got)
	}
	if got := CloneNVRAMPath("/srv/nvram/web_VARS.fd", "web2"); got != "/srv/nvram/web2_VARS.fd" {
		t.Errorf("nvram path %s", got)
	}
	if got := CloneNVRAMPath("", "web2"); got != "/var/lib/libvirt/qemu/nvram/web2_VARS.fd" {
		t.Errorf("default nvram path %s", got)
	}
}
