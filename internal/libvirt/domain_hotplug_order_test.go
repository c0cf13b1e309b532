package libvirt

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// A USB hostdev's own XML, as an attach or detach sends it (indented, no <domain>
// around it), comes out vendor first too.
func TestVendorFirstDeviceXML(t *testing.T) {
	h := libvirtxml.DomainHostdev{Managed: "yes", SubsysUSB: &libvirtxml.DomainHostdevSubsysUSB{Source: &libvirtxml.DomainHostdevSubsysUSBSource{
		Vendor:  &libvirtxml.DomainHostDevProductVendorID{ID: "0x046d"},
		Product: &libvirtxml.DomainHostDevProductVendorID{ID: "0xc52b"},
	}}}
	text, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got := vendorFirst(text)
	if v, p := strings.Index(got, `<vendor id="0x046d">`), strings.Index(got, `<product id="0xc52b">`); v < 0 || p < 0 || v > p {
		t.Fatalf("vendor not first:\n%s", got)
	}
}
