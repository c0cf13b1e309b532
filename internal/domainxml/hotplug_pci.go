package domainxml

import (
	"encoding/xml"
	"strconv"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// On q35 a hot-plugged PCI device needs a pcie-root-port with nothing on it: libvirt
// adds no spare ports, so with none free the attach would fail. Only the current
// definition tells (cur; at plan time there is none and the attach is assumed to fit).

// pciAttaches counts the attaches that take a PCI slot: virtio disks, NICs, the
// virtio-scsi controller and PCI hostdevs (pciHotplug).
func pciAttaches(ops []LiveOp) int {
	n := 0
	for _, o := range ops {
		if o.Kind == LiveAttach && (o.Noun == "interface" || o.Noun == "controller" || strings.Contains(o.XML, `bus="virtio"`) || pciHotplug(o)) {
			n++
		}
	}
	return n
}

// noFreeRootPort is the restart reason when cur is a q35 domain with fewer free
// pcie-root-ports than the attaches need ("" when they fit or cur does not tell).
func noFreeRootPort(cur *libvirtxml.Domain, need int) string {
	if need == 0 || cur == nil || cur.OS == nil || cur.OS.Type == nil || !strings.Contains(cur.OS.Type.Machine, "q35") || cur.Devices == nil {
		return ""
	}
	ports := map[uint]bool{}
	for _, c := range cur.Devices.Controllers {
		if c.Type == "pci" && c.Model == "pcie-root-port" && c.Index != nil {
			ports[*c.Index] = true
		}
	}
	for bus := range usedPCIBuses(cur) {
		delete(ports, bus)
	}
	if len(ports) >= need {
		return ""
	}
	return "machine q35 has no free pcie-root-port for the device (" + strconv.Itoa(len(ports)) + " free, " + strconv.Itoa(need) + " needed)"
}

// usedPCIBuses is every PCI bus some device of d sits on, read from its XML's <address>
// elements (every device kind at once, controllers included).
func usedPCIBuses(d *libvirtxml.Domain) map[uint]bool {
	used := map[uint]bool{}
	text, err := d.Marshal()
	if err != nil {
		return used
	}
	dec := xml.NewDecoder(strings.NewReader(text))
	for {
		tok, err := dec.Token()
		if err != nil {
			return used
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "address" {
			continue
		}
		var typ, bus string
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "type":
				typ = a.Value
			case "bus":
				bus = a.Value
			}
		}
		if n, err := strconv.ParseUint(bus, 0, 32); typ == "pci" && err == nil {
			used[uint(n)] = true
		}
	}
}
