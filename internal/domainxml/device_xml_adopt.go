package domainxml

import (
	"reflect"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Adoption through device_xml: a device the typed families cannot say goes whole into
// device_xml, so that importing a domain built elsewhere loses none of its devices, an
// update keeps them, and the generated configuration recreates them.
//
// Two kinds of devices escape:
//   - elements of a kind a family owns but in a form it does not type (escapable): an
//     <interface> that is not on a libvirt network, a bridge or a host link (user,
//     ethernet, mcast, udp, server, client, vhostuser, hostdev, vdpa, ...), an <input>
//     that passes a host device through (evdev, passthrough);
//   - elements of a kind no family owns and libvirt never adds by itself (adoptedKinds).
//     The emulator and the <audio> backend are left out: libvirt adds them to any
//     definition, and an update keeps them as they are;
//   - controllers libvirt would not add by itself in the same form (controller_adopt.go).
//
// Such a fragment is the element as libvirt printed it without its <address> (libvirt
// assigns one again) and without blank text.

// untypedDevices are the devices of l that the families owning them cannot say exactly
// (their untyped hooks), one list in libvirt's order.
func untypedDevices(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	out := &libvirtxml.DomainDeviceList{}
	for _, f := range untypedFamilies {
		if f.untyped == nil {
			continue
		}
		if u := f.untyped(l); u != nil {
			appendDevices(out, u)
		}
	}
	return out
}

// untypedFamilies is families, set at init: the device_xml family's validation reaches
// untypedDevices, and a direct reference would make families refer to itself.
var untypedFamilies []family

func init() { untypedFamilies = families }

// appendDevices appends every device list of src to dst's, and sets dst's single
// devices (a memballoon, a vsock) that src has and dst has not.
func appendDevices(dst, src *libvirtxml.DomainDeviceList) {
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range dv.NumField() {
		f := dv.Field(i)
		switch {
		case f.Kind() == reflect.Slice && sv.Field(i).Len() > 0:
			f.Set(reflect.AppendSlice(f, sv.Field(i)))
		case f.Kind() == reflect.Pointer && f.IsNil() && !sv.Field(i).IsNil():
			f.Set(sv.Field(i))
		}
	}
}

// escapableElement says whether one device (alone in probe, an element some family owns)
// is in a form its family does not type, so that device_xml may hold it.
func escapableElement(probe *libvirtxml.DomainDeviceList) bool {
	u := untypedDevices(probe)
	appendDevices(u, inexactDevices(probe, &record{}))
	return !reflect.DeepEqual(*u, libvirtxml.DomainDeviceList{})
}

// untypedInterfaces: the interface family's untyped hook.
func untypedInterfaces(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Interfaces {
		if !typedInterface(&x) {
			out.Interfaces = append(out.Interfaces, x)
		}
	}
	return &out
}

// untypedInputs: the inputs the guest devices family's untyped hook returns (passing a
// host device through, or with more than a type and a bus: typedInput).
func untypedInputs(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Inputs {
		if !typedInput(x) {
			out.Inputs = append(out.Inputs, x)
		}
	}
	return &out
}

// typedInterface says whether the network_interface blocks can say x: a NIC on a libvirt
// network, a host bridge or a host link (macvtap).
func typedInterface(x *libvirtxml.DomainInterface) bool {
	s := x.Source
	return s != nil && (s.Network != nil || s.Bridge != nil || s.Direct != nil)
}

// adoptedKinds are the device lists no family owns whose elements import writes into
// device_xml: libvirt adds none of them by itself.
func adoptedKinds(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	return &libvirtxml.DomainDeviceList{
		Leases: l.Leases, Smartcards: l.Smartcards, Parallels: l.Parallels, RedirDevs: l.RedirDevs,
		RedirFilters: l.RedirFilters, Hubs: l.Hubs, NVRAM: l.NVRAM, Shmems: l.Shmems, Memorydevs: l.Memorydevs,
		IOMMUs: l.IOMMUs, Crypto: l.Crypto, PStore: l.PStore, // IOMMU mirrors IOMMUs[0]
	}
}

// escapedDevices are the fragments of d's devices no family types, in the order libvirt
// lists them, less those a fragment of have already holds (a device_xml fragment the
// record lists).
func escapedDevices(d *libvirtxml.Domain, have []string) []string {
	if d.Devices == nil {
		return nil
	}
	list := adoptedKinds(d.Devices)
	list.Controllers = adoptedControllers(d) // controller_adopt.go
	appendDevices(list, untypedDevices(d.Devices))
	appendDevices(list, inexactDevices(d.Devices, readRecord(d))) // adopt_exact.go
	devices, err := devicesNode(list)
	if err != nil {
		return nil
	}
	for _, f := range have {
		if n, err := ParseDeviceFragment(f); err == nil {
			devices.take(n)
		}
	}
	var out []string
	for _, n := range devices.Nodes {
		n = withoutAddress(compact(n))
		var b strings.Builder
		if writeNode(&b, n) == nil {
			out = append(out, b.String())
		}
	}
	return out
}

// FragmentPresent says whether one of fragments has everything f says: a device_xml
// fragment of the prior state is still on the domain (read from an import, whose record
// does not list it yet).
func FragmentPresent(f string, fragments []string) bool {
	want, err := ParseDeviceFragment(f)
	if err != nil {
		return false
	}
	for _, g := range fragments {
		if n, err := parseNode(g); err == nil && n.has(want) {
			return true
		}
	}
	return false
}

// compact drops blank text (the indentation of libvirt's printing) from n and below.
func compact(n xmlNode) xmlNode {
	if strings.TrimSpace(n.Text) == "" {
		n.Text = ""
	}
	nodes := make([]xmlNode, len(n.Nodes))
	for i := range n.Nodes {
		nodes[i] = compact(n.Nodes[i])
	}
	n.Nodes = nodes
	return n
}

// withoutAddress drops n's own PCI <address>: libvirt assigns one at define, by the order
// of the devices, which a recreate does not keep. A disk's drive address libvirt would
// not give its target stays: it is the user's (disk.go). USB and ISA addresses stay too:
// libvirt reserves the addresses a definition gives before it assigns the others, so a
// USB port or an ISA I/O base a device was put on by hand is kept, and one libvirt chose
// comes back the same. A PCI address libvirt never chooses (a function other than 0, a
// multifunction slot: devices grouped by hand) stays as well.
func withoutAddress(n xmlNode) xmlNode {
	var nodes []xmlNode
	for _, c := range n.Nodes {
		t, _ := c.attr("type")
		mf, _ := c.attr("multifunction")
		fn, _ := c.attr("function")
		userPCI := t == "pci" && n.XMLName.Local != "controller" && (mf == "on" || fn != "" && fn != "0x0" && fn != "0") // libvirt lays root ports out as functions itself
		if c.XMLName.Local != "address" || userDriveAddress(n) || t == "usb" || t == "isa" || userPCI {
			nodes = append(nodes, c)
		}
	}
	n.Nodes = nodes
	return n
}
