package domainxml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// escapedKinds counts the devices of d that device_xml adopts (device_xml_adopt.go):
// interfaces the network_interface blocks do not type, the consoles, guest devices and
// TPMs their families do not type, and the kinds no family owns.
func escapedKinds(d *libvirtxml.Domain) int {
	if d.Devices == nil {
		return 0
	}
	l := adoptedKinds(d.Devices)
	l.Controllers = adoptedControllers(d)
	appendDevices(l, untypedDevices(d.Devices))
	appendDevices(l, inexactDevices(d.Devices, readRecord(d)))
	return deviceCount(l)
}

func explicitInputs(d *libvirtxml.Domain) int {
	n := 0
	for _, x := range d.Devices.Inputs {
		if hostInput(x) || !ImplicitInput(Input{Type: x.Type, Bus: x.Bus}) {
			n++
		}
	}
	return n
}

// Every adopt fixture whose devices the families do not all type (user, ethernet, mcast,
// udp, server, vhostuser, hostdev and vdpa NICs; passthrough and evdev inputs; shmem,
// redirdev, smartcard, hub,
// parallel, memory devices, iommu, ...): each such device reads as one escaped
// fragment; an update that writes those fragments keeps every device once (nothing
// lost, nothing doubled); and a new definition built from the read spec with them holds
// each device again, as libvirt printed it less its address.
func TestDeviceXML_adoptFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(adoptDir, "*.libvirt.xml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := UnmarshalDomain(string(b))
		if err != nil {
			t.Fatal(err)
		}
		want := escapedKinds(d)
		if want == 0 {
			continue
		}
		seen++
		name := filepath.Base(file)
		p, err := fromDomain(d, true) // as ParseForImport
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Escaped) != want {
			t.Errorf("%s: %d escaped fragments for %d devices no family types: %q", name, len(p.Escaped), want, p.Escaped)
			continue
		}
		for _, f := range p.Escaped {
			if _, err := ParseDeviceFragment(f); err != nil {
				t.Errorf("%s: escaped fragment %s is not one device_xml accepts: %v", name, f, err)
			}
			if strings.Contains(f, `<address type="pci"`) && !strings.HasPrefix(f, "<hostdev") && !strings.Contains(f, `type="hostdev"`) &&
				!strings.HasPrefix(f, `<disk type="nvme"`) { // a source's PCI address (hostdev, nvme) is the host's
				t.Errorf("%s: escaped fragment keeps its PCI address: %s", name, f)
			}
			if strings.Contains(f, "<address") && !strings.Contains(f, `<address type="pci"`) && !strings.HasPrefix(f, "<hostdev") &&
				!strings.Contains(f, `type="hostdev"`) && !strings.Contains(f, `<address type="drive"`) && !strings.HasPrefix(f, `<disk type="nvme"`) &&
				!strings.Contains(f, `<address type="usb"`) && !strings.Contains(f, `<address type="isa"`) { // drive (userDriveAddress), USB and ISA addresses stay
				t.Errorf("%s: escaped fragment keeps its address: %s", name, f)
			}
		}
		// The update after an import: the configuration writes the fragments; every device
		// stays, once.
		s := p.Spec
		s.DeviceXML = append(s.DeviceXML, p.Escaped...)
		s.DeviceXMLDrop = nil
		next, err := Build(d, s)
		if err != nil {
			t.Logf("%s: the read spec does not build onto its own definition (a typed family refuses it): %v", name, err)
			continue
		}
		if got := len(next.Devices.Interfaces); got != len(d.Devices.Interfaces) {
			t.Errorf("%s: update: %d interfaces, the definition had %d", name, got, len(d.Devices.Interfaces))
		}
		// libvirt adds the implicit ps2 mouse and keyboard back itself.
		if got, had := explicitInputs(next), explicitInputs(d); got != had {
			t.Errorf("%s: update: %d inputs, the definition had %d (libvirt's implicit ones aside)", name, got, had)
		}
		if got := escapedKinds(next); got != want {
			t.Errorf("%s: update: %d devices device_xml holds, the definition had %d", name, got, want)
		}
		// A recreate from the configuration holds each escaped device again.
		fresh, err := Build(nil, s)
		if err != nil {
			t.Logf("%s: the read spec does not build alone: %v", name, err)
			continue
		}
		devices, err := devicesNode(fresh.Devices)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Escaped {
			n, _ := ParseDeviceFragment(f)
			if n != nil && !devices.take(n) {
				t.Errorf("%s: recreate: %s is not in the new definition", name, f)
			}
		}
	}
	if seen < 20 {
		t.Errorf("only %d fixtures have devices device_xml adopts; the fixtures changed?", seen)
	}
}

// A fragment the block says exactly stays refused, naming the block to use; an untyped
// NIC, one the block cannot say exactly and a device no family owns are accepted.
func TestDeviceXML_escapableForms(t *testing.T) {
	for frag, ok := range map[string]bool{
		`<interface type="user"><mac address="52:54:00:aa:bb:cc"/><model type="virtio"/></interface>`:    true,
		`<interface type="ethernet"><target dev="tap7" managed="no"/><model type="virtio"/></interface>`: true,
		`<interface type="network"><source network="default"/><model type="virtio"/></interface>`:        false,
		`<interface type="bridge"><source bridge="br0"/><model type="e1000"/></interface>`:               false,
		// No model: libvirt's default, not the block's (virtio); the block cannot say it.
		`<interface type="network"><source network="default"/></interface>`:            true,
		`<shmem name="s"><model type="ivshmem-plain"/><size unit="M">4</size></shmem>`: true,
	} {
		_, err := ParseDeviceFragment(frag)
		if (err == nil) != ok {
			t.Errorf("%s: error %v, want accepted %v", frag, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "network_interface") {
			t.Errorf("%s: %v does not name network_interface", frag, err)
		}
	}
	// Removing an adopted fragment from the configuration removes its device.
	base, err := Build(nil, Spec{Name: "d", VCPU: 1, MemoryKiB: 65536, Type: "qemu", Graphics: Graphics{Type: GraphicsNone}})
	if err != nil {
		t.Fatal(err)
	}
	user := `<interface type="user"><mac address="52:54:00:aa:bb:cc"/><model type="virtio"/></interface>`
	base.Devices.Interfaces = append(base.Devices.Interfaces, libvirtxml.DomainInterface{
		MAC: &libvirtxml.DomainInterfaceMAC{Address: "52:54:00:aa:bb:cc"}, Model: &libvirtxml.DomainInterfaceModel{Type: "virtio"},
		Source: &libvirtxml.DomainInterfaceSource{User: &libvirtxml.DomainInterfaceSourceUser{}}})
	kept, err := Build(base, Spec{Name: "d", VCPU: 1, MemoryKiB: 65536, Type: "qemu", Graphics: Graphics{Type: GraphicsNone}})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept.Devices.Interfaces) != 1 {
		t.Errorf("a user NIC made outside Terraform is gone after an update: %+v", kept.Devices.Interfaces)
	}
	gone, err := Build(base, Spec{Name: "d", VCPU: 1, MemoryKiB: 65536, Type: "qemu", Graphics: Graphics{Type: GraphicsNone},
		DeviceXMLDrop: []string{user}})
	if err != nil {
		t.Fatal(err)
	}
	if len(gone.Devices.Interfaces) != 0 {
		t.Errorf("a user NIC the configuration dropped is still there: %+v", gone.Devices.Interfaces)
	}
}
