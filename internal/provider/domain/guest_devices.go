package domain

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainGuestDevicesModel: devices.video, rng, watchdog, sound (lists: libvirt allows
// several), panic, vsock, memballoon and the input set (domainxml's guest_devices
// family). A kind left null is not managed: the domain keeps what its definition has
// (libvirt's defaults included) and nothing of it enters state; one in state (written, or
// read on import) is taken away when it is removed (DroppedGuestDevices, in Update).
type domainGuestDevicesModel struct {
	Videos     []videoModel     `tfsdk:"video"`
	RNGs       []rngModel       `tfsdk:"rng"`
	Watchdogs  []watchdogModel  `tfsdk:"watchdog"`
	Panic      *panicModel      `tfsdk:"panic"`
	VSock      *vsockModel      `tfsdk:"vsock"`
	MemBalloon *memballoonModel `tfsdk:"memballoon"`
	Sounds     []soundModel     `tfsdk:"sound"`
	Inputs     []inputModel     `tfsdk:"input"`
}

type videoModel struct {
	Model   types.String `tfsdk:"model"`
	VRAMKiB types.Int64  `tfsdk:"vram_kib"`
	Heads   types.Int64  `tfsdk:"heads"`
	Accel3D types.Bool   `tfsdk:"accel3d"`
}

type rngModel struct {
	Model        types.String `tfsdk:"model"`
	Backend      types.String `tfsdk:"backend"`
	RateBytes    types.Int64  `tfsdk:"rate_bytes"`
	RatePeriodMS types.Int64  `tfsdk:"rate_period_ms"`
}

type watchdogModel struct {
	Model  types.String `tfsdk:"model"`
	Action types.String `tfsdk:"action"`
}

type panicModel struct {
	Model types.String `tfsdk:"model"`
}

type vsockModel struct {
	CID types.Int64 `tfsdk:"cid"`
}

type memballoonModel struct {
	Model             types.String `tfsdk:"model"`
	StatsPeriodSec    types.Int64  `tfsdk:"stats_period_sec"`
	AutoDeflate       types.Bool   `tfsdk:"autodeflate"`
	FreePageReporting types.Bool   `tfsdk:"free_page_reporting"`
}

type soundModel struct {
	Model types.String `tfsdk:"model"`
}

type inputModel struct {
	Type types.String `tfsdk:"type"`
	Bus  types.String `tfsdk:"bus"`
}

// unmanagedNote is what leaving a guest device out means.
const unmanagedNote = " Null (the default): the domain keeps what its definition has (libvirt's default, or what another tool " +
	"wrote) and nothing of it enters state (an import writes what is not libvirt's default); removing every entry takes the " +
	"device away."

var domainGuestDevices = family{
	group: groupDevices,
	attributes: map[string]schema.Attribute{
		"video": guestList("The guest's video cards, the primary first, e.g. `[{ model = \"virtio\" }]`. libvirt gives a domain "+
			"with `graphics` a `cirrus` card of its own when this is null (it never enters state). QEMU takes `qxl` and `virtio` "+
			"as further cards.", map[string]schema.Attribute{
			"model": requiredEnum("`virtio`, `qxl`, `vga`, `cirrus`, `bochs`, `ramfb`, `vmvga` or `none` (no video device at all). "+
				"A card with more than these attributes say (a driver, a resolution, a qxl's own ram or vgamem) is imported "+
				"into `device_xml`.", domainxml.VideoModels...),
			"vram_kib": guestInt("Video memory in KiB. Null: the model's (16384 for `cirrus` and `vga`, 65536 for `qxl`).", 1),
			"heads":    guestInt("Number of screens, 1 to 16. Null: 1.", 1, int64validator.AtMost(16)),
			"accel3d": schema.BoolAttribute{MarkdownDescription: "3D acceleration (virgl); `model = \"virtio\"` only, and QEMU needs " +
				"a render node on the host to start the guest." + restartNote, Optional: true},
		}),
		"rng": guestList("Random number generators fed from a host device: the guest's `/dev/hwrng`, e.g. `[{}]`.", map[string]schema.Attribute{
			"model": optionalEnum("`virtio` (null: this), `virtio-transitional` or `virtio-non-transitional`.", domainxml.RNGModels...),
			"backend": schema.StringAttribute{MarkdownDescription: "The host device read for entropy. Null: `/dev/urandom`." + restartNote,
				Optional: true, Validators: []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^/dev/\S+$`), "must be a device path under /dev, e.g. /dev/urandom")}},
			"rate_bytes":     guestInt("Bytes the guest may read per `rate_period_ms`. Null: no limit.", 1),
			"rate_period_ms": guestInt("The period of `rate_bytes`, in milliseconds (needs `rate_bytes`). Null: libvirt's, 1000.", 1),
		}),
		"watchdog": guestList("Watchdog timers, and what happens to the domain when the guest stops petting one (libvirt 9.1 "+
			"or later takes more than one).", map[string]schema.Attribute{
			"model": requiredEnum("`i6300esb` (PCI, x86), `ib700` (ISA, x86), `itco` (q35's own) or `diag288` (s390).", domainxml.WatchdogModels...),
			"action": optionalEnum("`reset` (null: this), `shutdown`, `poweroff`, `pause`, `none`, `dump` or `inject-nmi`.",
				domainxml.WatchdogActions...),
		}),
		"panic": guestDevice("A panic notifier: the guest tells the host it crashed, and `events.on_crash` applies.", map[string]schema.Attribute{
			"model": requiredEnum("`isa` (x86's pvpanic), `pvpanic` (PCI), `hyperv`, `pseries` or `s390`.", domainxml.PanicModels...),
		}),
		"vsock": guestDevice("A virtio vsock (AF_VSOCK sockets between host and guest), e.g. `{}`. Starting the domain needs "+
			"`/dev/vhost-vsock` on the host (the `vhost_vsock` module).", map[string]schema.Attribute{
			"cid": guestInt("The guest's context id, 3 or more, unique on the host. Null: libvirt assigns a free one each time "+
				"the domain starts (it never enters state).", 3, int64validator.AtMost(4294967294)),
		}),
		"memballoon": guestDevice("The memory balloon. libvirt gives every domain a plain `virtio` one when this is null (it "+
			"never enters state); `{ model = \"none\" }` removes it.", map[string]schema.Attribute{
			"model": requiredEnum("`virtio`, `virtio-transitional`, `virtio-non-transitional`, `xen` or `none`.", domainxml.MemBalloonModels...),
			"stats_period_sec": schema.Int64Attribute{MarkdownDescription: "How often the guest reports memory statistics, in seconds " +
				"(0: never). Null: never. A change of this alone applies live on a running domain (no restart).", Optional: true,
				Validators: []validator.Int64{int64validator.Between(0, math.MaxInt32)}},
			"autodeflate": schema.BoolAttribute{MarkdownDescription: "Deflate the balloon when the guest runs out of memory." + restartNote,
				Optional: true},
			"free_page_reporting": schema.BoolAttribute{MarkdownDescription: "The guest hands pages it frees back to the host." + restartNote,
				Optional: true},
		}),
		"sound": guestList("Sound cards, e.g. `[{ model = \"ich9\" }]`. libvirt adds an `<audio type='none'>` backend for them.",
			map[string]schema.Attribute{
				"model": requiredEnum("`ich6`, `ich7`, `ich9`, `ac97`, `es1370`, `sb16`, `pcspk` or `usb`.", domainxml.SoundModels...),
			}),
		"input": schema.SetNestedAttribute{
			MarkdownDescription: "Input devices, e.g. `[{ type = \"tablet\", bus = \"usb\" }]` (an absolute pointer, so a VNC " +
				"cursor follows the mouse). libvirt gives every x86 domain a ps2 mouse and keyboard; they are not drift and need " +
				"not be declared." + unmanagedNote + restartNote,
			Optional: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"type": requiredEnum("`tablet`, `mouse` or `keyboard`.", domainxml.InputTypes...),
				"bus":  requiredEnum("`usb`, `virtio` or `ps2` (a tablet cannot be on ps2).", domainxml.InputBuses...),
			}},
		},
	},
	toSpec:       guestDevicesToSpec,
	fromSpec:     guestDevicesFromSpec,
	validate:     validateGuestDevices,
	fillUnknowns: func(m *Model) { nullUnknowns(&m.Devices.domainGuestDevicesModel) },
}

// guestDevice is an optional single guest device.
func guestDevice(desc string, attrs map[string]schema.Attribute) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{MarkdownDescription: desc + unmanagedNote + restartNote, Optional: true, Attributes: attrs}
}

// guestList is an optional list of guest devices of one kind.
func guestList(desc string, attrs map[string]schema.Attribute) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{MarkdownDescription: desc + unmanagedNote + restartNote, Optional: true,
		NestedObject: schema.NestedAttributeObject{Attributes: attrs}}
}

func requiredEnum(desc string, values ...string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc + restartNote, Required: true, Validators: []validator.String{stringvalidator.OneOf(values...)}}
}

// optionalEnum is an enum whose null means libvirt's default (the description names it):
// nothing inside a group is defaulted into state.
func optionalEnum(desc string, values ...string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc + restartNote, Optional: true, Validators: []validator.String{stringvalidator.OneOf(values...)}}
}

func guestInt(desc string, least int64, more ...validator.Int64) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc + restartNote, Optional: true,
		Validators: append([]validator.Int64{int64validator.AtLeast(least)}, more...)}
}

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

func modelBool(p *bool) types.Bool {
	if p == nil {
		return types.BoolNull()
	}
	return types.BoolValue(*p)
}

func guestDevicesToSpec(m *Model, s *domainxml.Spec) {
	g, d := &s.GuestDevices, m.Devices
	for _, v := range d.Videos {
		g.Videos = append(g.Videos, domainxml.Video{Model: v.Model.ValueString(), VRAMKiB: specUint(v.VRAMKiB), Heads: specUint(v.Heads), Accel3D: specBool(v.Accel3D)})
	}
	for _, r := range d.RNGs {
		g.RNGs = append(g.RNGs, domainxml.RNG{Model: r.Model.ValueString(), Backend: r.Backend.ValueString(), RateBytes: specUint(r.RateBytes),
			RatePeriodMS: specUint(r.RatePeriodMS)})
	}
	for _, w := range d.Watchdogs {
		g.Watchdogs = append(g.Watchdogs, domainxml.Watchdog{Model: w.Model.ValueString(), Action: w.Action.ValueString()})
	}
	if p := d.Panic; p != nil {
		g.Panic = &domainxml.Panic{Model: p.Model.ValueString()}
	}
	if v := d.VSock; v != nil {
		g.VSock = &domainxml.VSock{CID: specUint(v.CID)}
	}
	if b := d.MemBalloon; b != nil {
		g.MemBalloon = &domainxml.MemBalloon{Model: b.Model.ValueString(), StatsPeriodSec: specUint(b.StatsPeriodSec),
			AutoDeflate: specBool(b.AutoDeflate), FreePageReporting: specBool(b.FreePageReporting)}
	}
	for _, p := range d.Sounds {
		g.Sounds = append(g.Sounds, domainxml.Sound{Model: p.Model.ValueString()})
	}
	for _, in := range d.Inputs {
		g.Inputs = append(g.Inputs, domainxml.Input{Type: in.Type.ValueString(), Bus: in.Bus.ValueString()})
	}
}

// guestDevicesFromSpec shows the kinds the configuration manages (prior has them), or
// on import every kind the definition has that is not libvirt's own default. A kind
// prior left null stays null whatever libvirt has. Within an entry, what libvirt fills in
// (a video's vram and heads, an rng's model and backend, a watchdog's action) stays null
// where the entry at the same place in prior left it null, or on import where it is
// libvirt's default.
func guestDevicesFromSpec(s domainxml.Spec, prior, m *Model) {
	g, p := s.GuestDevices, prior.Devices
	importing := isImport(prior)
	m.Devices.domainGuestDevicesModel = domainGuestDevicesModel{}
	d := &m.Devices.domainGuestDevicesModel
	// An import leaves out the video libvirt adds for a graphical console (as it does
	// the plain memballoon and the ps2 inputs): a configuration written for the domain
	// does not name it. Without a console libvirt adds none: the video is the user's.
	if importing && domainxml.DefaultVideos(g.Videos) && hasConsole(s) {
		g.Videos = nil
	}
	d.Videos = entries(g.Videos, p.Videos, importing, func(v domainxml.Video, pv *videoModel) videoModel {
		vm := videoModel{Model: types.StringValue(v.Model), VRAMKiB: tfkit.Int64FromPtr(v.VRAMKiB), Heads: tfkit.Int64FromPtr(v.Heads), Accel3D: modelBool(v.Accel3D)}
		if pv != nil { // the sizes libvirt fills in for the model, unless written
			vm.VRAMKiB, vm.Heads = keepNullInt(pv.VRAMKiB, vm.VRAMKiB), keepNullInt(pv.Heads, vm.Heads)
			return vm
		}
		if def := domainxml.DefaultVRAMKiB(v.Model); v.VRAMKiB != nil && *v.VRAMKiB == def {
			vm.VRAMKiB = types.Int64Null()
		}
		if v.Heads != nil && *v.Heads == 1 {
			vm.Heads = types.Int64Null()
		}
		return vm
	})
	d.RNGs = entries(g.RNGs, p.RNGs, importing, func(r domainxml.RNG, pr *rngModel) rngModel {
		var pm, pb types.String
		if pr != nil {
			pm, pb = pr.Model, pr.Backend
		}
		return rngModel{Model: orDefault(pm, r.Model, "virtio"), Backend: orDefault(pb, r.Backend, domainxml.DefaultRNGBackend),
			RateBytes: tfkit.Int64FromPtr(r.RateBytes), RatePeriodMS: tfkit.Int64FromPtr(r.RatePeriodMS)}
	})
	d.Watchdogs = entries(g.Watchdogs, p.Watchdogs, importing, func(w domainxml.Watchdog, pw *watchdogModel) watchdogModel {
		var pa types.String
		if pw != nil {
			pa = pw.Action
		}
		return watchdogModel{Model: types.StringValue(w.Model), Action: orDefault(pa, w.Action, "reset")}
	})
	d.Sounds = entries(g.Sounds, p.Sounds, importing, func(x domainxml.Sound, _ *soundModel) soundModel {
		return soundModel{Model: types.StringValue(x.Model)}
	})
	manage := func(priorSet bool) bool { return importing || priorSet }
	if x := g.Panic; x != nil && manage(p.Panic != nil) {
		d.Panic = &panicModel{Model: types.StringValue(x.Model)}
	}
	if v := g.VSock; v != nil && manage(p.VSock != nil) {
		d.VSock = &vsockModel{CID: tfkit.Int64FromPtr(v.CID)} // an auto cid reads as none
	}
	// libvirt's plain virtio memballoon reads as none: a configuration that asks for it
	// gets it back.
	if b := g.MemBalloon; b != nil && manage(p.MemBalloon != nil) {
		d.MemBalloon = &memballoonModel{Model: types.StringValue(b.Model), StatsPeriodSec: tfkit.Int64FromPtr(b.StatsPeriodSec),
			AutoDeflate: modelBool(b.AutoDeflate), FreePageReporting: modelBool(b.FreePageReporting)}
	} else if b == nil && p.MemBalloon != nil {
		d.MemBalloon = &memballoonModel{Model: types.StringValue("virtio"), StatsPeriodSec: types.Int64Null(),
			AutoDeflate: types.BoolNull(), FreePageReporting: types.BoolNull()}
	}
	switch {
	case importing && len(g.Inputs) > 0 || len(p.Inputs) > 0:
		d.Inputs = []inputModel{}
		for _, in := range g.Inputs {
			d.Inputs = append(d.Inputs, inputModel{Type: types.StringValue(in.Type), Bus: types.StringValue(in.Bus)})
		}
		// The ps2 mouse and keyboard read as none: libvirt always has them.
		for _, in := range p.Inputs {
			if tfkit.Known(in.Type) && tfkit.Known(in.Bus) && domainxml.ImplicitInput(domainxml.Input{Type: in.Type.ValueString(), Bus: in.Bus.ValueString()}) {
				d.Inputs = append(d.Inputs, in)
			}
		}
	case p.Inputs != nil:
		d.Inputs = []inputModel{} // written as an empty set
	}
}

// entries is a list kind of the model from what libvirt has (got): null when prior left
// it null (but on import, where it is null only when libvirt has none), empty when prior
// wrote it empty (the default: not managed); else every entry of got, each made by one
// from the entry at its place in prior (nil past prior's end, and on import).
func entries[D, M any](got []D, prior []M, importing bool, one func(D, *M) M) []M {
	switch {
	case importing && len(got) == 0, !importing && prior == nil:
		return nil
	case !importing && len(prior) == 0:
		return []M{}
	}
	out := make([]M, 0, len(got))
	for i, x := range got {
		var p *M
		if i < len(prior) {
			p = &prior[i]
		}
		out = append(out, one(x, p))
	}
	return out
}

// orDefault is got, or null where prior (the value written at this place) is null and
// got is what null means (def; empty: libvirt wrote nothing, which means def too).
func orDefault(prior types.String, got, def string) types.String {
	if got == "" {
		got = def
	}
	if prior.IsNull() && got == def {
		return types.StringNull()
	}
	return types.StringValue(got)
}

// keepNullInt is got, or null when the configuration left it out (libvirt's default).
func keepNullInt(prior, got types.Int64) types.Int64 {
	if prior.IsNull() {
		return types.Int64Null()
	}
	return got
}

// nullUnknowns sets every unknown value in the model v points to (nested models and
// lists of them walked) to null: a plan stored as state holds no unknowns in a group.
func nullUnknowns(v any) { nullUnknownsIn(reflect.ValueOf(v).Elem()) }

func nullUnknownsIn(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			nullUnknownsIn(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			nullUnknownsIn(v.Index(i))
		}
	case reflect.Struct:
		switch x := v.Interface().(type) {
		case types.String:
			if x.IsUnknown() {
				v.Set(reflect.ValueOf(types.StringNull()))
			}
		case types.Int64:
			if x.IsUnknown() {
				v.Set(reflect.ValueOf(types.Int64Null()))
			}
		case types.Bool:
			if x.IsUnknown() {
				v.Set(reflect.ValueOf(types.BoolNull()))
			}
		default:
			for i := range v.NumField() {
				nullUnknownsIn(v.Field(i))
			}
		}
	}
}

// validateGuestDevices checks the settings that go together, naming the entry.
func validateGuestDevices(m *Model, diags *diag.Diagnostics) {
	at := func(kind string) path.Path { return path.Root(groupDevices).AtName(kind) }
	for i, v := range m.Devices.Videos {
		if !tfkit.Known(v.Model) {
			continue
		}
		if tfkit.Known(v.Accel3D) && v.Accel3D.ValueBool() && v.Model.ValueString() != "virtio" {
			diags.AddAttributeError(at("video").AtListIndex(i).AtName("accel3d"), "accel3d needs a virtio video",
				fmt.Sprintf("devices.video[%d]: model %q has no 3D acceleration; set model = \"virtio\" (virtio-gpu) or remove accel3d.", i, v.Model.ValueString()))
		}
		if v.Model.ValueString() == "none" && (!v.VRAMKiB.IsNull() || !v.Heads.IsNull() || !v.Accel3D.IsNull()) {
			diags.AddAttributeError(at("video").AtListIndex(i), "video model \"none\" has no settings",
				fmt.Sprintf("devices.video[%d]: model = \"none\" means no video device; remove vram_kib, heads and accel3d.", i))
		}
	}
	for i, r := range m.Devices.RNGs {
		if !r.RatePeriodMS.IsNull() && r.RateBytes.IsNull() {
			diags.AddAttributeError(at("rng").AtListIndex(i).AtName("rate_period_ms"), "rate_period_ms needs rate_bytes",
				fmt.Sprintf("devices.rng[%d]: rate_period_ms is the period of a rate limit; set rate_bytes (the bytes allowed per period) or remove rate_period_ms.", i))
		}
	}
	if b := m.Devices.MemBalloon; b != nil && tfkit.Known(b.Model) && b.Model.ValueString() == "none" &&
		(!b.StatsPeriodSec.IsNull() || !b.AutoDeflate.IsNull() || !b.FreePageReporting.IsNull()) {
		diags.AddAttributeError(at("memballoon"), "memballoon model \"none\" has no settings",
			"devices.memballoon: model = \"none\" removes the balloon; remove stats_period_sec, autodeflate and free_page_reporting.")
	}
	for _, in := range m.Devices.Inputs {
		if tfkit.Known(in.Type) && tfkit.Known(in.Bus) && in.Type.ValueString() == "tablet" && in.Bus.ValueString() == "ps2" {
			diags.AddAttributeError(at("input"), "A tablet cannot be on ps2",
				"devices.input: type = \"tablet\" needs bus = \"usb\" or \"virtio\" (ps2 has only mice and keyboards).")
		}
	}
}

// hasConsole says whether s has a graphical console, typed or in device_xml.
func hasConsole(s domainxml.Spec) bool {
	if s.Graphics.Type != "" && s.Graphics.Type != domainxml.GraphicsNone {
		return true
	}
	for _, f := range s.DeviceXML {
		if strings.HasPrefix(strings.TrimSpace(f), "<graphics") {
			return true
		}
	}
	return false
}
