package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// What libvirt stores (lower-case hex, the PCI domain, no zero padding, the default mdev
// model) reads back as the configuration wrote it; on import (no prior) as libvirt has it.
func TestHostdevFromSpec_keepsWrittenForms(t *testing.T) {
	prior := &Model{}
	prior.Hostdevs = []hostdevModel{
		{PCI: types.StringValue("3B:00.0"), Managed: types.BoolValue(true)},
		{USB: &hostdevUSB{Vendor: types.StringValue("046D"), Product: types.StringValue("0xC52B")}, Managed: types.BoolValue(true)},
		{USBAddress: types.StringValue("001:005"), Managed: types.BoolValue(false)},
		{MDev: types.StringValue("C2177883-F1BB-47F0-914D-32A22E3A8804"), MDevModel: types.StringNull(), Managed: types.BoolValue(true)},
	}
	s := domainxml.Spec{Hostdevs: []domainxml.Hostdev{
		{PCI: "0000:3b:00.0", Managed: true},
		{USBVendor: "0x046d", USBProduct: "0xc52b", Managed: true},
		{USBAddress: "1:5"},
		{MDev: "c2177883-f1bb-47f0-914d-32a22e3a8804", MDevModel: "vfio-pci", Managed: true},
	}}
	m := &Model{}
	domainHostdevs.fromSpec(s, prior, m)
	h := m.Hostdevs
	if h[0].PCI.ValueString() != "3B:00.0" || h[1].USB.Vendor.ValueString() != "046D" || h[1].USB.Product.ValueString() != "0xC52B" ||
		h[2].USBAddress.ValueString() != "001:005" || h[3].MDev.ValueString() != "C2177883-F1BB-47F0-914D-32A22E3A8804" || !h[3].MDevModel.IsNull() {
		t.Errorf("read back %+v", h)
	}
	// A different device is read as libvirt has it.
	s.Hostdevs[0].PCI = "0000:3b:00.1"
	domainHostdevs.fromSpec(s, prior, m)
	if m.Hostdevs[0].PCI.ValueString() != "0000:3b:00.1" {
		t.Errorf("pci %s", m.Hostdevs[0].PCI)
	}
	// Import: no prior.
	domainHostdevs.fromSpec(s, &Model{}, m)
	if m.Hostdevs[3].MDevModel.ValueString() != "vfio-pci" || m.Hostdevs[1].USB.Vendor.ValueString() != "0x046d" {
		t.Errorf("imported %+v", m.Hostdevs)
	}
	// And back: the spec the model asks for is the same as libvirt's.
	back := domainxml.Spec{}
	domainHostdevs.toSpec(&Model{domainHostdevsModel: domainHostdevsModel{Hostdevs: prior.Hostdevs}}, &back)
	s.Hostdevs[0].PCI = "0000:3b:00.0"
	if domainxml.Classify(back, s, true, true) != domainxml.ChangeNone {
		t.Errorf("written forms plan a change: %+v vs %+v", back.Hostdevs, s.Hostdevs)
	}
}
