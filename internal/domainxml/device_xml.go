package domainxml

import (
	"fmt"
	"slices"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// device_xml: raw device fragments for devices the schema does not model (a <shmem>, an
// <iommu>, a <redirdev>, a controller of a model the provider never writes, ...). Each
// is one element that belongs under <devices>. The fragments as the user wrote them are
// kept in the record; a fragment is present when some device of the definition has
// everything it says (its attributes, text and children, recursively), so what libvirt
// fills in — addresses, aliases, indexes, defaults — is no change. Build takes out the
// devices of the fragments the record lists and appends the new ones. Any change
// restarts a running domain.

// familyElements are the device elements a family owns: a fragment may not write them
// (the family would take it away or read it as its own).
//
// The character devices (chardev.go) own every <serial> and <console>: they read each one
// they can describe as a serial / console block, rewrite the list on every build, and
// libvirt mirrors serial port 0 in a console. A fragment serial or console was read back
// as one more block than the configuration has (an apply failed with "block count
// changed", a later plan wanted to take it away and restart the domain, and the fragment
// put it back), and a <console> without a target is libvirt's serial console, which
// libvirt refuses a second of. <parallel> has no family: a fragment of it reads back as
// written.
var familyElements = map[string]string{
	"disk": "disk", "interface": "network_interface", "hostdev": "hostdev", "filesystem": "filesystem",
	"graphics": "graphics", "channel": "devices.channel (qemu_agent for the guest agent's)",
	"serial": "devices.serial", "console": "devices.console",
	"video": "devices.video", "rng": "devices.rng", "watchdog": "devices.watchdog", "panic": "devices.panic", "vsock": "devices.vsock",
	"memballoon": "devices.memballoon", "sound": "devices.sound", "input": "devices.input", "tpm": "devices.tpm",
	// The emulator is not a device: the emulator attribute chooses it, from the binaries
	// the host's domain capabilities offer (a raw path here would bypass that check).
	"emulator": "the emulator attribute (checked against the host's domain capabilities)",
}

var deviceXMLFamily = family{
	name: "device_xml",
	validate: func(s *Spec) error {
		for i, f := range s.DeviceXML {
			if _, err := ParseDeviceFragment(f); err != nil {
				return fmt.Errorf("device_xml[%d]: %w", i, err)
			}
		}
		return nil
	},
	build: buildDeviceXML,
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		if d.Devices == nil {
			return
		}
		if len(rec.DeviceXML) > 0 {
			devices, err := devicesNode(d.Devices)
			if err != nil {
				return
			}
			for _, f := range rec.DeviceXML {
				n, err := ParseDeviceFragment(f)
				if err == nil && devices.take(n) {
					p.Spec.DeviceXML = append(p.Spec.DeviceXML, f)
				}
			}
		}
		p.Escaped = escapedDevices(d, p.Spec.DeviceXML) // device_xml_adopt.go
	},
	same: func(a, b Spec) bool { return slices.Equal(a.DeviceXML, b.DeviceXML) },
}

// ParseDeviceFragment checks that text is one device element libvirt knows under
// <devices> and that no family owns, and returns it as a node.
func ParseDeviceFragment(text string) (*xmlNode, error) {
	n, err := parseNode(text)
	if err != nil {
		return nil, fmt.Errorf("not one XML element: %w", err)
	}
	name := n.XMLName.Local
	owner, owned := familyElements[name]
	if name == "emulator" {
		return nil, fmt.Errorf("<%s> is managed by %s; configure it there, not as raw XML", name, owner)
	}
	// libvirtxml knows every device element libvirt has: one it does not read is not a device.
	probe, err := nodesToDevices([]xmlNode{*n})
	if err != nil {
		return nil, fmt.Errorf("<%s> does not parse as a device: %w", name, err)
	}
	if owned && !escapableElement(probe) { // a form the family types (device_xml_adopt.go)
		return nil, fmt.Errorf("<%s> in this form is managed by %s; configure it there, not as raw XML", name, owner)
	}
	back, err := devicesNode(probe)
	if err != nil || len(back.Nodes) != 1 {
		return nil, fmt.Errorf("<%s> is not a device element libvirt knows under <devices>", name)
	}
	// What libvirt's domain format does not know (an attribute or element it has not, a
	// value in a form it rewrites) does not survive the way to libvirt and back: the
	// definition would never hold the fragment, and every plan would want to write it again.
	if !back.Nodes[0].has(n) {
		return nil, fmt.Errorf("<%s> says something libvirt's domain format does not know (an unknown attribute or "+
			"element, or a value libvirt would rewrite): it would be dropped on define and the fragment would never "+
			"read back; write the device as libvirt documents it", name)
	}
	return n, nil
}

func buildDeviceXML(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
	var old []string
	if base != nil {
		old = readRecord(base).DeviceXML
	}
	old = append(old, s.DeviceXMLDrop...)
	if len(old) == 0 && len(s.DeviceXML) == 0 {
		return nil
	}
	devices, err := devicesNode(d.Devices)
	if err != nil {
		return err
	}
	// A fragment the definition already holds keeps its device as it is (its address
	// too): an adopted device, or one the last apply wrote and the configuration still has.
	var keep []xmlNode
	var add []string
	for _, f := range s.DeviceXML {
		n, err := ParseDeviceFragment(f)
		if err != nil {
			return err
		}
		if i := devices.index(n); i >= 0 {
			keep = append(keep, devices.Nodes[i])
			devices.Nodes = slices.Delete(devices.Nodes, i, i+1)
		} else {
			add = append(add, f)
		}
	}
	for _, f := range old {
		if n, err := ParseDeviceFragment(f); err == nil && !slices.Contains(s.DeviceXML, f) {
			devices.take(n) // what the last apply added goes; a device made elsewhere stays
		}
	}
	others := devices.Nodes
	var added []xmlNode
	for _, f := range add {
		n, err := ParseDeviceFragment(f)
		if err != nil {
			return err
		}
		others = slices.DeleteFunc(others, func(x xmlNode) bool { return sameController(x, *n) })
		added = append(added, *n)
	}
	devices.Nodes = append(append(others, keep...), added...)
	list, err := nodesToDevices(devices.Nodes)
	if err != nil {
		return fmt.Errorf("device_xml: %w", err)
	}
	d.Devices = list
	return nil
}

// sameController says whether a and b are controllers of one type and index: a fragment
// controller takes the place of the one a family added (the disk family's plain
// virtio-scsi controller), since libvirt refuses two.
func sameController(a, b xmlNode) bool {
	if a.XMLName.Local != "controller" || b.XMLName.Local != "controller" {
		return false
	}
	at, _ := a.attr("type")
	bt, _ := b.attr("type")
	ai, aok := a.attr("index")
	bi, bok := b.attr("index")
	return at == bt && aok && bok && ai == bi
}

// devicesNode is a device list as one <devices> node, through libvirtxml's own writer.
func devicesNode(list *libvirtxml.DomainDeviceList) (*xmlNode, error) {
	if list == nil {
		list = &libvirtxml.DomainDeviceList{}
	}
	text, err := (&libvirtxml.Domain{Devices: list}).Marshal()
	if err != nil {
		return nil, err
	}
	dom, err := parseNode(text)
	if err != nil {
		return nil, err
	}
	for i := range dom.Nodes {
		if dom.Nodes[i].XMLName.Local == "devices" {
			return &dom.Nodes[i], nil
		}
	}
	return &xmlNode{}, nil
}

// nodesToDevices reads device nodes back through libvirtxml's reader.
func nodesToDevices(nodes []xmlNode) (*libvirtxml.DomainDeviceList, error) {
	var b strings.Builder
	b.WriteString("<domain>")
	if err := writeNode(&b, xmlNode{XMLName: xmlName("devices"), Nodes: nodes}); err != nil {
		return nil, err
	}
	b.WriteString("</domain>")
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(b.String()); err != nil {
		return nil, err
	}
	if dom.Devices == nil {
		return &libvirtxml.DomainDeviceList{}, nil
	}
	return dom.Devices, nil
}

// take removes the first child of n that has all of want, and says whether there was one.
func (n *xmlNode) take(want *xmlNode) bool {
	if i := n.index(want); i >= 0 {
		n.Nodes = slices.Delete(n.Nodes, i, i+1)
		return true
	}
	return false
}

// index is the position of the first child of n that has all of want, or -1.
func (n *xmlNode) index(want *xmlNode) int {
	for i := range n.Nodes {
		if n.Nodes[i].has(want) {
			return i
		}
	}
	return -1
}

// DroppedDeviceXML are the fragments of old that next no longer has (Spec.DeviceXMLDrop).
func DroppedDeviceXML(old, next []string) []string {
	var out []string
	for _, f := range old {
		if !slices.Contains(next, f) {
			out = append(out, f)
		}
	}
	return out
}
