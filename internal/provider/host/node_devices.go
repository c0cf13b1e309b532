package host

import (
	"context"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// libvirt_node_devices: the host's devices as libvirt's node-device driver sees them, to
// find what a `hostdev` can pass through (a GPU and its audio function, a NIC's virtual
// functions, a USB key, an mdev type).

type NodeDevicesDataSource struct {
	tfkit.DataSourceBase
}

type NodeDevicesModel struct {
	tfkit.DataTimeouts
	tfkit.OnHost
	ID         types.String      `tfsdk:"id"`
	Capability types.String      `tfsdk:"capability"`
	NamePrefix types.String      `tfsdk:"name_prefix"`
	Devices    []nodeDeviceEntry `tfsdk:"devices"`
}

type nodeDeviceEntry struct {
	Name             string          `tfsdk:"name"`
	Parent           string          `tfsdk:"parent"`
	Driver           string          `tfsdk:"driver"`
	Capability       string          `tfsdk:"capability"`
	VendorID         string          `tfsdk:"vendor_id"`
	VendorName       string          `tfsdk:"vendor_name"`
	ProductID        string          `tfsdk:"product_id"`
	ProductName      string          `tfsdk:"product_name"`
	PCIAddress       string          `tfsdk:"pci_address"`
	IOMMUGroup       types.Int64     `tfsdk:"iommu_group"`
	VirtualFunctions []string        `tfsdk:"virtual_functions"`
	MDevTypes        []mdevTypeEntry `tfsdk:"mdev_types"`
	USBBus           types.Int64     `tfsdk:"usb_bus"`
	USBDevice        types.Int64     `tfsdk:"usb_device"`
	MDevUUID         string          `tfsdk:"mdev_uuid"`
	Interface        string          `tfsdk:"interface"`
	MAC              string          `tfsdk:"mac"`
}

type mdevTypeEntry struct {
	ID                 string `tfsdk:"id"`
	Name               string `tfsdk:"name"`
	DeviceAPI          string `tfsdk:"device_api"`
	AvailableInstances int64  `tfsdk:"available_instances"`
}

func (d *NodeDevicesDataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = tfkit.DataSchema(ctx, "The host's devices as libvirt's node-device driver reports them (`virsh nodedev-list`), sorted by "+
		"name: what a `libvirt_domain` `hostdev` can pass through. Values the host cannot tell are empty: vendor and product "+
		"names need the host's hardware database, an IOMMU group needs an enabled IOMMU.", map[string]schema.Attribute{
		"id": tfkit.DataString("The connection URI and the filters."),
		"capability": schema.StringAttribute{
			MarkdownDescription: "Only devices of this kind: " + strings.Join(libvirt.NodeDeviceCapabilities(), ", ") +
				" (the names of `virsh nodedev-list --cap`; `usb_device` is a USB device, `usb` a USB interface). Default: all.",
			Optional:   true,
			Validators: []validator.String{stringvalidator.OneOf(libvirt.NodeDeviceCapabilities()...)},
		},
		"name_prefix": schema.StringAttribute{
			MarkdownDescription: "Only devices whose libvirt name starts with this, e.g. `pci_0000_3b_`.",
			Optional:            true,
		},
		"devices": schema.ListNestedAttribute{
			MarkdownDescription: "The matching devices.",
			Computed:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":         tfkit.DataString("libvirt's name, e.g. `pci_0000_00_03_0`."),
				"parent":       tfkit.DataString("The parent device's name (`computer` for the root)."),
				"driver":       tfkit.DataString("The host driver bound to it, e.g. `vfio-pci`, `nvidia`; empty when none."),
				"capability":   tfkit.DataString("The device's kind, e.g. `pci`, `usb_device`, `net`, `scsi_host`, `mdev`."),
				"vendor_id":    tfkit.DataString("Vendor id of a PCI or USB device, `0x` and lower case as `hostdev.usb` takes it."),
				"vendor_name":  tfkit.DataString("Vendor name; empty when the host has no hardware database."),
				"product_id":   tfkit.DataString("Product id of a PCI or USB device."),
				"product_name": tfkit.DataString("Product name; empty when the host has no hardware database."),
				"pci_address":  tfkit.DataString("A PCI device's address, `0000:03:00.0`, as `hostdev.pci` takes it."),
				"iommu_group": tfkit.DataInt("The IOMMU group (PCI, mdev): every device of a group goes to the same guest. Null without an " +
					"IOMMU."),
				"virtual_functions": tfkit.DataStrings("An SR-IOV physical function's virtual functions, as PCI addresses."),
				"mdev_types": schema.ListNestedAttribute{
					MarkdownDescription: "The mediated-device types a parent device offers (e.g. vGPU profiles).",
					Computed:            true,
					NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
						"id":                  tfkit.DataString("Type id, e.g. `nvidia-222`."),
						"name":                tfkit.DataString("Its name, e.g. `GRID T4-1B`."),
						"device_api":          tfkit.DataString("`vfio-pci`, `vfio-ccw` or `vfio-ap`: the `hostdev` `mdev_model`."),
						"available_instances": tfkit.DataInt("How many more can be created."),
					}},
				},
				"usb_bus":    tfkit.DataInt("A USB device's bus number (null for other devices)."),
				"usb_device": tfkit.DataInt("A USB device's device number on its bus, for `hostdev.usb_address`."),
				"mdev_uuid":  tfkit.DataString("A mediated device's uuid, as `hostdev.mdev` takes it."),
				"interface": tfkit.DataString("A network interface's name (capability `net`), e.g. `eth0`: what `network_interface.direct.dev` " +
					"and a network's `forward.dev` take."),
				"mac": tfkit.DataString("A network interface's MAC address, lower case."),
			}},
		},
	})
}

func (d *NodeDevicesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	tfkit.Lookup(ctx, req, resp, time.Minute,
		func(*NodeDevicesModel) string { return "the node devices of " + d.Client.URI().String() },
		func(ctx context.Context, m *NodeDevicesModel, _ *diag.Diagnostics) (*NodeDevicesModel, error) {
			var caps []string
			if c := m.Capability.ValueString(); c != "" {
				caps = append(caps, c)
			}
			all, err := d.Client.ListNodeDevices(ctx, caps...)
			if err != nil {
				return nil, err
			}
			prefix := m.NamePrefix.ValueString()
			m.Devices = []nodeDeviceEntry{}
			for _, nd := range all {
				if strings.HasPrefix(nd.Name, prefix) {
					m.Devices = append(m.Devices, nodeDeviceFrom(nd))
				}
			}
			m.ID = types.StringValue(d.Client.URI().String() + "?capability=" + m.Capability.ValueString() + "&prefix=" + prefix)
			return m, nil
		})
}

func nodeDeviceFrom(nd libvirt.NodeDevice) nodeDeviceEntry {
	e := nodeDeviceEntry{
		Name: nd.Name, Parent: nd.Parent, Driver: nd.Driver, Capability: nd.Capability,
		VendorID: nd.VendorID, VendorName: nd.VendorName, ProductID: nd.ProductID, ProductName: nd.ProductName,
		PCIAddress: nd.PCIAddress, IOMMUGroup: tfkit.Int64FromPtr(nd.IOMMUGroup), VirtualFunctions: append([]string{}, nd.VirtualFunctions...),
		MDevTypes: []mdevTypeEntry{}, USBBus: tfkit.Int64FromPtr(nd.USBBus), USBDevice: tfkit.Int64FromPtr(nd.USBDevice), MDevUUID: nd.MDevUUID,
		Interface: nd.Interface, MAC: nd.MAC,
	}
	for _, t := range nd.MDevTypes {
		e.MDevTypes = append(e.MDevTypes, mdevTypeEntry{ID: t.ID, Name: t.Name, DeviceAPI: t.DeviceAPI, AvailableInstances: int64(t.AvailableInstances)})
	}
	return e
}
