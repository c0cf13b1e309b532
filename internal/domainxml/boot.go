package domainxml

import (
	"fmt"
	"strconv"

	"libvirt.org/go/libvirtxml"
)

// Boot order: per-device <boot order='N'/> (disks, NICs, hostdevs) and <os><boot dev='hd'/>
// exclude each other in libvirt, so the definition has the latter only when no device
// has a boot order.

// bootOrders are the boot orders the spec's devices ask for, each with the device it
// belongs to (for messages). A device family with boot_order adds its devices here.
func bootOrders(s *Spec) []deviceBoot {
	var out []deviceBoot
	for i, d := range s.Disks {
		if d.BootOrder > 0 {
			name := "disk " + d.Target
			if d.Target == "" {
				name = fmt.Sprintf("disk %d", i) // before the defaults are filled in
			}
			out = append(out, deviceBoot{name, d.BootOrder})
		}
	}
	for i, n := range s.Interfaces {
		if n.BootOrder > 0 { // PXE
			out = append(out, deviceBoot{fmt.Sprintf("network_interface %d", i), n.BootOrder})
		}
	}
	for i, h := range s.Hostdevs {
		if h.BootOrder > 0 {
			out = append(out, deviceBoot{fmt.Sprintf("hostdev %d (%s)", i, HostdevName(h)), h.BootOrder})
		}
	}
	for i, f := range s.DeviceXML { // a device only device_xml says (a redirdev, a NIC the schema cannot type)
		if n, err := parseNode(f); err == nil && n.hasBootOrder() {
			out = append(out, deviceBoot{fmt.Sprintf("device_xml[%d] (<%s>)", i, n.XMLName.Local), n.bootOrder()})
		}
	}
	return out
}

// hasBootOrder and bootOrder: the <boot order='N'/> of a device element.
func (n xmlNode) hasBootOrder() bool { return n.bootOrder() > 0 }

func (n xmlNode) bootOrder() uint {
	for _, c := range n.Nodes {
		if c.XMLName.Local != "boot" {
			continue
		}
		if v, ok := c.attr("order"); ok {
			if o, err := strconv.ParseUint(v, 10, 32); err == nil {
				return uint(o)
			}
		}
	}
	return 0
}

type deviceBoot struct {
	device string
	order  uint
}

// setBootDevices drops <os><boot dev> when a device has a boot order, else makes sure
// there is one (hd).
func setBootDevices(d *libvirtxml.Domain, s *Spec) {
	if len(bootOrders(s)) > 0 {
		d.OS.BootDevices = nil
	} else if len(d.OS.BootDevices) == 0 {
		d.OS.BootDevices = []libvirtxml.DomainBootDevice{{Dev: "hd"}}
	}
}

// validateBootOrders refuses a boot order two devices share (libvirt's own error does
// not say which devices).
func validateBootOrders(s *Spec) error {
	seen := map[uint]string{}
	for _, b := range bootOrders(s) {
		if other, ok := seen[b.order]; ok {
			return fmt.Errorf("%s and %s both have boot_order %d: give each device its own", other, b.device, b.order)
		}
		seen[b.order] = b.device
	}
	return nil
}
