package libvirt

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// NodeDevice is one host device as libvirt's node-device driver reports it, flattened:
// what a passthrough configuration needs to name it. Fields a device kind does not have
// (or the host cannot tell, e.g. vendor names without a hwdb, IOMMU groups without an
// IOMMU) are empty / nil.
type NodeDevice struct {
	Name       string // e.g. pci_0000_00_03_0
	Parent     string
	Driver     string // the host driver bound to it, e.g. virtio-pci, vfio-pci
	Capability string // the device's kind: pci, usb_device, net, scsi_host, scsi, mdev, ...

	VendorID, VendorName   string // 0x8086 and its name (PCI and USB devices)
	ProductID, ProductName string

	PCIAddress       string   // 0000:00:03.0
	IOMMUGroup       *int     // nil: no IOMMU group (no IOMMU, or not PCI)
	VirtualFunctions []string // SR-IOV VFs of a physical function, as PCI addresses
	MDevTypes        []MDevType

	USBBus, USBDevice *int // a USB device's bus and device number

	MDevUUID string // an mediated device's uuid

	Interface, MAC string // a network interface's name (eth0) and MAC address
}

// MDevType is a mediated-device type a parent device offers.
type MDevType struct {
	ID                 string
	Name               string
	DeviceAPI          string
	AvailableInstances int
}

// nodeDeviceCaps maps the capability names virsh nodedev-list --cap takes to the listing
// flags.
var nodeDeviceCaps = map[string]golibvirt.ConnectListAllNodeDeviceFlags{
	"system":       golibvirt.ConnectListNodeDevicesCapSystem,
	"pci":          golibvirt.ConnectListNodeDevicesCapPciDev,
	"usb_device":   golibvirt.ConnectListNodeDevicesCapUsbDev,
	"usb":          golibvirt.ConnectListNodeDevicesCapUsbInterface,
	"net":          golibvirt.ConnectListNodeDevicesCapNet,
	"scsi_host":    golibvirt.ConnectListNodeDevicesCapScsiHost,
	"scsi_target":  golibvirt.ConnectListNodeDevicesCapScsiTarget,
	"scsi":         golibvirt.ConnectListNodeDevicesCapScsi,
	"storage":      golibvirt.ConnectListNodeDevicesCapStorage,
	"fc_host":      golibvirt.ConnectListNodeDevicesCapFcHost,
	"vports":       golibvirt.ConnectListNodeDevicesCapVports,
	"scsi_generic": golibvirt.ConnectListNodeDevicesCapScsiGeneric,
	"drm":          golibvirt.ConnectListNodeDevicesCapDrm,
	"mdev_types":   golibvirt.ConnectListNodeDevicesCapMdevTypes,
	"mdev":         golibvirt.ConnectListNodeDevicesCapMdev,
	"ccw":          golibvirt.ConnectListNodeDevicesCapCcwDev,
	"css":          golibvirt.ConnectListNodeDevicesCapCssDev,
	"vdpa":         golibvirt.ConnectListNodeDevicesCapVdpa,
	"ap_card":      golibvirt.ConnectListNodeDevicesCapApCard,
	"ap_queue":     golibvirt.ConnectListNodeDevicesCapApQueue,
	"ap_matrix":    golibvirt.ConnectListNodeDevicesCapApMatrix,
	"vpd":          golibvirt.ConnectListNodeDevicesCapVpd,
}

// NodeDeviceCapabilities are the capability names ListNodeDevices filters on, sorted.
func NodeDeviceCapabilities() []string {
	out := make([]string, 0, len(nodeDeviceCaps))
	for k := range nodeDeviceCaps {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ListNodeDevices lists the host's devices that have any of the capabilities (all
// devices when none is given), sorted by name: one listing call and one XML read per
// device.
func (c *Client) ListNodeDevices(ctx context.Context, capabilities ...string) ([]NodeDevice, error) {
	var flags golibvirt.ConnectListAllNodeDeviceFlags
	for _, cp := range capabilities {
		f, ok := nodeDeviceCaps[cp]
		if !ok {
			return nil, fmt.Errorf("unknown node device capability %q (one of %s)", cp, strings.Join(NodeDeviceCapabilities(), ", "))
		}
		flags |= f
	}
	var out []NodeDevice
	err := c.Read(ctx, "list node devices", func(l *golibvirt.Libvirt) error {
		out = nil
		devs, _, err := l.ConnectListAllNodeDevices(1, uint32(flags))
		if err != nil {
			return err
		}
		for _, d := range devs {
			text, err := l.NodeDeviceGetXMLDesc(d.Name, 0)
			if HasCode(classify("", "", err), golibvirt.ErrNoNodeDevice) {
				continue // gone while we listed (e.g. a hot-unplugged USB stick)
			}
			if err != nil {
				return err
			}
			nd, err := ParseNodeDevice(text)
			if err != nil {
				return err
			}
			out = append(out, *nd)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// passthroughCache keeps one listing of the devices a hostdev can name per client for a
// short while: a plan checks every libvirt_domain with hostdevs against the host, and
// that should cost one listing per plan, not one per resource.
var passthroughCache ttlCache[*Client, []NodeDevice]

// passthroughTTL is about one plan's length.
const passthroughTTL = 20 * time.Second

// PassthroughDevices are the host's PCI, USB and mediated devices (what a hostdev can
// name), from a listing at most passthroughTTL old.
func (c *Client) PassthroughDevices(ctx context.Context) ([]NodeDevice, error) {
	return passthroughCache.get(c, passthroughTTL, func() ([]NodeDevice, error) {
		return c.ListNodeDevices(ctx, "pci", "usb_device", "mdev")
	})
}

// ParseNodeDevice reads one node device's XML (virsh nodedev-dumpxml).
func ParseNodeDevice(text string) (*NodeDevice, error) {
	var x libvirtxml.NodeDevice
	if err := x.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("parse node device XML: %w", err)
	}
	nd := &NodeDevice{Name: x.Name, Parent: x.Parent}
	if x.Driver != nil {
		nd.Driver = x.Driver.Name
	}
	cp := x.Capability
	switch {
	case cp.PCI != nil:
		nd.Capability = "pci"
		readPCI(nd, cp.PCI)
	case cp.USBDevice != nil:
		nd.Capability = "usb_device"
		u := cp.USBDevice
		nd.VendorID, nd.VendorName = normID(u.Vendor.ID), u.Vendor.Name
		nd.ProductID, nd.ProductName = normID(u.Product.ID), u.Product.Name
		nd.USBBus, nd.USBDevice = &u.Bus, &u.Device
	case cp.MDev != nil:
		nd.Capability = "mdev"
		nd.MDevUUID = strings.ToLower(cp.MDev.UUID)
		if nd.MDevUUID == "" && strings.HasPrefix(x.Name, "mdev_") {
			// libvirt before 7.3 names the device after its uuid only
			nd.MDevUUID = strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(x.Name, "mdev_"), "_", "-"))
		}
		if cp.MDev.IOMMUGroup != nil {
			g := cp.MDev.IOMMUGroup.Number
			nd.IOMMUGroup = &g
		}
	case cp.Net != nil:
		nd.Capability = "net"
		nd.Interface, nd.MAC = cp.Net.Interface, strings.ToLower(cp.Net.Address)
	default:
		nd.Capability = capabilityName(cp)
	}
	return nd, nil
}

func readPCI(nd *NodeDevice, p *libvirtxml.NodeDevicePCICapability) {
	nd.VendorID, nd.VendorName = normID(p.Vendor.ID), p.Vendor.Name
	nd.ProductID, nd.ProductName = normID(p.Product.ID), p.Product.Name
	nd.PCIAddress = pciAddress(p.Domain, p.Bus, p.Slot, p.Function)
	if p.IOMMUGroup != nil {
		g := p.IOMMUGroup.Number
		nd.IOMMUGroup = &g
	}
	for _, sc := range p.Capabilities {
		if sc.VirtFunctions != nil {
			for _, a := range sc.VirtFunctions.Address {
				nd.VirtualFunctions = append(nd.VirtualFunctions, pciAddress(a.Domain, a.Bus, a.Slot, a.Function))
			}
		}
		if sc.MDevTypes != nil {
			for _, t := range sc.MDevTypes.Types {
				nd.MDevTypes = append(nd.MDevTypes, MDevType{ID: t.ID, Name: t.Name, DeviceAPI: t.DeviceAPI, AvailableInstances: int(t.AvailableInstances)})
			}
		}
	}
}

// pciAddress is the host's domain:bus:slot.function notation, as lspci -D prints it.
func pciAddress(domain, bus, slot, function *uint) string {
	v := func(p *uint) uint {
		if p == nil {
			return 0
		}
		return *p
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", v(domain), v(bus), v(slot), v(function))
}

// normID writes a vendor or product id as libvirt's domain XML does: 0x and lower case.
func normID(id string) string {
	if id == "" {
		return ""
	}
	return "0x" + strings.ToLower(strings.TrimPrefix(strings.ToLower(id), "0x"))
}

// capabilityName names the kinds ParseNodeDevice does not read further.
func capabilityName(cp libvirtxml.NodeDeviceCapability) string {
	switch {
	case cp.System != nil:
		return "system"
	case cp.USB != nil:
		return "usb"
	case cp.SCSIHost != nil:
		return "scsi_host"
	case cp.SCSITarget != nil:
		return "scsi_target"
	case cp.SCSI != nil:
		return "scsi"
	case cp.Storage != nil:
		return "storage"
	case cp.DRM != nil:
		return "drm"
	case cp.CCW != nil:
		return "ccw"
	case cp.CSS != nil:
		return "css"
	case cp.APQueue != nil:
		return "ap_queue"
	case cp.APCard != nil:
		return "ap_card"
	case cp.APMatrix != nil:
		return "ap_matrix"
	case cp.CCWGroup != nil:
		return "ccwgroup"
	}
	return ""
}
