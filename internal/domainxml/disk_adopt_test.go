package domainxml

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// Adopting disks (issue #25): a disk the disk blocks say exactly reads typed and builds
// back the same; any other escapes whole into device_xml (typedDisk): parse skips it, an
// update keeps it once, a definition built from nothing with the fragment has it again.

// adoptDomain is a domain whose devices are a root disk and disks.
func adoptDomain(t *testing.T, disks ...string) *libvirtxml.Domain {
	t.Helper()
	text := `<domain type="qemu"><name>a</name><memory unit="KiB">131072</memory><vcpu>1</vcpu>
<os><type arch="x86_64" machine="pc">hvm</type></os><devices>
<disk type="file" device="disk"><driver name="qemu" type="qcow2"/><source file="/pool/root.qcow2"/><target dev="vda" bus="virtio"/></disk>` +
		strings.Join(disks, "") + `</devices></domain>`
	d, err := UnmarshalDomain(text)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// adoptEscaped checks that disk escapes: the import reads the root disk only and one
// fragment; the update keeps the disk once, a recreate has it again; the fragment holds
// every word of wants.
func adoptEscaped(t *testing.T, disk string, wants ...string) {
	t.Helper()
	d := adoptDomain(t, disk)
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Disks) != 1 || p.Spec.Disks[0].Target != "vda" {
		t.Fatalf("typed disks %+v, want the root disk only", p.Spec.Disks)
	}
	if len(p.Escaped) != 1 || !strings.HasPrefix(p.Escaped[0], "<disk") {
		t.Fatalf("escaped %q, want the disk", p.Escaped)
	}
	frag := p.Escaped[0]
	for _, w := range wants {
		if !strings.Contains(frag, w) {
			t.Errorf("the fragment has no %s: %s", w, frag)
		}
	}
	if _, err := ParseDeviceFragment(frag); err != nil {
		t.Fatalf("device_xml refuses the escaped disk: %v", err)
	}
	s := p.Spec
	s.DeviceXML = append(s.DeviceXML, p.Escaped...)
	for name, base := range map[string]*libvirtxml.Domain{"update": d, "recreate": nil} {
		out, err := Build(base, s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(out.Devices.Disks) != 2 {
			t.Fatalf("%s: %d disks, want 2", name, len(out.Devices.Disks))
		}
		devices, err := devicesNode(out.Devices)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := ParseDeviceFragment(frag)
		if !devices.take(n) {
			t.Errorf("%s: the disk is not in the definition:\n%s", name, frag)
		}
		if out.OS.BootDevices != nil && strings.Contains(frag, "<boot ") {
			t.Errorf("%s: <os><boot> beside a disk's boot order", name)
		}
	}
}

// adoptTyped checks that disk reads typed (what check says of it) and builds back the
// same disk from nothing (but for its address, libvirt's), without a fragment.
func adoptTyped(t *testing.T, disk string, check func(Disk) bool) {
	t.Helper()
	d := adoptDomain(t, disk)
	p, err := FromDomain(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Escaped) != 0 || len(p.Spec.Disks) != 2 {
		t.Fatalf("escaped %q, typed %+v: want both disks typed", p.Escaped, p.Spec.Disks)
	}
	if !check(p.Spec.Disks[1]) {
		t.Errorf("read %+v", p.Spec.Disks[1])
	}
	out, err := Build(nil, p.Spec)
	if err != nil {
		t.Fatalf("recreate: %v", err)
	}
	want, got := d.Devices.Disks[1], out.Devices.Disks[1]
	want.Address = nil // a drive address libvirt gives the target again
	a, _ := want.Marshal()
	b, _ := got.Marshal()
	if a != b {
		t.Errorf("recreate:\n got %s\nwant %s", b, a)
	}
}

func TestDiskAdopt_gluster(t *testing.T) {
	adoptEscaped(t, `<disk type="network" device="disk"><driver name="qemu" type="raw"/>
<source protocol="gluster" name="vol/img.raw"><host name="gl1" port="24007"/><host transport="unix" socket="/run/gl.sock"/></source>
<target dev="vdb" bus="virtio"/></disk>`, `protocol="gluster"`, `socket="/run/gl.sock"`)
}

func TestDiskAdopt_sheepdog(t *testing.T) {
	adoptEscaped(t, `<disk type="network" device="disk"><driver name="qemu" type="raw"/>
<source protocol="sheepdog" name="img"><host name="sd1" port="7000"/></source><target dev="vdb" bus="virtio"/></disk>`, `protocol="sheepdog"`)
}

func TestDiskAdopt_rbdWithoutHosts(t *testing.T) {
	adoptTyped(t, `<disk type="network" device="disk"><driver name="qemu" type="raw"/><source protocol="rbd" name="pool/img"></source>`+
		`<target dev="vdb" bus="virtio"></target></disk>`,
		func(d Disk) bool {
			return d.Network != nil && d.Network.Protocol == ProtocolRBD && len(d.Network.Hosts) == 0
		})
}

// Auth by usage reads typed (the provider resolves it to the secret's UUID, secret_id);
// the pure build keeps the usage.
func TestDiskAdopt_authByUsage(t *testing.T) {
	adoptTyped(t, `<disk type="network" device="disk"><driver name="qemu" type="raw"></driver><source protocol="rbd" name="pool/img">`+
		`<host name="mon1"></host><auth username="libvirt"><secret type="ceph" usage="client.libvirt secret"></secret></auth></source>`+
		`<target dev="vdb" bus="virtio"></target></disk>`,
		func(d Disk) bool {
			return d.Network.Auth != nil && d.Network.Auth.SecretUsage == "client.libvirt secret"
		})
	// Beside <source>, as older definitions have it: an update keeps it there.
	d := adoptDomain(t, `<disk type="network" device="disk"><driver name="qemu" type="raw"/><auth username="libvirt">
<secret type="ceph" usage="client.libvirt secret"/></auth><source protocol="rbd" name="pool/img"><host name="mon1"/></source>
<target dev="vdb" bus="virtio"/></disk>`)
	p, _ := FromDomain(d)
	if len(p.Escaped) != 0 || len(p.Spec.Disks) != 2 {
		t.Fatalf("escaped %q", p.Escaped)
	}
	out, err := Build(d, p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if x := out.Devices.Disks[1]; x.Auth == nil || x.Source.Network.Auth != nil || x.Auth.Secret.Usage != "client.libvirt secret" {
		t.Errorf("the auth moved: beside %+v, in source %+v", x.Auth, x.Source.Network.Auth)
	}
	// A secret of another usage type than the protocol's is not one auth types.
	adoptEscaped(t, `<disk type="network" device="disk"><driver name="qemu" type="raw"/><source protocol="rbd" name="pool/img">
<host name="mon1"/><auth username="u"><secret type="iscsi" usage="x"/></auth></source><target dev="vdb" bus="virtio"/></disk>`, `type="iscsi"`)
}

func TestDiskAdopt_iscsiLUN(t *testing.T) {
	adoptTyped(t, `<disk type="network" device="lun"><driver name="qemu" type="raw"></driver>`+
		`<source protocol="iscsi" name="iqn.2013-07.com.example:iscsi-nopool/1"><host name="san.example.org" port="3260"></host></source>`+
		`<target dev="sda" bus="scsi"></target></disk>`,
		func(d Disk) bool { return d.Device == DeviceLUN && isISCSI(d.Network) })
	// With an initiator IQN the blocks do not have: escaped.
	adoptEscaped(t, `<disk type="network" device="lun"><driver name="qemu" type="raw"/>
<source protocol="iscsi" name="iqn.2013-07.com.example:t/1"><host name="san"/><initiator><iqn name="iqn.2013-07.com.example:client"/></initiator></source>
<target dev="sda" bus="scsi"/></disk>`, "<initiator>")
}

func TestDiskAdopt_nbdUnixSocket(t *testing.T) {
	adoptEscaped(t, `<disk type="network" device="disk"><driver name="qemu" type="raw"/>
<source protocol="nbd" name="bar"><host transport="unix" socket="/var/run/nbdsock"/></source><target dev="vdb" bus="virtio"/></disk>`,
		`transport="unix"`, `socket="/var/run/nbdsock"`)
}

func TestDiskAdopt_nvme(t *testing.T) {
	adoptEscaped(t, `<disk type="nvme" device="disk"><driver name="qemu" type="raw"/>
<source type="pci" managed="yes" namespace="1"><address domain="0x0000" bus="0x01" slot="0x00" function="0x0"/></source>
<target dev="vdb" bus="virtio"/></disk>`, `type="nvme"`, `namespace="1"`, `bus="0x01"`)
}

func TestDiskAdopt_vhostUser(t *testing.T) {
	adoptEscaped(t, `<disk type="vhostuser" device="disk" snapshot="no"><driver name="qemu" type="raw"/>
<source type="unix" path="/tmp/vhost-blk.sock"><reconnect enabled="yes" timeout="10"/></source>
<target dev="vdb" bus="virtio"/></disk>`, `type="vhostuser"`, `<reconnect`)
}

func TestDiskAdopt_sslVerify(t *testing.T) {
	adoptEscaped(t, `<disk type="network" device="cdrom"><driver name="qemu" type="raw"/>
<source protocol="https" name="/images/x.iso"><host name="images.example.org" port="443"/><ssl verify="no"/></source>
<target dev="sdb" bus="sata"/><readonly/></disk>`, `<ssl verify="no">`)
}

func TestDiskAdopt_reservations(t *testing.T) {
	adoptEscaped(t, `<disk type="block" device="lun"><driver name="qemu" type="raw"/>
<source dev="/dev/mapper/m"><reservations managed="no"><source type="unix" path="/run/pr-helper0.sock" mode="client"/></reservations></source>
<target dev="sda" bus="scsi"/></disk>`, `<reservations managed="no">`)
}

// libvirt takes a serial of any length (a virtio-blk guest sees 20 characters).
func TestDiskAdopt_serial21(t *testing.T) {
	adoptTyped(t, `<disk type="file" device="disk"><driver name="qemu" type="raw"></driver><source file="/pool/d.raw"></source>`+
		`<target dev="vdb" bus="virtio"></target><serial>ABCDEFGHIJ0123456789K</serial></disk>`,
		func(d Disk) bool { return d.Serial == "ABCDEFGHIJ0123456789K" })
}

// libvirt takes detect_zeroes unmap with any discard (it then acts as on).
func TestDiskAdopt_detectZeroesUnmapDiscardIgnore(t *testing.T) {
	adoptTyped(t, `<disk type="file" device="disk"><driver name="qemu" type="raw" discard="ignore" detect_zeroes="unmap"></driver>`+
		`<source file="/pool/d.raw"></source><target dev="vdb" bus="virtio"></target></disk>`,
		func(d Disk) bool { return d.Discard == "ignore" && d.DetectZeroes == "unmap" })
}

func TestDiskAdopt_volumeAndDirSources(t *testing.T) {
	adoptEscaped(t, `<disk type="volume" device="disk"><driver name="qemu" type="qcow2"/><source pool="default" volume="v.qcow2"/>
<target dev="vdb" bus="virtio"/></disk>`, `pool="default"`)
	adoptEscaped(t, `<disk type="dir" device="disk"><driver name="qemu" type="fat"/><source dir="/srv/share"/>
<target dev="hdb" bus="ide"/><readonly/></disk>`, `dir="/srv/share"`)
}

// Floppies and empty cdrom trays were kept on update but lost on a recreate: they escape.
func TestDiskAdopt_floppyAndEmptyTray(t *testing.T) {
	adoptEscaped(t, `<disk type="file" device="floppy"><driver name="qemu" type="raw"/><source file="/pool/f.img"/>
<target dev="fda" bus="fdc"/></disk>`, `device="floppy"`)
	adoptEscaped(t, `<disk type="file" device="cdrom"><driver name="qemu" type="raw"/><target dev="sda" bus="sata"/><readonly/></disk>`,
		`device="cdrom"`)
	adoptEscaped(t, `<disk type="file" device="cdrom"><driver name="qemu" type="raw"/><source file="/pool/x.iso"/>
<target dev="sdb" bus="sata" tray="open"/><readonly/></disk>`, `tray="open"`)
}

// A drive address libvirt would give the target anyway is libvirt's; another is the
// user's: the disk escapes with it.
func TestDiskAdopt_driveAddress(t *testing.T) {
	adoptTyped(t, `<disk type="file" device="disk"><driver name="qemu" type="raw"></driver><source file="/pool/d.raw"></source>`+
		`<target dev="hdc" bus="ide"></target><address type="drive" controller="0" bus="1" target="0" unit="0"></address></disk>`,
		func(d Disk) bool { return d.Target == "hdc" })
	adoptEscaped(t, `<disk type="file" device="disk"><driver name="qemu" type="qcow2"/><source file="/pool/d.qcow2"/>
<target dev="sda" bus="scsi"/><address type="drive" controller="0" bus="0" target="0" unit="1"/></disk>`, `unit="1"`)
}

// An escaped disk that boots: no <os><boot dev> beside it.
func TestDiskAdopt_bootOrder(t *testing.T) {
	adoptEscaped(t, `<disk type="volume" device="disk"><driver name="qemu" type="qcow2"/><source pool="default" volume="v.qcow2"/>
<target dev="vdb" bus="virtio"/><boot order="1"/></disk>`, `<boot order="1">`)
}

// The cloud-init seed and typed disks without a target take targets a device_xml disk
// does not hold; an escaped SCSI disk gets its virtio-scsi controller.
func TestDiskAdopt_targetsBesideFragments(t *testing.T) {
	frag := `<disk type="volume" device="disk"><driver name="qemu" type="qcow2"></driver><source pool="p" volume="v"></source>` +
		`<target dev="sda" bus="scsi"></target></disk>`
	s := netSpec(Disk{Path: "/pool/a.qcow2"}, Disk{Path: "/pool/b.raw", Device: DeviceCDROM})
	s.DeviceXML = []string{frag, `<disk type="volume" device="disk"><driver name="qemu" type="qcow2"></driver>` +
		`<source pool="p" volume="w"></source><target dev="vda" bus="virtio"></target></disk>`}
	s.CloudInit = &CloudInit{ID: "seed", Path: "/pool/seed.iso"}
	d, _ := build(t, nil, s)
	targets := map[string]int{}
	for _, x := range d.Devices.Disks {
		targets[x.Target.Dev]++
	}
	want := map[string]int{"vda": 1, "vdb": 1, "sda": 1, "sdb": 1, "sdc": 1}
	if len(targets) != len(want) {
		t.Errorf("targets %v, want %v", targets, want)
	}
	for k, v := range want {
		if targets[k] != v {
			t.Errorf("targets %v, want %v", targets, want)
		}
	}
	scsi := false
	for _, c := range d.Devices.Controllers {
		scsi = scsi || c.Type == "scsi" && c.Model == "virtio-scsi"
	}
	if !scsi {
		t.Errorf("no virtio-scsi controller for the device_xml SCSI disk: %+v", d.Devices.Controllers)
	}
	s.Disks[0].Target = "sda"
	if _, err := Build(nil, withDiskDefaults(s)); err == nil || !strings.Contains(err.Error(), "used twice") {
		t.Errorf("a typed disk on a device_xml disk's target: %v", err)
	}
}

// A hot-plugged disk's XML is that disk's, not the first disk the definition keeps.
func TestDiskAdopt_hotplugBesideFloppy(t *testing.T) {
	cur := adoptDomain(t, `<disk type="file" device="floppy"><driver name="qemu" type="raw"/><source file="/pool/f.img"/><target dev="fda" bus="fdc"/></disk>`)
	text := diskXML(cur, Disk{Path: "/pool/n.raw", Device: DeviceDisk, Bus: "virtio", Target: "vdb", Format: "raw"})
	if !strings.Contains(text, `dev="vdb"`) {
		t.Errorf("the attach XML is another disk's: %s", text)
	}
}

// A disk the provider writes stays typed: after a snapshot (its overlay's chain), on a
// running domain (libvirt's detected chain, numbered), encrypted, with iotune burst
// lengths libvirt wrote.
func TestDiskAdopt_providerDisksStayTyped(t *testing.T) {
	for _, disk := range []string{
		`<disk type="file" device="disk"><driver name="qemu" type="qcow2"/><source file="/pool/b.qcow2.tfsnap-s1"/>
<backingStore type="file"><format type="qcow2"/><source file="/pool/b.qcow2"/></backingStore><target dev="vdb" bus="virtio"/></disk>`,
		`<disk type="file" device="disk"><driver name="qemu" type="qcow2"/><source file="/pool/b.qcow2" index="2"/>
<backingStore type="file" index="3"><format type="qcow2"/><source file="/pool/base.qcow2"/><backingStore/></backingStore><target dev="vdb" bus="virtio"/></disk>`,
		`<disk type="file" device="disk"><driver name="qemu" type="raw"/><source file="/pool/l.raw"><encryption format="luks" engine="qemu">
<secret type="passphrase" uuid="ac979fbe-fa18-40bd-b095-2d3b746edad6"/></encryption></source><target dev="vdb" bus="virtio"/></disk>`,
		`<disk type="file" device="disk"><driver name="qemu" type="raw"/><source file="/pool/l.raw"/><target dev="vdb" bus="virtio"/>
<iotune><total_iops_sec>10</total_iops_sec><total_iops_sec_max>20</total_iops_sec_max><total_iops_sec_max_length>1</total_iops_sec_max_length></iotune>
<alias name="virtio-disk1"/><address type="pci" domain="0x0000" bus="0x00" slot="0x05" function="0x0"/></disk>`,
	} {
		x := adoptDomain(t, disk).Devices.Disks[1]
		if r := untypedReason(&x); r != "" {
			t.Errorf("untyped (%s): %s", r, disk)
		}
	}
}

// device_xml takes a disk only in a form the disk blocks cannot say.
func TestDiskAdopt_deviceXMLTakesUntypedDisksOnly(t *testing.T) {
	for frag, ok := range map[string]bool{
		`<disk type="file" device="disk"><driver name="qemu" type="raw"/><source file="/pool/d.raw"/><target dev="vdb" bus="virtio"/></disk>`:                       false,
		`<disk type="file" device="cdrom"><driver name="qemu" type="raw"/><source file="/pool/x.iso"/><target dev="sdb" bus="sata"/><readonly/></disk>`:             false,
		`<disk type="file" device="floppy"><driver name="qemu" type="raw"/><target dev="fda" bus="fdc"/></disk>`:                                                    true,
		`<disk type="file" device="disk"><driver name="qemu" type="raw" error_policy="report"/><source file="/pool/d.raw"/><target dev="vdb" bus="virtio"/></disk>`: true,
	} {
		_, err := ParseDeviceFragment(frag)
		if (err == nil) != ok {
			t.Errorf("%s: error %v, want accepted %v", frag, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "managed by disk") {
			t.Errorf("%s: %v does not name the disk blocks", frag, err)
		}
	}
}
