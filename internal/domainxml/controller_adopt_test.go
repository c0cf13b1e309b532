package domainxml

import (
	"strings"
	"testing"
)

// Controllers an import escapes into device_xml: what libvirt would not add by itself in
// the same form. The plain ones (PCI root, the machine's USB controller, root ports that
// devices sit behind, the disk family's plain virtio-scsi) stay out.
func TestAdoptedControllers(t *testing.T) {
	cases := []struct {
		name, machine, controllers string
		want                       []string // model or type of each escaped controller
	}{
		{"pc defaults", "pc-i440fx-7.2", `<controller type='usb' index='0' model='piix3-uhci'/><controller type='pci' index='0' model='pci-root'/>`, nil},
		{"q35 usb default", "pc-q35-7.2", `<controller type='usb' index='0' model='qemu-xhci'/><controller type='sata' index='0'/>`, nil},
		{"usb none", "pc-i440fx-7.2", `<controller type='usb' index='0' model='none'/>`, []string{"none"}},
		{"xhci with ports", "pc-q35-7.2", `<controller type='usb' index='0' model='qemu-xhci' ports='15'/>`, []string{"qemu-xhci"}},
		{"q35 default on pc", "pc-i440fx-7.2", `<controller type='usb' index='0' model='qemu-xhci'/>`, []string{"qemu-xhci"}},
		{"virtio-scsi plain", "pc-q35-7.2", `<controller type='scsi' index='0' model='virtio-scsi'/>`, nil},
		{"virtio-scsi queues", "pc-q35-7.2", `<controller type='scsi' index='0' model='virtio-scsi'><driver queues='4'/></controller>`, []string{"virtio-scsi"}},
		{"lsilogic for SCSI disks", "pc-i440fx-7.2", `<controller type='scsi' index='0' model='lsilogic'/><disk type='file'><target dev='sda' bus='scsi'/></disk>`, []string{"lsilogic"}},
		{"lsilogic, no SCSI device", "pc-i440fx-7.2", `<controller type='scsi' index='0' model='lsilogic'/>`, []string{"lsilogic"}},
		{"lsilogic for a SCSI hostdev", "pc-i440fx-7.2", `<controller type='scsi' index='0' model='lsilogic'/>
			<hostdev mode='subsystem' type='scsi'><source><adapter name='scsi_host0'/><address bus='0' target='0' unit='0'/></source></hostdev>`, nil},
		{"second virtio-serial", "pc-i440fx-7.2", `<controller type='virtio-serial' index='1'/>`, []string{"virtio-serial"}},
		{"root ports all in use (libvirt would add a spare: written)", "pc-q35-7.2", `<controller type='pci' index='1' model='pcie-root-port'><model name='pcie-root-port'/><target chassis='1' port='0x10'/></controller>
			<interface type='network'><source network='default'/><address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x0'/></interface>`, []string{"pcie-root-port"}},
		{"libvirt's one spare root port", "pc-q35-7.2", `<controller type='pci' index='1' model='pcie-root-port'><target chassis='1' port='0x10'/></controller>
			<controller type='pci' index='2' model='pcie-root-port'><target chassis='2' port='0x11'/></controller>
			<interface type='network'><source network='default'/><address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x0'/></interface>`, nil},
		{"spare root ports", "pc-q35-7.2", `<controller type='pci' index='1' model='pcie-root-port'><target chassis='1' port='0x10'/></controller>
			<controller type='pci' index='2' model='pcie-root-port'><target chassis='2' port='0x11'/></controller>
			<controller type='pci' index='3' model='pcie-root-port'><target chassis='3' port='0x12'/></controller>
			<interface type='network'><source network='default'/><address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x0'/></interface>`,
			[]string{"pcie-root-port", "pcie-root-port", "pcie-root-port"}},
	}
	for _, c := range cases {
		d, err := UnmarshalDomain(`<domain type='qemu'><name>c</name><os><type machine='` + c.machine + `'>hvm</type></os><devices>` + c.controllers + `</devices></domain>`)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range adoptedControllers(d) {
			got = append(got, strings.TrimSpace(x.Model+" "+map[bool]string{true: x.Type}[x.Model == ""]))
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: escaped %q, want %q", c.name, got, c.want)
		}
	}
}

// A fragment controller takes the place of the plain one the disk family adds for a SCSI
// disk (libvirt refuses two controllers of one type and index); USB companions that
// share index 0 all stay.
func TestDeviceXMLControllerReplaces(t *testing.T) {
	s := Spec{Name: "c", VCPU: 1, MemoryKiB: 65536, Type: "qemu", Graphics: Graphics{Type: GraphicsNone},
		Disks: []Disk{{Path: "/var/lib/x.qcow2", Format: "qcow2", Bus: "scsi", Target: "sda", Device: DeviceDisk}},
		DeviceXML: []string{`<controller type="scsi" index="0" model="virtio-scsi"><driver queues="4"></driver></controller>`,
			`<controller type="usb" index="0" model="ich9-ehci1"></controller>`,
			`<controller type="usb" index="0" model="ich9-uhci1"><master startport="0"></master></controller>`}}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	var scsi, usb int
	for _, c := range d.Devices.Controllers {
		switch c.Type {
		case "scsi":
			scsi++
			if c.Driver == nil || c.Driver.Queues == nil || *c.Driver.Queues != 4 {
				t.Errorf("the scsi controller is not the fragment's: %+v", c)
			}
		case "usb":
			usb++
		}
	}
	if scsi != 1 || usb != 2 {
		t.Errorf("%d scsi controllers (want 1), %d usb (want 2)", scsi, usb)
	}
}
