package domain

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// domainHostdevsModel: the `hostdev` blocks, host devices passed through to the guest.
type domainHostdevsModel struct {
	Hostdevs []hostdevModel `tfsdk:"hostdev"`
}

type hostdevModel struct {
	PCI        types.String    `tfsdk:"pci"`
	USB        *hostdevUSB     `tfsdk:"usb"`
	USBAddress types.String    `tfsdk:"usb_address"`
	MDev       types.String    `tfsdk:"mdev"`
	MDevModel  types.String    `tfsdk:"mdev_model"`
	SCSI       *hostdevSCSI    `tfsdk:"scsi"`
	Managed    types.Bool      `tfsdk:"managed"`
	BootOrder  types.Int64     `tfsdk:"boot_order"`
	ROM        *hostdevROMConf `tfsdk:"rom"`
}

type hostdevUSB struct {
	Vendor  types.String `tfsdk:"vendor"`
	Product types.String `tfsdk:"product"`
}

type hostdevSCSI struct {
	Adapter types.String `tfsdk:"adapter"`
	Bus     types.Int64  `tfsdk:"bus"`
	Target  types.Int64  `tfsdk:"target"`
	Unit    types.Int64  `tfsdk:"unit"`
}

type hostdevROMConf struct {
	Bar  types.Bool   `tfsdk:"bar"`
	File types.String `tfsdk:"file"`
}

const hostdevChange = "On a running domain, a hostdev added at the end (without `boot_order`) is attached live and one " +
	"removed is detached live (waiting up to 30 s for the guest to let it go), both also in the definition " +
	"(`update_method = \"live\"`; on q35 a PCI device needs a free " +
	"pcie-root-port); changing a hostdev, reordering them, adding one in front or with a `boot_order` rewrites the definition " +
	"and restarts the domain. A stopped domain's definition is rewritten."

var domainHostdevs = family{
	blocks: map[string]schema.Block{
		"hostdev": schema.ListNestedBlock{
			MarkdownDescription: "Host devices passed through to the guest, in order. Each names its source with exactly one of `pci`, " +
				"`usb`, `usb_address`, `mdev` and `scsi`. libvirt checks a source only when the domain starts; the plan checks " +
				"`pci`, `usb` and `mdev` sources against the host's node devices (see the `libvirt_node_devices` data source) " +
				"when the domain is to run (a device a running domain already has is not asked about again), and leaves a " +
				"define-only domain (`running = false`) unchecked, so that it can be prepared for a device the host does not " +
				"have yet. " + hostdevChange,
			NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
				"pci": tfkit.OptionalString("A host PCI device by its address, `0000:03:00.0` (as `lspci -D` and `libvirt_node_devices` write it; "+
					"the `0000:` domain may be left out). It needs an IOMMU and the vfio-pci driver on the host.",
					stringvalidator.RegexMatches(domainxml.PCIAddressPattern, "must be a PCI address such as 0000:03:00.0"),
					stringvalidator.ExactlyOneOf(path.MatchRelative().AtParent().AtName("usb"), path.MatchRelative().AtParent().AtName("usb_address"),
						path.MatchRelative().AtParent().AtName("mdev"), path.MatchRelative().AtParent().AtName("scsi"))),
				"usb": schema.SingleNestedAttribute{
					MarkdownDescription: "A host USB device by its `vendor` and `product` ids (e.g. `0x046d` and `0xc52b`; the `0x` and the " +
						"case are free), wherever it is plugged in.",
					Optional: true,
					Attributes: map[string]schema.Attribute{
						"vendor":  schema.StringAttribute{MarkdownDescription: "Vendor id.", Required: true, Validators: usbIDValidators},
						"product": schema.StringAttribute{MarkdownDescription: "Product id.", Required: true, Validators: usbIDValidators},
					},
				},
				"usb_address": tfkit.OptionalString("A host USB device by `bus:device` as `lsusb` prints them (e.g. `1:5`). The device number "+
					"changes when the device is plugged in again; prefer `usb`.",
					stringvalidator.RegexMatches(domainxml.USBAddressPattern, "must be bus:device such as 1:5")),
				"mdev": tfkit.OptionalString("A mediated device (e.g. a vGPU slice) by its uuid, created beforehand on the host (mdevctl).",
					stringvalidator.RegexMatches(validators.UUIDRegexp, "must be a uuid")),
				"mdev_model": tfkit.OptionalString("The mediated device's API: `vfio-pci` (the default), `vfio-ccw` or `vfio-ap`. Only with `mdev`.",
					stringvalidator.OneOf(domainxml.MDevModels...), stringvalidator.AlsoRequires(path.MatchRelative().AtParent().AtName("mdev"))),
				"scsi": schema.SingleNestedAttribute{
					MarkdownDescription: "A SCSI device on a host adapter: `adapter` (`scsi_host0`), `bus`, `target` and `unit`. libvirt adds " +
						"a SCSI controller to the guest when there is none.",
					Optional: true,
					Attributes: map[string]schema.Attribute{
						"adapter": schema.StringAttribute{MarkdownDescription: "Host adapter, `scsi_hostN`.", Required: true,
							Validators: []validator.String{stringvalidator.RegexMatches(scsiHostRegexp, "must be a host adapter name such as scsi_host0")}},
						"bus":    scsiNumber("Bus on the adapter."),
						"target": scsiNumber("Target on the bus."),
						"unit":   scsiNumber("Unit (LUN) on the target."),
					},
				},
				"managed": tfkit.OptionalBool("libvirt detaches the device from its host driver when the domain starts and gives it back when "+
					"it stops. Default `true`; with `false` the device must already be bound to vfio-pci.", true),
				"boot_order": schema.Int64Attribute{
					MarkdownDescription: "Boot priority among all devices (1 first), e.g. a passed-through NVMe or HBA. When any device " +
						"has one, libvirt boots by these only.",
					Optional:   true,
					Validators: []validator.Int64{int64validator.AtLeast(1)},
				},
				"rom": schema.SingleNestedAttribute{
					MarkdownDescription: "A PCI device's option ROM: `bar = false` hides it from the guest, `file` presents another " +
						"ROM image (a host path), e.g. a GPU's patched vBIOS. Only with `pci`.",
					Optional:   true,
					Validators: []validator.Object{objectvalidator.AlsoRequires(path.MatchRelative().AtParent().AtName("pci"))},
					Attributes: map[string]schema.Attribute{
						"bar": schema.BoolAttribute{MarkdownDescription: "Whether the guest sees the ROM BAR. Default: libvirt's (visible).",
							Optional: true},
						"file": tfkit.OptionalString("ROM image on the host.", stringvalidator.RegexMatches(validators.AbsPathRegexp, "must be an absolute path on the host"),
							stringvalidator.AtLeastOneOf(path.MatchRelative().AtParent().AtName("bar"))),
					},
				},
			}},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		for _, h := range m.Hostdevs {
			s.Hostdevs = append(s.Hostdevs, hostdevSpec(h))
		}
	},
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.Hostdevs = nil
		for i, h := range s.Hostdevs {
			var p *hostdevModel
			if i < len(prior.Hostdevs) {
				p = &prior.Hostdevs[i]
			}
			m.Hostdevs = append(m.Hostdevs, hostdevFromSpec(h, p))
		}
	},
}

var (
	usbIDValidators = []validator.String{stringvalidator.RegexMatches(domainxml.USBIDPattern, "must be a USB id of 4 hex digits such as 0x10de")}
	scsiHostRegexp  = regexp.MustCompile(`^scsi_host[0-9]+$`)
)

func scsiNumber(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Required: true, Validators: []validator.Int64{int64validator.Between(0, 65535)}}
}

func hostdevSpec(h hostdevModel) domainxml.Hostdev {
	out := domainxml.Hostdev{
		PCI: h.PCI.ValueString(), USBAddress: h.USBAddress.ValueString(), MDev: h.MDev.ValueString(), MDevModel: h.MDevModel.ValueString(),
		Managed: h.Managed.ValueBool(), BootOrder: uint(h.BootOrder.ValueInt64()),
	}
	if h.USB != nil {
		out.USBVendor, out.USBProduct = h.USB.Vendor.ValueString(), h.USB.Product.ValueString()
	}
	if h.SCSI != nil {
		out.SCSI = &domainxml.HostdevSCSI{Adapter: h.SCSI.Adapter.ValueString(), Bus: uint(h.SCSI.Bus.ValueInt64()),
			Target: uint(h.SCSI.Target.ValueInt64()), Unit: uint(h.SCSI.Unit.ValueInt64())}
	}
	if h.ROM != nil {
		out.ROM = &domainxml.HostdevROM{File: h.ROM.File.ValueString()}
		if tfkit.Known(h.ROM.Bar) {
			out.ROM.Bar = map[bool]string{true: "on", false: "off"}[h.ROM.Bar.ValueBool()]
		}
	}
	return out
}

// hostdevFromSpec is the model of what libvirt has, with each source written as the
// configuration wrote it when it is the same one (hex case, a left-out PCI domain, a
// zero-padded USB bus, an mdev_model left to its default).
func hostdevFromSpec(h domainxml.Hostdev, prior *hostdevModel) hostdevModel {
	if prior == nil {
		prior = &hostdevModel{}
	}
	keep := func(now string, before types.String, norm func(string) string) types.String {
		if now == "" {
			return types.StringNull()
		}
		if tfkit.Known(before) && norm(before.ValueString()) == norm(now) {
			return before
		}
		return types.StringValue(now)
	}
	m := hostdevModel{
		PCI:        keep(h.PCI, prior.PCI, domainxml.NormPCIAddress),
		USBAddress: keep(h.USBAddress, prior.USBAddress, domainxml.NormUSBAddress),
		MDev:       keep(h.MDev, prior.MDev, strings.ToLower),
		MDevModel:  tfkit.StringOrNull(h.MDevModel),
		Managed:    types.BoolValue(h.Managed),
		BootOrder:  types.Int64Null(),
	}
	if h.MDev != "" && prior.MDevModel.IsNull() && prior.MDev.ValueString() != "" && h.MDevModel == domainxml.MDevModels[0] {
		m.MDevModel = types.StringNull() // left to its default
	}
	if h.BootOrder > 0 {
		m.BootOrder = types.Int64Value(int64(h.BootOrder))
	}
	if h.USBVendor != "" || h.USBProduct != "" {
		m.USB = &hostdevUSB{Vendor: types.StringValue(h.USBVendor), Product: types.StringValue(h.USBProduct)}
		if prior.USB != nil {
			m.USB.Vendor = keep(h.USBVendor, prior.USB.Vendor, domainxml.NormUSBID)
			m.USB.Product = keep(h.USBProduct, prior.USB.Product, domainxml.NormUSBID)
		}
	}
	if h.SCSI != nil {
		m.SCSI = &hostdevSCSI{Adapter: types.StringValue(h.SCSI.Adapter), Bus: types.Int64Value(int64(h.SCSI.Bus)),
			Target: types.Int64Value(int64(h.SCSI.Target)), Unit: types.Int64Value(int64(h.SCSI.Unit))}
	}
	if h.ROM != nil {
		m.ROM = &hostdevROMConf{Bar: types.BoolNull(), File: tfkit.StringOrNull(h.ROM.File)}
		if h.ROM.Bar != "" {
			m.ROM.Bar = types.BoolValue(h.ROM.Bar == "on")
		}
	}
	return m
}

// checkHostdevs fails the plan for a `pci`, `usb` or `mdev` hostdev the host lacks, naming
// it: libvirt itself would only say so when the domain starts. A domain that is not to
// run (running = false) is not checked: libvirt accepts its definition, and it may be
// prepared for a device the host gets later. A device a running domain already has is
// not asked about again (like hostOffers, the host is asked about what changes: an
// unchanged domain costs no call). One listing of the host's devices serves the whole
// plan (libvirt.PassthroughDevices). An unreachable host or a failed listing leaves it
// to libvirt.
func checkHostdevs(ctx context.Context, c *libvirt.Client, plan, state *Model, d *diag.Diagnostics) {
	if c == nil || (tfkit.Known(plan.Running) && !plan.Running.ValueBool()) {
		return
	}
	had := map[string]bool{}
	if state != nil && state.Running.ValueBool() {
		for _, h := range state.Hostdevs {
			had[domainxml.HostdevName(hostdevSpec(h))] = true
		}
	}
	var check []int
	for i, h := range plan.Hostdevs {
		if (tfkit.Known(h.PCI) || (h.USB != nil && tfkit.Known(h.USB.Vendor) && tfkit.Known(h.USB.Product)) || tfkit.Known(h.MDev)) &&
			!had[domainxml.HostdevName(hostdevSpec(h))] {
			check = append(check, i)
		}
	}
	if len(check) == 0 {
		return
	}
	devs, err := c.PassthroughDevices(ctx)
	if err != nil {
		return
	}
	have := map[string]bool{}
	for _, nd := range devs {
		switch nd.Capability {
		case "pci":
			have[domainxml.HostdevName(domainxml.Hostdev{PCI: nd.PCIAddress})] = true
		case "usb_device":
			have[domainxml.HostdevName(domainxml.Hostdev{USBVendor: nd.VendorID, USBProduct: nd.ProductID})] = true
		case "mdev":
			have[domainxml.HostdevName(domainxml.Hostdev{MDev: nd.MDevUUID})] = true
		}
	}
	for _, i := range check {
		h := hostdevSpec(plan.Hostdevs[i])
		name := domainxml.HostdevName(h)
		if have[name] {
			continue
		}
		kind, attr := strings.Fields(name)[0], "pci"
		switch {
		case h.USBVendor != "":
			attr = "usb"
		case h.MDev != "":
			attr = "mdev"
		}
		capName := map[string]string{"pci": "pci", "usb": "usb_device", "mdev": "mdev"}[kind]
		d.AddAttributeError(path.Root("hostdev").AtListIndex(i).AtName(attr), "Host device not found",
			fmt.Sprintf("libvirt_domain %s: hostdev %d names %s, but host %s has no such device (the `libvirt_node_devices` data "+
				"source with capability = %q lists the ones it has). Fix the %s, or set running = false to only define the domain.",
				plan.Name.ValueString(), i, name, c.URI().String(), capName, attr))
	}
}

// validateHostdevs reports at validation what the schema cannot see: the same device
// twice, a boot order two devices share. Skipped while a value is unknown.
func validateHostdevs(m *Model, d *diag.Diagnostics) {
	for _, h := range m.Hostdevs {
		if h.PCI.IsUnknown() || h.USBAddress.IsUnknown() || h.MDev.IsUnknown() || h.BootOrder.IsUnknown() ||
			(h.USB != nil && (h.USB.Vendor.IsUnknown() || h.USB.Product.IsUnknown())) {
			return
		}
	}
	if len(m.Hostdevs) == 0 {
		return
	}
	for _, dk := range m.Disks {
		if dk.BootOrder.IsUnknown() {
			return
		}
	}
	s := domainxml.Spec{}
	domainDisks.toSpec(m, &s)
	domainHostdevs.toSpec(m, &s)
	if err := domainxml.ValidateHostdevs(s); err != nil {
		d.AddAttributeError(path.Root("hostdev"), "Invalid hostdev",
			fmt.Sprintf("libvirt_domain %s: %s.", m.Name.ValueString(), err))
	}
}
