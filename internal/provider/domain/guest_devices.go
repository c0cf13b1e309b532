package domain

import (
	"math"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
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

var domainGuestDevices = domainFamily{
	group: groupDevices,
	attributes: map[string]schema.Attribute{
		"video": guestList("The guest's video cards, the primary first, e.g. `[{ model = \"virtio\" }]`. libvirt gives a domain "+
			"with `graphics` a `cirrus` card of its own when this is null (it never enters state). QEMU takes `qxl` and `virtio` "+
			"as further cards.", map[string]schema.Attribute{
			"model":    requiredEnum("`virtio`, `qxl`, `vga`, `cirrus`, `bochs`, `ramfb` or `none` (no video device at all).", domainxml.VideoModels...),
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
