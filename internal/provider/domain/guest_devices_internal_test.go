package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// What libvirt has of guest devices reads into state only where the configuration
// manages it (or on import, where it is not libvirt's default); libvirt's defaults and
// filled-in sizes never show as drift.
func TestGuestDevicesFromSpec(t *testing.T) {
	heads, vram := uint(1), uint(16384)
	s := domainxml.Spec{Name: "gd", GuestDevices: domainxml.GuestDevices{
		Videos:    []domainxml.Video{{Model: "cirrus", VRAMKiB: &vram, Heads: &heads}},
		Watchdogs: []domainxml.Watchdog{{Model: "i6300esb", Action: "reset"}},
		RNGs:      []domainxml.RNG{{Model: "virtio", Backend: "/dev/urandom"}, {Model: "virtio", Backend: "/dev/random"}},
		VSock:     &domainxml.VSock{},
		Inputs:    []domainxml.Input{{Type: "tablet", Bus: "usb"}},
	}}
	// The group null: nothing shows, although the definition has it.
	prior := &Model{Name: types.StringValue("gd")}
	if m := fromSpec(s, prior); m.Devices != nil {
		t.Errorf("a null group in state: %+v", m.Devices)
	}
	// The group written, the kinds null: still nothing.
	prior = withGroups(prior)
	m := fromSpec(s, prior)
	if m.Devices == nil || m.Devices.Videos != nil || m.Devices.Watchdogs != nil || m.Devices.VSock != nil || m.Devices.Inputs != nil || m.Devices.MemBalloon != nil {
		t.Errorf("unmanaged devices in state: %+v", m.Devices)
	}
	// Managed: libvirt's sizes and defaults stay null as the configuration left them; a
	// declared ps2 mouse and the plain virtio memballoon (both read as none) come back.
	prior.Devices.Videos = []videoModel{{Model: types.StringValue("cirrus"), VRAMKiB: types.Int64Null(), Heads: types.Int64Value(1)}}
	prior.Devices.Watchdogs = []watchdogModel{{Model: types.StringValue("i6300esb")}}
	prior.Devices.RNGs = []rngModel{{}, {Backend: types.StringValue("/dev/random")}}
	prior.Devices.MemBalloon = &memballoonModel{Model: types.StringValue("virtio")}
	prior.Devices.VSock = &vsockModel{CID: types.Int64Null()}
	prior.Devices.Inputs = []inputModel{{Type: types.StringValue("tablet"), Bus: types.StringValue("usb")},
		{Type: types.StringValue("mouse"), Bus: types.StringValue("ps2")}}
	m = fromSpec(s, prior)
	if len(m.Devices.Videos) != 1 || !m.Devices.Videos[0].VRAMKiB.IsNull() || m.Devices.Videos[0].Heads.ValueInt64() != 1 {
		t.Errorf("video %+v", m.Devices.Videos)
	}
	if len(m.Devices.Watchdogs) != 1 || !m.Devices.Watchdogs[0].Action.IsNull() {
		t.Errorf("watchdog %+v", m.Devices.Watchdogs)
	}
	if r := m.Devices.RNGs; len(r) != 2 || !r[0].Model.IsNull() || !r[0].Backend.IsNull() || !r[1].Model.IsNull() || r[1].Backend.ValueString() != "/dev/random" {
		t.Errorf("rng %+v", r)
	}
	if m.Devices.MemBalloon == nil || m.Devices.MemBalloon.Model.ValueString() != "virtio" || m.Devices.VSock == nil || !m.Devices.VSock.CID.IsNull() || len(m.Devices.Inputs) != 2 {
		t.Errorf("managed: %+v", m.Devices.domainGuestDevicesModel)
	}
	if c := domainxml.Classify(specFromModel(prior), specFromModel(m), true, true); c != domainxml.ChangeNone {
		t.Errorf("read-back classifies as %s", c)
	}
	// Written empty: stays empty (the default).
	prior.Devices.Sounds = []soundModel{}
	if m := fromSpec(s, prior); m.Devices.Sounds == nil || len(m.Devices.Sounds) != 0 {
		t.Errorf("an empty list read back as %+v", m.Devices.Sounds)
	}
	// Import: everything the definition has but libvirt's own defaults (the cirrus video
	// only beside a graphical console, for which libvirt adds it).
	if imp := fromSpec(s, nil); len(imp.Devices.Videos) != 1 {
		t.Errorf("import without a console leaves out the video libvirt would not add: %+v", imp.Devices.Videos)
	}
	s.Graphics = domainxml.Graphics{Type: "vnc"}
	imp := fromSpec(s, nil)
	if imp.Devices.Videos != nil || imp.Devices.MemBalloon != nil {
		t.Errorf("import shows libvirt's default video or memballoon: %+v", imp.Devices)
	}
	s.GuestDevices.Videos[0].Model = "vga"
	s.GuestDevices.Videos = append(s.GuestDevices.Videos, domainxml.Video{Model: "qxl", VRAMKiB: new(uint(32768))})
	imp = fromSpec(s, nil)
	if v := imp.Devices.Videos; len(v) != 2 || !v[0].VRAMKiB.IsNull() || !v[0].Heads.IsNull() || v[1].VRAMKiB.ValueInt64() != 32768 {
		t.Errorf("imported videos: %+v", v)
	}
	if len(imp.Devices.Watchdogs) != 1 || !imp.Devices.Watchdogs[0].Action.IsNull() || imp.Devices.VSock == nil || len(imp.Devices.Inputs) != 1 ||
		len(imp.Devices.RNGs) != 2 || imp.Devices.RNGs[1].Backend.ValueString() != "/dev/random" {
		t.Errorf("import: %+v", imp.Devices.domainGuestDevicesModel)
	}
	// A domain with none of them imports no group.
	if imp := fromSpec(domainxml.Spec{Name: "gd"}, nil); imp.Devices != nil {
		t.Errorf("import of a domain without guest devices: %+v", imp.Devices)
	}
}

// A plan stored as state holds no unknowns in the group.
func TestGuestDevicesFillUnknowns(t *testing.T) {
	m := withGroups(&Model{})
	m.Devices.Videos = []videoModel{{Model: types.StringUnknown(), Heads: types.Int64Unknown()}}
	m.Devices.TPM = &tpmModel{PersistentState: types.BoolUnknown()}
	fillUnknowns(m)
	if v := m.Devices.Videos[0]; !v.Model.IsNull() || !v.Heads.IsNull() || !m.Devices.TPM.PersistentState.IsNull() {
		t.Errorf("unknowns left: %+v %+v", v, m.Devices.TPM)
	}
}

// The TPM's defaults read back null where the configuration (or an import) left them
// out, and what differs shows.
func TestTPMFromSpec(t *testing.T) {
	s := domainxml.Spec{Name: "t", TPM: &domainxml.TPM{Model: "tpm-crb", Backend: "emulator", Version: "2.0", PersistentState: true}}
	prior := withGroups(&Model{Name: types.StringValue("t")})
	if m := fromSpec(s, prior); m.Devices.TPM != nil {
		t.Errorf("unmanaged tpm: %+v", m.Devices.TPM)
	}
	prior.Devices.TPM = &tpmModel{}
	m := fromSpec(s, prior)
	if tp := m.Devices.TPM; tp == nil || !tp.Model.IsNull() || !tp.Backend.IsNull() || !tp.Version.IsNull() || !tp.PersistentState.IsNull() {
		t.Errorf("tpm = {}: %+v", tp)
	}
	if c := domainxml.Classify(specFromModel(prior), specFromModel(m), true, true); c != domainxml.ChangeNone {
		t.Errorf("read-back classifies as %s", c)
	}
	s.TPM.Model, s.TPM.PersistentState = "tpm-tis", false
	m = fromSpec(s, nil)
	if tp := m.Devices.TPM; tp == nil || tp.Model.ValueString() != "tpm-tis" || !tp.Backend.IsNull() || tp.PersistentState.ValueBool() {
		t.Errorf("imported: %+v", tp)
	}
}
