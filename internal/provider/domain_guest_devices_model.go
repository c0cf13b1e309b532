package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// specUint is a known, non-negative number as the spec wants it; nil when null.
func specUint(v types.Int64) *uint {
	if v.IsNull() || v.IsUnknown() || v.ValueInt64() < 0 {
		return nil
	}
	n := uint(v.ValueInt64())
	return &n
}

func specBool(v types.Bool) *bool {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	b := v.ValueBool()
	return &b
}

func modelUint(p *uint) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}

func modelBool(p *bool) types.Bool {
	if p == nil {
		return types.BoolNull()
	}
	return types.BoolValue(*p)
}

func guestDevicesToSpec(m *domainModel, s *domainxml.Spec) {
	g := &s.GuestDevices
	if v := m.Devices.Video; v != nil {
		g.Video = &domainxml.Video{Model: v.Model.ValueString(), VRAMKiB: specUint(v.VRAMKiB), Heads: specUint(v.Heads), Accel3D: specBool(v.Accel3D)}
	}
	if r := m.Devices.RNG; r != nil {
		g.RNG = &domainxml.RNG{Model: r.Model.ValueString(), Backend: r.Backend.ValueString(), RateBytes: specUint(r.RateBytes),
			RatePeriodMS: specUint(r.RatePeriodMS)}
	}
	if w := m.Devices.Watchdog; w != nil {
		g.Watchdog = &domainxml.Watchdog{Model: w.Model.ValueString(), Action: w.Action.ValueString()}
	}
	if p := m.Devices.Panic; p != nil {
		g.Panic = &domainxml.Panic{Model: p.Model.ValueString()}
	}
	if v := m.Devices.VSock; v != nil {
		g.VSock = &domainxml.VSock{CID: specUint(v.CID)}
	}
	if b := m.Devices.MemBalloon; b != nil {
		g.MemBalloon = &domainxml.MemBalloon{Model: b.Model.ValueString(), StatsPeriodSec: specUint(b.StatsPeriodSec),
			AutoDeflate: specBool(b.AutoDeflate), FreePageReporting: specBool(b.FreePageReporting)}
	}
	if p := m.Devices.Sound; p != nil {
		g.Sound = &domainxml.Sound{Model: p.Model.ValueString()}
	}
	for _, in := range m.Devices.Inputs {
		g.Inputs = append(g.Inputs, domainxml.Input{Type: in.Type.ValueString(), Bus: in.Bus.ValueString()})
	}
}

// guestDevicesFromSpec shows the devices the configuration manages (prior has them),
// or, with no prior configuration (an import), every one the definition has that is not
// libvirt's own default (an update that leaves one out then takes it away). Sizes libvirt fills in (a video's vram and heads) stay null
// when the configuration left them out.
func guestDevicesFromSpec(s domainxml.Spec, prior, m *domainModel) {
	g := s.GuestDevices
	imported := prior.Name.IsNull()
	manage := func(priorSet bool) bool { return imported || priorSet }
	m.Devices.domainGuestDevicesModel = domainGuestDevicesModel{}
	// An import leaves out the video libvirt adds for a graphical console (as it does
	// the plain memballoon and the ps2 inputs): a configuration written for the domain
	// does not name it.
	if v := g.Video; v != nil && (prior.Devices.Video != nil || imported && !domainxml.DefaultVideo(v)) {
		vm := &videoModel{Model: types.StringValue(v.Model), VRAMKiB: modelUint(v.VRAMKiB), Heads: modelUint(v.Heads), Accel3D: modelBool(v.Accel3D)}
		if !imported {
			vm.VRAMKiB = keepNullInt(prior.Devices.Video.VRAMKiB, vm.VRAMKiB)
			vm.Heads = keepNullInt(prior.Devices.Video.Heads, vm.Heads)
		}
		m.Devices.Video = vm
	}
	if r := g.RNG; r != nil && manage(prior.Devices.RNG != nil) {
		m.Devices.RNG = &rngModel{Model: types.StringValue(r.Model), Backend: types.StringValue(r.Backend), RateBytes: modelUint(r.RateBytes),
			RatePeriodMS: modelUint(r.RatePeriodMS)}
	}
	if w := g.Watchdog; w != nil && manage(prior.Devices.Watchdog != nil) {
		m.Devices.Watchdog = &watchdogModel{Model: types.StringValue(w.Model), Action: types.StringValue(w.Action)}
	}
	if p := g.Panic; p != nil && manage(prior.Devices.Panic != nil) {
		m.Devices.Panic = &panicModel{Model: types.StringValue(p.Model)}
	}
	if v := g.VSock; v != nil && manage(prior.Devices.VSock != nil) {
		m.Devices.VSock = &vsockModel{CID: modelUint(v.CID)}
	}
	// libvirt's plain virtio memballoon reads as none: a configuration that asks for it
	// gets it back.
	if b := g.MemBalloon; b != nil && manage(prior.Devices.MemBalloon != nil) {
		m.Devices.MemBalloon = &memballoonModel{Model: types.StringValue(b.Model), StatsPeriodSec: modelUint(b.StatsPeriodSec),
			AutoDeflate: modelBool(b.AutoDeflate), FreePageReporting: modelBool(b.FreePageReporting)}
	} else if b == nil && !imported && prior.Devices.MemBalloon != nil {
		m.Devices.MemBalloon = &memballoonModel{Model: types.StringValue("virtio"), StatsPeriodSec: types.Int64Null(),
			AutoDeflate: types.BoolNull(), FreePageReporting: types.BoolNull()}
	}
	if p := g.Sound; p != nil && manage(prior.Devices.Sound != nil) {
		m.Devices.Sound = &soundModel{Model: types.StringValue(p.Model)}
	}
	if manage(len(prior.Devices.Inputs) > 0) {
		for _, in := range g.Inputs {
			m.Devices.Inputs = append(m.Devices.Inputs, inputModel{Type: types.StringValue(in.Type), Bus: types.StringValue(in.Bus)})
		}
		// The ps2 mouse and keyboard read as none: libvirt always has them.
		for _, in := range prior.Devices.Inputs {
			if known(in.Type) && known(in.Bus) && domainxml.ImplicitInput(domainxml.Input{Type: in.Type.ValueString(), Bus: in.Bus.ValueString()}) {
				m.Devices.Inputs = append(m.Devices.Inputs, in)
			}
		}
	}
}

// keepNullInt is got, or null when the configuration left it out (libvirt's default).
func keepNullInt(prior, got types.Int64) types.Int64 {
	if prior.IsNull() {
		return types.Int64Null()
	}
	return got
}

// validateGuestDevices checks the settings that go together, naming the block.
func validateGuestDevices(m *domainModel, diags *diag.Diagnostics) {
	if v := m.Devices.Video; v != nil && known(v.Model) {
		if known(v.Accel3D) && v.Accel3D.ValueBool() && v.Model.ValueString() != "virtio" {
			diags.AddAttributeError(path.Root("video").AtName("accel3d"), "accel3d needs a virtio video",
				fmt.Sprintf("video: model %q has no 3D acceleration; set model = \"virtio\" (virtio-gpu) or remove accel3d.", v.Model.ValueString()))
		}
		if v.Model.ValueString() == "none" && (!v.VRAMKiB.IsNull() || !v.Heads.IsNull() || !v.Accel3D.IsNull()) {
			diags.AddAttributeError(path.Root("video"), "video model \"none\" has no settings",
				"video: model = \"none\" means no video device; remove vram_kib, heads and accel3d.")
		}
	}
	if r := m.Devices.RNG; r != nil && !r.RatePeriodMS.IsNull() && r.RateBytes.IsNull() {
		diags.AddAttributeError(path.Root("rng").AtName("rate_period_ms"), "rate_period_ms needs rate_bytes",
			"rng: rate_period_ms is the period of a rate limit; set rate_bytes (the bytes allowed per period) or remove rate_period_ms.")
	}
	if b := m.Devices.MemBalloon; b != nil && known(b.Model) && b.Model.ValueString() == "none" &&
		(!b.StatsPeriodSec.IsNull() || !b.AutoDeflate.IsNull() || !b.FreePageReporting.IsNull()) {
		diags.AddAttributeError(path.Root("memballoon"), "memballoon model \"none\" has no settings",
			"memballoon: model = \"none\" removes the balloon; remove stats_period_sec, autodeflate and free_page_reporting.")
	}
	for _, in := range m.Devices.Inputs {
		if known(in.Type) && known(in.Bus) && in.Type.ValueString() == "tablet" && in.Bus.ValueString() == "ps2" {
			diags.AddAttributeError(path.Root("input"), "A tablet cannot be on ps2",
				"input: type = \"tablet\" needs bus = \"usb\" or \"virtio\" (ps2 has only mice and keyboards).")
		}
	}
}
