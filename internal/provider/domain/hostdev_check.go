package domain

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

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
