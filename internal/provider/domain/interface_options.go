package domain

import (
	"maps"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// NIC options: the `network_interface` attributes beyond network/bridge, mac and model
// (domainxml/interface_options.go has their XML). Every one of them restarts a running
// domain but link_state and bandwidth, which change live (domainxml/hotplug.go).

// nicOptionsModel is embedded in nicModel.
type nicOptionsModel struct {
	Direct              *nicDirectModel      `tfsdk:"direct"`
	PortGroup           types.String         `tfsdk:"port_group"`
	VLAN                *nicVLANModel        `tfsdk:"vlan"`
	VirtualPort         *nicVirtualPortModel `tfsdk:"virtualport"`
	MTU                 types.Int64          `tfsdk:"mtu"`
	Queues              types.Int64          `tfsdk:"queues"`
	LinkState           types.String         `tfsdk:"link_state"`
	Bandwidth           *nicBandwidthModel   `tfsdk:"bandwidth"`
	BootOrder           types.Int64          `tfsdk:"boot_order"`
	ROM                 *nicROMModel         `tfsdk:"rom"`
	Filter              *nicFilterModel      `tfsdk:"filter"`
	TrustGuestRXFilters types.Bool           `tfsdk:"trust_guest_rx_filters"`
}

type nicDirectModel struct {
	Dev  types.String `tfsdk:"dev"`
	Mode types.String `tfsdk:"mode"`
}

type nicVLANModel struct {
	Tags       []types.Int64 `tfsdk:"tags"`
	Trunk      types.Bool    `tfsdk:"trunk"`
	NativeTag  types.Int64   `tfsdk:"native_tag"`
	NativeMode types.String  `tfsdk:"native_mode"`
}

type nicVirtualPortModel struct {
	Type        types.String `tfsdk:"type"`
	InterfaceID types.String `tfsdk:"interface_id"`
	ProfileID   types.String `tfsdk:"profile_id"`
}

type nicBandwidthModel struct {
	Inbound  *nicLimitModel `tfsdk:"inbound"`
	Outbound *nicLimitModel `tfsdk:"outbound"`
}

type nicLimitModel struct {
	Average types.Int64 `tfsdk:"average_kib"`
	Peak    types.Int64 `tfsdk:"peak_kib"`
	Burst   types.Int64 `tfsdk:"burst_kib"`
}

type nicROMModel struct {
	Bar  types.String `tfsdk:"bar"`
	File types.String `tfsdk:"file"`
}

type nicFilterModel struct {
	Name       types.String            `tfsdk:"name"`
	Parameters map[string]types.String `tfsdk:"parameters"`
}

const nicRestart = " A change restarts a running domain (the definition is rewritten; a stopped domain is only redefined)."

var vlanID = []validator.Int64{int64validator.Between(0, 4095)}

func nicLimitAttribute(dir string) schema.SingleNestedAttribute {
	kib := func(desc string, required bool) schema.Int64Attribute {
		return schema.Int64Attribute{MarkdownDescription: desc, Optional: !required, Required: required,
			Validators: []validator.Int64{int64validator.Between(1, 1<<31-1)}}
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Limits of " + dir + " traffic.",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"average_kib": kib("Average rate in KiB/s.", true),
			"peak_kib":    kib("Peak rate in KiB/s.", false),
			"burst_kib":   kib("KiB that may be sent at peak rate.", false),
		},
	}
}

// vlanAttribute is a NIC's or a network's (or port group's) `vlan`.
func vlanAttribute(desc string) schema.SingleNestedAttribute {
	sourceOf := func(name string) path.Expression { return path.MatchRelative().AtParent().AtName(name) }
	return schema.SingleNestedAttribute{
		MarkdownDescription: desc,
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"tags": schema.ListAttribute{MarkdownDescription: "VLAN ids (0-4095).", Optional: true, ElementType: types.Int64Type,
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueInt64sAre(vlanID...)}},
			"trunk": schema.BoolAttribute{MarkdownDescription: "Pass the tags to the guest (a trunk). More than one tag is always a trunk.",
				Optional: true},
			"native_tag": schema.Int64Attribute{MarkdownDescription: "The trunk's native VLAN id.", Optional: true,
				Validators: append([]validator.Int64{int64validator.AlsoRequires(sourceOf("native_mode"))}, vlanID...)},
			"native_mode": optionalString("How the native VLAN reaches the guest: `tagged` or `untagged`.",
				stringvalidator.OneOf("tagged", "untagged"), stringvalidator.AlsoRequires(sourceOf("native_tag"))),
		},
	}
}

// nicOptionAttributes are added to the network_interface block's attributes.
func nicOptionAttributes() map[string]schema.Attribute {
	sourceOf := func(name string) path.Expression { return path.MatchRelative().AtParent().AtName(name) }
	return map[string]schema.Attribute{
		"direct": schema.SingleNestedAttribute{
			MarkdownDescription: "A macvtap interface on a host link (instead of `network` or `bridge`)." + nicRestart,
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"dev": schema.StringAttribute{MarkdownDescription: "The host link, e.g. `eth0`.", Required: true,
					Validators: []validator.String{stringvalidator.LengthBetween(1, 15)}},
				"mode": schema.StringAttribute{
					MarkdownDescription: "macvtap mode: `vepa` (libvirt's default), `bridge`, `private` or `passthrough`.",
					Optional:            true, Computed: true, Default: stringdefault.StaticString(domainxml.DirectModeVEPA),
					Validators: []validator.String{stringvalidator.OneOf("bridge", "vepa", "private", "passthrough")},
				},
			},
		},
		"port_group": optionalString("A port group of the `network` (its VLAN, bandwidth and virtual port apply). The plan fails when "+
			"the network has no such port group."+nicRestart, stringvalidator.LengthAtLeast(1),
			stringvalidator.AlsoRequires(sourceOf("network"))),
		"vlan": vlanAttribute("VLAN tags (needs a host side that supports them: Open vSwitch, or a macvtap/hostdev on SR-IOV)." + nicRestart),
		"virtualport": schema.SingleNestedAttribute{
			MarkdownDescription: "The port profile of the switch the NIC connects to." + nicRestart,
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"type": schema.StringAttribute{MarkdownDescription: "`openvswitch`, `802.1Qbh` or `802.1Qbg`. 802.1Qbg's manager and type ids come from the `network` (or stay as an imported domain has them): libvirt refuses a `bridge` or `direct` NIC without them.", Required: true,
					Validators: []validator.String{stringvalidator.OneOf(domainxml.VirtualPortOVS, domainxml.VirtualPortQbh, domainxml.VirtualPortQbg)}},
				"interface_id": schema.StringAttribute{
					MarkdownDescription: "openvswitch's `interfaceid` or 802.1Qbg's `instanceid` (a UUID). Default: generated by libvirt and kept.",
					Optional:            true, Computed: true,
					Validators: []validator.String{stringvalidator.RegexMatches(uuidRegexp, "must be a UUID such as 09b11c53-8b5c-4eeb-8f00-d84eaa0aaa4f")},
				},
				"profile_id": optionalString("The port profile: required for 802.1Qbh, optional for openvswitch.", stringvalidator.LengthAtLeast(1)),
			},
		},
		"mtu": schema.Int64Attribute{MarkdownDescription: "MTU of the NIC in bytes." + nicRestart, Optional: true,
			Validators: []validator.Int64{int64validator.Between(68, 65535)}},
		"queues": schema.Int64Attribute{MarkdownDescription: "Number of queue pairs (multiqueue virtio-net; `model = \"virtio\"` only)." + nicRestart,
			Optional: true, Validators: []validator.Int64{int64validator.Between(1, 256)}},
		"link_state": optionalString("`up` or `down` (the guest sees no carrier). Default: up."+
			" A change applies live on a running domain (and to its definition), without a restart.", stringvalidator.OneOf(domainxml.LinkStateUp, domainxml.LinkStateDown)),
		"bandwidth": schema.SingleNestedAttribute{
			MarkdownDescription: "Traffic shaping of the NIC (libvirt applies it with `tc`). A change applies live on a running domain (and to its definition), without a restart.",
			Optional:            true,
			Attributes:          map[string]schema.Attribute{"inbound": nicLimitAttribute("incoming"), "outbound": nicLimitAttribute("outgoing")},
		},
		"boot_order": schema.Int64Attribute{MarkdownDescription: "Boot priority (PXE; 1 first), shared with the disks' `boot_order`." + nicRestart,
			Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)}},
		"rom": schema.SingleNestedAttribute{
			MarkdownDescription: "The NIC's option ROM." + nicRestart,
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"bar":  optionalString("`on` or `off`: whether the ROM is visible in the guest's PCI BAR.", stringvalidator.OneOf("on", "off")),
				"file": optionalString("A ROM image on the host.", stringvalidator.RegexMatches(regexp.MustCompile(`^/`), "must be an absolute path on the host")),
			},
		},
		"filter": schema.SingleNestedAttribute{
			MarkdownDescription: "A libvirt network filter (nwfilter, e.g. `clean-traffic`). The plan fails when the host has no such filter." + nicRestart,
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{MarkdownDescription: "The filter's name.", Required: true,
					Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
				"parameters": schema.MapAttribute{MarkdownDescription: "Filter parameters, e.g. `{ IP = \"10.0.0.5\" }`.", Optional: true,
					ElementType: types.StringType, Validators: []validator.Map{mapvalidator.SizeAtLeast(1)}},
			},
		},
		"trust_guest_rx_filters": schema.BoolAttribute{
			MarkdownDescription: "Let the guest change the NIC's MAC and multicast filters on the host side (macvtap)." + nicRestart,
			Optional:            true,
		},
	}
}

// withAttributes adds extra to attrs.
func withAttributes(extra, attrs map[string]schema.Attribute) map[string]schema.Attribute {
	maps.Copy(attrs, extra)
	return attrs
}

func uintOf(v types.Int64) uint {
	if !known(v) || v.ValueInt64() < 0 {
		return 0
	}
	return uint(v.ValueInt64())
}

func intOrNull(v uint) types.Int64 {
	if v == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(v))
}

// nicOptionsSpec is toSpec's part for the options; unknown values read as empty.
func nicOptionsSpec(m nicOptionsModel, n *domainxml.Interface) {
	if d := m.Direct; d != nil {
		n.Direct = &domainxml.Direct{Dev: d.Dev.ValueString(), Mode: d.Mode.ValueString()}
	}
	o := &n.NICOptions
	o.PortGroup, o.LinkState = m.PortGroup.ValueString(), m.LinkState.ValueString()
	o.MTU, o.Queues, o.BootOrder = uintOf(m.MTU), uintOf(m.Queues), uintOf(m.BootOrder)
	if v := m.VLAN; v != nil {
		o.VLAN = &domainxml.VLAN{Trunk: v.Trunk.ValueBool(), NativeTag: uintOf(v.NativeTag), NativeMode: v.NativeMode.ValueString()}
		for _, t := range v.Tags {
			o.VLAN.Tags = append(o.VLAN.Tags, uintOf(t))
		}
	}
	if p := m.VirtualPort; p != nil {
		o.VirtualPort = &domainxml.VirtualPort{Type: p.Type.ValueString(), InterfaceID: p.InterfaceID.ValueString(), ProfileID: p.ProfileID.ValueString()}
	}
	if b := m.Bandwidth; b != nil {
		o.Bandwidth = &domainxml.Bandwidth{Inbound: limitSpec(b.Inbound), Outbound: limitSpec(b.Outbound)}
	}
	if r := m.ROM; r != nil {
		o.ROM = &domainxml.ROM{Bar: r.Bar.ValueString(), File: r.File.ValueString()}
	}
	if f := m.Filter; f != nil {
		o.Filter = &domainxml.Filter{Name: f.Name.ValueString()}
		for k, v := range f.Parameters {
			if o.Filter.Parameters == nil {
				o.Filter.Parameters = map[string]string{}
			}
			o.Filter.Parameters[k] = v.ValueString()
		}
	}
	if known(m.TrustGuestRXFilters) {
		t := m.TrustGuestRXFilters.ValueBool()
		o.TrustGuestRXFilters = &t
	}
}

func limitSpec(l *nicLimitModel) *domainxml.BandwidthLimit {
	if l == nil {
		return nil
	}
	return &domainxml.BandwidthLimit{Average: uintOf(l.Average), Peak: uintOf(l.Peak), Burst: uintOf(l.Burst)}
}

func limitModel(l *domainxml.BandwidthLimit) *nicLimitModel {
	if l == nil {
		return nil
	}
	return &nicLimitModel{Average: intOrNull(l.Average), Peak: intOrNull(l.Peak), Burst: intOrNull(l.Burst)}
}

// nicOptionsModelOf is fromSpec's part: what libvirt has, with the prior NIC's way of
// saying what libvirt fills in (link up, trust no, an implied trunk) kept as written.
func nicOptionsModelOf(n domainxml.Interface, prior *nicModel) nicOptionsModel {
	o := n.NICOptions
	m := nicOptionsModel{PortGroup: optString(o.PortGroup), MTU: intOrNull(o.MTU), Queues: intOrNull(o.Queues),
		BootOrder: intOrNull(o.BootOrder), LinkState: optString(o.LinkState), TrustGuestRXFilters: types.BoolNull()}
	if d := n.Direct; d != nil {
		m.Direct = &nicDirectModel{Dev: types.StringValue(d.Dev), Mode: optString(d.Mode)}
		if d.Mode == "" {
			m.Direct.Mode = types.StringValue(domainxml.DirectModeVEPA)
		}
	}
	if t := o.TrustGuestRXFilters; t != nil {
		m.TrustGuestRXFilters = types.BoolValue(*t)
	}
	if v := o.VLAN; v != nil {
		m.VLAN = &nicVLANModel{Trunk: types.BoolValue(v.Trunk), NativeTag: intOrNull(v.NativeTag), NativeMode: optString(v.NativeMode)}
		for _, t := range v.Tags {
			m.VLAN.Tags = append(m.VLAN.Tags, types.Int64Value(int64(t)))
		}
		if !v.Trunk || domainxml.TrunkOf(domainxml.VLAN{Tags: v.Tags, NativeMode: v.NativeMode}) {
			m.VLAN.Trunk = types.BoolNull() // false, or implied by the tags (libvirt then writes trunk='yes')
		}
	}
	if p := o.VirtualPort; p != nil {
		m.VirtualPort = &nicVirtualPortModel{Type: types.StringValue(p.Type), InterfaceID: optString(p.InterfaceID), ProfileID: optString(p.ProfileID)}
	}
	if b := o.Bandwidth; b != nil {
		m.Bandwidth = &nicBandwidthModel{Inbound: limitModel(b.Inbound), Outbound: limitModel(b.Outbound)}
	}
	if r := o.ROM; r != nil {
		m.ROM = &nicROMModel{Bar: optString(r.Bar), File: optString(r.File)}
	}
	if f := o.Filter; f != nil {
		m.Filter = &nicFilterModel{Name: types.StringValue(f.Name)}
		for k, v := range f.Parameters {
			if m.Filter.Parameters == nil {
				m.Filter.Parameters = map[string]types.String{}
			}
			m.Filter.Parameters[k] = types.StringValue(v)
		}
	}
	if prior != nil {
		keepPriorDefaults(&m, &prior.nicOptionsModel)
	}
	return m
}

// keepPriorDefaults keeps the prior's null or explicit form of a value libvirt fills in.
func keepPriorDefaults(m, p *nicOptionsModel) {
	if m.LinkState.ValueString() == domainxml.LinkStateUp || m.LinkState.IsNull() {
		if p.LinkState.IsNull() || p.LinkState.ValueString() == domainxml.LinkStateUp {
			m.LinkState = p.LinkState
		}
	}
	if !m.TrustGuestRXFilters.ValueBool() && !p.TrustGuestRXFilters.ValueBool() && !p.TrustGuestRXFilters.IsUnknown() {
		m.TrustGuestRXFilters = p.TrustGuestRXFilters
	}
	if m.VLAN != nil && p.VLAN != nil {
		implied := domainxml.TrunkOf(domainxml.VLAN{Tags: make([]uint, len(m.VLAN.Tags)), NativeMode: m.VLAN.NativeMode.ValueString()})
		if implied || m.VLAN.Trunk.IsNull() && !p.VLAN.Trunk.ValueBool() {
			m.VLAN.Trunk = p.VLAN.Trunk
		}
	}
}

// planNICOptions carries a virtual port's generated interface_id over from state while
// the NIC keeps its virtual port type. An 802.1Qbh port has none (libvirt generates
// none), so its interface_id is planned as null, not as known after apply.
func planNICOptions(plan, state *Model) {
	for i := range plan.Interfaces {
		if p := plan.Interfaces[i].VirtualPort; p != nil && p.InterfaceID.IsUnknown() && p.Type.Equal(types.StringValue(domainxml.VirtualPortQbh)) {
			p.InterfaceID = types.StringNull()
		}
	}
	if state == nil {
		return
	}
	for i := range plan.Interfaces {
		if i >= len(state.Interfaces) {
			return
		}
		p, s := plan.Interfaces[i].VirtualPort, state.Interfaces[i].VirtualPort
		if p != nil && s != nil && p.InterfaceID.IsUnknown() && p.Type.Equal(s.Type) && known(s.InterfaceID) {
			p.InterfaceID = s.InterfaceID
		}
	}
}

// fillNICOptionUnknowns makes an unknown generated id storable.
func fillNICOptionUnknowns(n *nicModel) {
	if n.VirtualPort != nil {
		nullIfUnknown(&n.VirtualPort.InterfaceID)
	}
}
