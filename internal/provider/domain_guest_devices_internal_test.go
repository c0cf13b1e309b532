package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// What libvirt has of guest devices reads into state only where the configuration
// manages it (or on import); libvirt's defaults and filled-in sizes never show as drift.
func TestGuestDevicesFromSpec(t *testing.T) {
	heads, vram := uint(1), uint(16384)
	s := domainxml.Spec{Name: "gd", GuestDevices: domainxml.GuestDevices{
		Video:    &domainxml.Video{Model: "cirrus", VRAMKiB: &vram, Heads: &heads},
		Watchdog: &domainxml.Watchdog{Model: "i6300esb", Action: "reset"},
		VSock:    &domainxml.VSock{},
		Inputs:   []domainxml.Input{{Type: "tablet", Bus: "usb"}},
	}}
	// Not managed: nothing shows, although the definition has it.
	prior := &domainModel{Name: types.StringValue("gd")}
	m := fromSpec(s, prior)
	if m.Devices.Video != nil || m.Devices.Watchdog != nil || m.Devices.VSock != nil || m.Devices.Inputs != nil || m.Devices.MemBalloon != nil {
		t.Errorf("unmanaged devices in state: %+v", m.Devices.domainGuestDevicesModel)
	}
	// Managed: libvirt's sizes stay null as the configuration left them; a declared ps2
	// mouse and the plain virtio memballoon (both read as none) come back.
	prior.Devices.Video = &videoModel{Model: types.StringValue("cirrus"), VRAMKiB: types.Int64Null(), Heads: types.Int64Value(1)}
	prior.Devices.MemBalloon = &memballoonModel{Model: types.StringValue("virtio")}
	prior.Devices.VSock = &vsockModel{CID: types.Int64Null()}
	prior.Devices.Inputs = []inputModel{{Type: types.StringValue("tablet"), Bus: types.StringValue("usb")},
		{Type: types.StringValue("mouse"), Bus: types.StringValue("ps2")}}
	m = fromSpec(s, prior)
	if m.Devices.Video == nil || !m.Devices.Video.VRAMKiB.IsNull() || m.Devices.Video.Heads.ValueInt64() != 1 {
		t.Errorf("video %+v", m.Devices.Video)
	}
	if m.Devices.MemBalloon == nil || m.Devices.MemBalloon.Model.ValueString() != "virtio" || m.Devices.VSock == nil || !m.Devices.VSock.CID.IsNull() || len(m.Devices.Inputs) != 2 {
		t.Errorf("managed: %+v", m.Devices.domainGuestDevicesModel)
	}
	if c := domainxml.Classify(specFromModel(prior), specFromModel(m), true, true); c != domainxml.ChangeNone {
		t.Errorf("read-back classifies as %s", c)
	}
	// Import: everything the definition has but libvirt's own defaults.
	imp := fromSpec(s, nil)
	if imp.Devices.Video != nil {
		t.Errorf("import shows libvirt's default video: %+v", imp.Devices.Video)
	}
	s.GuestDevices.Video.Model = "vga"
	imp = fromSpec(s, nil)
	if imp.Devices.Video == nil || imp.Devices.Video.VRAMKiB.ValueInt64() != 16384 || imp.Devices.Watchdog == nil || imp.Devices.VSock == nil || len(imp.Devices.Inputs) != 1 || imp.Devices.MemBalloon != nil {
		t.Errorf("import: %+v", imp.Devices.domainGuestDevicesModel)
	}
}
