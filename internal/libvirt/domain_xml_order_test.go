package libvirt

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// What libvirtxml writes for a USB hostdev named by ids comes out vendor first, and still
// reads back the same.
func TestVendorFirst(t *testing.T) {
	d := libvirtxml.Domain{Name: "x", Devices: &libvirtxml.DomainDeviceList{Hostdevs: []libvirtxml.DomainHostdev{{
		SubsysUSB: &libvirtxml.DomainHostdevSubsysUSB{Source: &libvirtxml.DomainHostdevSubsysUSBSource{
			Vendor:  &libvirtxml.DomainHostDevProductVendorID{ID: "0x046d"},
			Product: &libvirtxml.DomainHostDevProductVendorID{ID: "0xc52b"},
		}},
	}}}}
	text, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got := vendorFirst(text)
	v, p := strings.Index(got, `<vendor id="0x046d">`), strings.Index(got, `<product id="0xc52b">`)
	if v < 0 || p < 0 || v > p {
		t.Fatalf("vendor not first:\n%s", got)
	}
	var back libvirtxml.Domain
	if err := back.Unmarshal(got); err != nil {
		t.Fatal(err)
	}
	if s := back.Devices.Hostdevs[0].SubsysUSB.Source; s.Vendor.ID != "0x046d" || s.Product.ID != "0xc52b" {
		t.Errorf("read back %+v", s)
	}
}
