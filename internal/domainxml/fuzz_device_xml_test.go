package domainxml

import (
	"slices"
	"testing"
)

// FuzzDeviceFragment: any text given as a device_xml fragment is either refused, or is
// one device element no family types (never <emulator>; an element of a family's kind
// only in a form that family does not type, which it then does not read as its own), that
// a definition the provider builds holds and reads back exactly as written (so an
// accepted fragment plans clean).
func FuzzDeviceFragment(f *testing.F) {
	for _, seed := range []string{
		`<shmem name="ivshmem0"><model type="ivshmem-plain"/><size unit="M">4</size></shmem>`,
		`<iommu model="intel"/>`,
		`<parallel type="pty"/>`,
		`<redirdev bus="usb" type="spicevmc"/>`,
		`<controller type="usb" model="qemu-xhci"/>`,
		`<interface type="user"><model type="virtio"/></interface>`,
		`<emulator>/usr/bin/qemu-system-x86_64</emulator>`,
		`<serial type="pty"/>`,
		`<console type="pty"><target type="virtio"/></console>`,
		`<shmem name="a"/><shmem name="b"/>`,
		`<!-- c --><iommu model="intel"/>`,
		`<?xml version="1.0"?><iommu model="intel"/>`,
		`<cpu mode="host-model"/>`,
		`text`,
		``,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, frag string) {
		n, err := ParseDeviceFragment(frag)
		if err != nil {
			return
		}
		name := n.XMLName.Local
		if name == "emulator" {
			t.Fatalf("accepted <%s>, which is refused in device_xml: %q", name, frag)
		}
		if _, owned := familyElements[name]; owned {
			probe, err := nodesToDevices([]xmlNode{*n})
			if err != nil || !escapableElement(probe) {
				t.Fatalf("accepted <%s> in a form its family types: %q", name, frag)
			}
		}
		s := Spec{Name: "d", VCPU: 1, MemoryKiB: 64 * KiBPerMiB, Type: "qemu", Graphics: Graphics{Type: GraphicsNone}, DeviceXML: []string{frag}}
		d, err := Build(nil, s)
		if err != nil {
			t.Fatalf("accepted %q, but a definition with it does not build: %v", frag, err)
		}
		text, err := d.Marshal()
		if err != nil {
			t.Fatalf("accepted %q, but its definition does not marshal: %v", frag, err)
		}
		p, err := Parse(text)
		if err != nil {
			t.Fatalf("accepted %q, but its definition does not parse: %v", frag, err)
		}
		if !slices.Equal(p.Spec.DeviceXML, []string{frag}) {
			t.Fatalf("accepted %q, but the definition reads back device_xml %q", frag, p.Spec.DeviceXML)
		}
		if len(p.Spec.Interfaces) > 0 || len(p.Escaped) > 0 {
			t.Fatalf("accepted %q, but a family reads it too (interfaces %+v) or it reads as escaped %q", frag, p.Spec.Interfaces, p.Escaped)
		}
	})
}
