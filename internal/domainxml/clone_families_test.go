package domainxml

import (
	"os"
	"slices"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// everyFamilyCloneSource is a source with a part of every family (and a fixed vsock CID,
// a UEFI varstore, a fixed VNC port, two NICs, an SMBIOS system uuid). libvirt 9.0 on the
// test host defined it and its clone side by side (as type qemu with a qemu64 CPU).
const everyFamilyCloneSource = "testdata/clone_source_every_family.xml"

func everyFamilyCloneSpec(name string) CloneSpec {
	s := cloneSpecFor(name)
	s.Disks = append(s.Disks, CloneDisk{Target: "sda", Path: "/pool/" + CloneVolumeName(name, "sda"), Format: "qcow2", Key: "/pool/" + CloneVolumeName(name, "sda")})
	return s
}

// A clone shares nothing unique with its source (a), and keeps everything else (b): with
// what (a) lists blanked in both, the two definitions are the same XML, so a family that
// dropped or changed anything else would show here.
func TestDeriveClone_everyFamily(t *testing.T) {
	b, err := os.ReadFile(everyFamilyCloneSource)
	if err != nil {
		t.Fatal(err)
	}
	src := parseXML(t, string(b))
	s := everyFamilyCloneSpec("web2")
	s.CloudInit.Target = "" // the first free sd target: sdb (the source's cdrom there goes)
	d, err := DeriveClone(src, s)
	if err != nil {
		t.Fatal(err)
	}
	text, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	d = parseXML(t, text) // as libvirt gets it

	// (a) Nothing unique is shared.
	if d.UUID == src.UUID || d.Name == src.Name || d.GenID == nil || d.GenID.Value != "" {
		t.Errorf("name %s, uuid %s, genid %+v", d.Name, d.UUID, d.GenID)
	}
	for i, n := range d.Devices.Interfaces {
		if n.MAC == nil || n.MAC.Address != s.MACs[i] || n.MAC.Address == src.Devices.Interfaces[i].MAC.Address {
			t.Errorf("interface %d: mac %+v (source's %s)", i, n.MAC, src.Devices.Interfaces[i].MAC.Address)
		}
		if n.Target != nil || n.Alias != nil || n.Source.Network != nil && n.Source.Network.PortID != "" {
			t.Errorf("interface %d keeps the source's host port: %+v %+v %+v", i, n.Target, n.Alias, n.Source)
		}
	}
	if vp := d.Devices.Interfaces[1].VirtualPort; vp == nil || vp.Params.OpenVSwitch == nil || vp.Params.OpenVSwitch.InterfaceID != "" {
		t.Errorf("openvswitch interfaceid of the source kept (or the virtualport lost): %+v", vp)
	}
	if v := d.Devices.VSock; v == nil || v.CID == nil || v.CID.Auto != "yes" || v.CID.Address != "" {
		t.Errorf("vsock = %+v, want <cid auto='yes'/>", v)
	}
	if got := NVRAMPath(d); got != s.NVRAM || got == NVRAMPath(src) {
		t.Errorf("nvram = %q, want %q", got, s.NVRAM)
	}
	srcPaths := map[string]bool{}
	for _, x := range src.Devices.Disks {
		srcPaths[diskSourcePath(&x)] = true
	}
	for _, x := range d.Devices.Disks {
		if p := diskSourcePath(&x); srcPaths[p] || p == "" || x.Source.Volume != nil {
			t.Errorf("disk %s: source %+v is the source's (or none)", x.Target.Dev, x.Source)
		}
		if x.Serial != "" || x.WWN != "" || x.BackingStore != nil {
			t.Errorf("disk %s keeps the source's serial, wwn or backing store", x.Target.Dev)
		}
	}
	for _, si := range d.SysInfo {
		if si.SMBIOS != nil && si.SMBIOS.System != nil && slices.ContainsFunc(si.SMBIOS.System.Entry, func(e libvirtxml.DomainSysInfoEntry) bool { return e.Name == "uuid" }) {
			t.Errorf("SMBIOS system uuid kept")
		}
		if si.FWCfg != nil && slices.ContainsFunc(si.FWCfg.Entry, func(e libvirtxml.DomainSysInfoEntry) bool { return e.Name == IgnitionFWCfgName }) {
			t.Errorf("Ignition config kept")
		}
	}
	if g := d.Devices.Graphics[0].VNC; g.Port != -1 || g.AutoPort != "yes" || g.WebSocket != -1 {
		t.Errorf("vnc = %+v, want autoport and a websocket port libvirt picks", g)
	}
	for _, c := range d.Devices.Channels {
		p := c.Source.UNIX.Path
		switch name := c.Target.VirtIO.Name; {
		case c.Source.UNIX.Mode == "connect" && p != "/run/host-service.sock":
			t.Errorf("channel %s: a socket of the host's it connects to changed: %q", name, p)
		case c.Source.UNIX.Mode != "connect" && p != "":
			t.Errorf("channel %s: listening socket %q, want one libvirt places", name, p)
		}
		if c.Alias != nil {
			t.Errorf("channel alias kept: %+v", c.Alias)
		}
	}
	for i, x := range d.Devices.Serials {
		want := []string{"pty", "/var/log/web2-web-serial1.log"}[i]
		if got := hostSide(x.Source); got != want {
			t.Errorf("serial %d: host side %s, want %s", i, got, want)
		}
	}
	for i, x := range d.Devices.Consoles {
		want := []string{"pty", "/run/web/web2-console.sock"}[i]
		if got := hostSide(x.Source); got != want {
			t.Errorf("console %d: host side %s, want %s", i, got, want)
		}
	}
	if l := d.Devices.Consoles[1].Log; l == nil || l.File != "/var/log/web2-web-console.log" {
		t.Errorf("console log %+v", l)
	}
	if d.Devices.Serials[0].Protocol != nil || d.Devices.Consoles[0].Protocol != nil {
		t.Errorf("a pty with a telnet protocol")
	}

	// The seed: the clone's, on the first free sd target.
	seed := d.Devices.Disks[len(d.Devices.Disks)-1]
	if seed.Device != DeviceCDROM || seed.Target.Dev != "sdb" || diskSourcePath(&seed) != s.CloudInit.Path {
		t.Errorf("seed: %+v %+v", seed.Target, seed.Source)
	}
	// The records: libvirt_domain's names the clone's disks and seed, no Ignition, and keeps
	// the rest; the clone's own is there.
	rec, srec := readRecord(d), readRecord(src)
	if len(rec.Disks) != 3 || rec.Disks[0].Path != "/pool/web2-vda.qcow2" || rec.CloudInit == nil || rec.CloudInit.Target != "sdb" ||
		rec.CloudInit.Path != s.CloudInit.Path || rec.Ignition != nil {
		t.Errorf("record: %+v", rec)
	}
	if !slices.Equal(rec.Tags, srec.Tags) || !slices.Equal(rec.DeviceXML, srec.DeviceXML) || rec.VirtiofsMemory == nil {
		t.Errorf("record lost the source's tags, device_xml or virtiofs memory: %+v", rec)
	}
	if m, ok := ParseCloneMeta(d); !ok || m.SourceID != "web" {
		t.Errorf("clone record: %+v", m)
	}
	if !strings.Contains(text, "keep me") {
		t.Error("foreign metadata lost")
	}

	// (b) Everything else is kept.
	a, z := blankUnique(t, src), blankUnique(t, d)
	if a != z {
		t.Errorf("the clone differs from its source in more than what it must not share:\n%s", lineDiff(a, z))
	}
}

func hostSide(src *libvirtxml.DomainChardevSource) string {
	switch {
	case src == nil:
		return "none"
	case src.Pty != nil:
		return "pty"
	case src.UNIX != nil:
		return src.UNIX.Path
	case src.File != nil:
		return src.File.Path
	case src.TCP != nil:
		return "tcp " + src.TCP.Mode + " " + src.TCP.Service
	}
	return "other"
}

// blankUnique is d's XML without what a clone must not share with its source (and the
// metadata, checked by itself).
func blankUnique(t *testing.T, in *libvirtxml.Domain) string {
	t.Helper()
	d, err := clone(in)
	if err != nil {
		t.Fatal(err)
	}
	d.Name, d.UUID, d.GenID, d.Metadata = "", "", nil, nil
	for i := range d.SysInfo {
		if sm := d.SysInfo[i].SMBIOS; sm != nil && sm.System != nil {
			sm.System.Entry = slices.DeleteFunc(sm.System.Entry, func(e libvirtxml.DomainSysInfoEntry) bool { return e.Name == "uuid" })
		}
		if f := d.SysInfo[i].FWCfg; f != nil {
			f.Entry = slices.DeleteFunc(f.Entry, func(e libvirtxml.DomainSysInfoEntry) bool { return e.Name == IgnitionFWCfgName })
		}
	}
	d.OS.NVRam.NVRam = ""
	dev := d.Devices
	dev.Disks = slices.DeleteFunc(dev.Disks, func(x libvirtxml.DomainDisk) bool { return x.Device == DeviceCDROM })
	for i := range dev.Disks {
		x := &dev.Disks[i]
		x.Source, x.Driver.Type, x.BackingStore, x.Serial, x.WWN = nil, "", nil, "", ""
	}
	for i := range dev.Interfaces {
		x := &dev.Interfaces[i]
		x.MAC, x.Target, x.Alias = nil, nil, nil
		if x.Source.Network != nil {
			x.Source.Network.PortID = ""
		}
		if x.VirtualPort != nil {
			x.VirtualPort.Params.OpenVSwitch.InterfaceID = ""
		}
	}
	for i := range dev.Graphics {
		v := dev.Graphics[i].VNC
		v.Port, v.AutoPort, v.WebSocket = 0, "", 0
	}
	dev.VSock.CID = nil
	for i := range dev.Channels {
		if u := dev.Channels[i].Source.UNIX; u.Mode == "bind" {
			u.Path = ""
		}
		dev.Channels[i].Alias = nil
	}
	for i := range dev.Serials {
		dev.Serials[i].Source, dev.Serials[i].Protocol = nil, nil
	}
	for i := range dev.Consoles {
		dev.Consoles[i].Source, dev.Consoles[i].Protocol = nil, nil
		if l := dev.Consoles[i].Log; l != nil {
			l.File = ""
		}
	}
	text, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// lineDiff shows the lines of a and b that differ, side by side.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(x), len(y)); i++ {
		l, r := "", ""
		if i < len(x) {
			l = x[i]
		}
		if i < len(y) {
			r = y[i]
		}
		if l != r {
			out = append(out, "- "+l, "+ "+r)
		}
	}
	return strings.Join(out, "\n")
}

// Each derive hook on its own.
func TestDeriveHooks(t *testing.T) {
	cases := []struct {
		name   string
		f      family
		in     string // <devices> of a source
		want   []string
		absent []string
	}{
		{"vsock fixed", guestDevicesFamily, `<vsock model='virtio'><cid auto='no' address='5'/><address type='pci' domain='0x0000' bus='0x00' slot='0x09' function='0x0'/></vsock>`,
			[]string{`<cid auto="yes"></cid>`, `slot="0x09"`}, []string{`address="5"`}},
		{"vsock auto", guestDevicesFamily, `<vsock model='virtio'><cid auto='yes'/></vsock>`, []string{`<cid auto="yes"></cid>`}, nil},
		{"vsock without cid", guestDevicesFamily, `<vsock model='virtio'/>`, []string{`<vsock model="virtio"></vsock>`}, []string{"cid"}},
		{"vnc", graphicsFamily, `<graphics type='vnc' port='5905' autoport='no' websocket='5705'><listen type='address' address='0.0.0.0'/></graphics>`,
			[]string{`port="-1" autoport="yes" websocket="-1"`, `address="0.0.0.0"`}, []string{"5905", "5705"}},
		{"vnc socket", graphicsFamily, `<graphics type='vnc'><listen type='socket' socket='/run/web-vnc.sock'/></graphics>`,
			[]string{`<listen type="socket"></listen>`}, []string{"web-vnc.sock"}},
		{"vnc autoport", graphicsFamily, `<graphics type='vnc' port='-1' autoport='yes' websocket='-1'/>`, []string{`port="-1" autoport="yes" websocket="-1"`}, nil},
		{"spice", graphicsFamily, `<graphics type='spice' port='5910' tlsPort='5911' autoport='no'/>`,
			[]string{`port="-1" autoport="yes"`}, []string{"5910", "5911"}},
		{"agent channel", agentFamily, `<channel type='unix'><source mode='bind' path='/x/domain-3-web/org.qemu.guest_agent.0'/><target type='virtio' name='org.qemu.guest_agent.0'/><alias name='channel0'/></channel>`,
			[]string{`<source mode="bind"></source>`}, []string{"domain-3-web", "channel0"}},
		{"serial unix bind", chardevFamily, `<serial type='unix'><source mode='bind' path='/run/web/serial.sock'/><target port='0'/><log file='/var/log/serial.log' append='on'/></serial>`,
			[]string{`path="/run/web/web2-serial.sock"`, `file="/var/log/web2-serial.log" append="on"`}, nil},
		{"serial unix connect", chardevFamily, `<serial type='unix'><source mode='connect' path='/run/host.sock'/><target port='0'/></serial>`,
			[]string{`path="/run/host.sock"`}, nil},
		{"serial tcp bind", chardevFamily, `<serial type='tcp'><source mode='bind' host='0.0.0.0' service='4000'/><protocol type='telnet'/><target type='isa-serial' port='0'/></serial>`,
			[]string{`<serial type="pty">`, `<target type="isa-serial" port="0">`}, []string{"4000", "telnet"}},
		{"serial tcp connect", chardevFamily, `<serial type='tcp'><source mode='connect' host='10.0.0.1' service='4000'/><target port='0'/></serial>`,
			[]string{`service="4000"`}, nil},
		{"channel", chardevFamily, `<channel type='unix'><source mode='bind' path='/run/port.sock'/><target type='virtio' name='org.example.0'/><alias name='ua-x'/></channel>`,
			[]string{`<source mode="bind"></source>`}, []string{"port.sock", "ua-x"}},
		{"ovs interfaceid", interfaceFamily, `<interface type='bridge'><mac address='52:54:00:00:00:01'/><source bridge='br'/><virtualport type='openvswitch'><parameters interfaceid='2fbe5dfc-fd50-427d-8274-6dc5757d25ed' profileid='p'/></virtualport><target dev='vnet1'/></interface>`,
			[]string{`<mac address="52:54:00:00:00:99">`, `profileid="p"`}, []string{"2fbe5dfc", "vnet1"}},
		{"midonet interfaceid", interfaceFamily, `<interface type='bridge'><mac address='52:54:00:00:00:01'/><source bridge='br'/><virtualport type='midonet'><parameters interfaceid='2fbe5dfc-fd50-427d-8274-6dc5757d25ed'/></virtualport></interface>`,
			[]string{"2fbe5dfc"}, nil},
		{"tpm state path", tpmFamily, `<tpm model='tpm-crb'><backend type='emulator' version='2.0'><source type='dir' path='/srv/tpm/web'/></backend></tpm>`,
			[]string{`<backend type="emulator" version="2.0"></backend>`}, []string{"/srv/tpm/web"}},
		{"tpm passthrough", tpmFamily, `<tpm model='tpm-tis'><backend type='passthrough'><device path='/dev/tpm0'/></backend></tpm>`,
			[]string{"/dev/tpm0"}, nil},
	}
	for _, c := range cases {
		d := parseXML(t, "<domain type='kvm'><name>web</name><devices>"+c.in+"</devices></domain>")
		s := CloneSpec{Name: "web2", MACs: []string{"52:54:00:00:00:99"}}
		if c.f.derive == nil {
			t.Fatalf("%s: family %s has no derive hook", c.name, c.f.name)
		}
		if err := c.f.derive(d, &s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		text, _ := d.Marshal()
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %s in\n%s", c.name, w, text)
			}
		}
		for _, w := range c.absent {
			if strings.Contains(text, w) {
				t.Errorf("%s: %s kept in\n%s", c.name, w, text)
			}
		}
	}
}

// The smaller platform hooks: sizing, nvram, SMBIOS uuid, Ignition, the record.
func TestDeriveHooks_platform(t *testing.T) {
	d := parseXML(t, cloneSourceXML)
	s := cloneSpecFor("web2")
	s.MemoryMiB = 300
	if err := sizingFamily.derive(d, &s); err != nil || d.Memory.Value != 524288 || d.CurrentMemory.Value != 300*1024 || d.VCPU.Value != 4 || d.VCPU.Current != 1 {
		t.Errorf("sizing: %v %+v %+v %+v", err, d.Memory, d.CurrentMemory, d.VCPU)
	}
	if err := osFamily.derive(d, &s); err != nil || NVRAMPath(d) != s.NVRAM || d.OS.NVRam.Template == "" {
		t.Errorf("nvram: %v %+v", err, d.OS.NVRam)
	}
	bios := parseXML(t, `<domain type='kvm'><name>b</name><os><type>hvm</type></os></domain>`)
	if err := osFamily.derive(bios, &CloneSpec{Name: "b2"}); err != nil || bios.OS.NVRam != nil {
		t.Errorf("bios: %v %+v", err, bios.OS.NVRam)
	}
	if err := smbiosFamily.derive(d, &s); err != nil {
		t.Fatal(err)
	}
	if err := ignitionFamily.derive(d, &s); err != nil {
		t.Fatal(err)
	}
	text, _ := d.Marshal()
	if strings.Contains(text, `name="uuid"`) || strings.Contains(text, "com.coreos") || !strings.Contains(text, "acme") {
		t.Errorf("sysinfo: %s", text)
	}
	s.CloudInit.Target = "sdc"
	if err := recordFamily.derive(d, &s); err != nil {
		t.Fatal(err)
	}
	if rec := readRecord(d); len(rec.Disks) != 2 || rec.Disks[1].Volume != "/pool/web2-vdb.qcow2" || rec.CloudInit.Target != "sdc" {
		t.Errorf("record: %+v", rec)
	}
}
