package domain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/portsettings"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// NIC options: the `network_interface` attributes beyond network/bridge, mac and model
// (domainxml/interface_options.go has their XML). Every one of them restarts a running
// domain but link_state and bandwidth, which change live (domainxml/hotplug.go).

// nicOptionsModel is embedded in nicModel.
type nicOptionsModel struct {
	Direct              *nicDirectModel              `tfsdk:"direct"`
	PortGroup           types.String                 `tfsdk:"port_group"`
	VLAN                *portsettings.VLANModel      `tfsdk:"vlan"`
	VirtualPort         *nicVirtualPortModel         `tfsdk:"virtualport"`
	MTU                 types.Int64                  `tfsdk:"mtu"`
	Queues              types.Int64                  `tfsdk:"queues"`
	LinkState           types.String                 `tfsdk:"link_state"`
	Bandwidth           *portsettings.BandwidthModel `tfsdk:"bandwidth"`
	BootOrder           types.Int64                  `tfsdk:"boot_order"`
	ROM                 *nicROMModel                 `tfsdk:"rom"`
	Filter              *nicFilterModel              `tfsdk:"filter"`
	TrustGuestRXFilters types.Bool                   `tfsdk:"trust_guest_rx_filters"`
}

type nicDirectModel struct {
	Dev  types.String `tfsdk:"dev"`
	Mode types.String `tfsdk:"mode"`
}

type nicVirtualPortModel struct {
	Type        types.String `tfsdk:"type"`
	InterfaceID types.String `tfsdk:"interface_id"`
	ProfileID   types.String `tfsdk:"profile_id"`
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
		"port_group": tfkit.OptionalString("A port group of the `network` (its VLAN, bandwidth and virtual port apply). The plan fails when "+
			"the network has no such port group."+nicRestart, stringvalidator.LengthAtLeast(1),
			stringvalidator.AlsoRequires(sourceOf("network"))),
		"vlan": portsettings.VLANAttribute("VLAN tags (needs a host side that supports them: Open vSwitch, or a macvtap/hostdev on SR-IOV)." + nicRestart),
		"virtualport": schema.SingleNestedAttribute{
			MarkdownDescription: "The port profile of the switch the NIC connects to." + nicRestart,
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"type": schema.StringAttribute{MarkdownDescription: "`openvswitch`, `802.1Qbh` or `802.1Qbg`. 802.1Qbg's manager and type ids come from the `network` (or stay as an imported domain has them): libvirt refuses a `bridge` or `direct` NIC without them.", Required: true,
					Validators: []validator.String{stringvalidator.OneOf(domainxml.VirtualPortOVS, domainxml.VirtualPortQbh, domainxml.VirtualPortQbg)}},
				"interface_id": schema.StringAttribute{
					MarkdownDescription: "openvswitch's `interfaceid` or 802.1Qbg's `instanceid` (a UUID). Default: generated by libvirt and kept.",
					Optional:            true, Computed: true,
					Validators: []validator.String{stringvalidator.RegexMatches(validators.UUIDRegexp, "must be a UUID such as 09b11c53-8b5c-4eeb-8f00-d84eaa0aaa4f")},
				},
				"profile_id": tfkit.OptionalString("The port profile: required for 802.1Qbh, optional for openvswitch.", stringvalidator.LengthAtLeast(1)),
			},
		},
		"mtu": schema.Int64Attribute{MarkdownDescription: "MTU of the NIC in bytes." + nicRestart, Optional: true,
			Validators: []validator.Int64{int64validator.Between(68, 65535)}},
		"queues": schema.Int64Attribute{MarkdownDescription: "Number of queue pairs (multiqueue virtio-net; `model = \"virtio\"` only)." + nicRestart,
			Optional: true, Validators: []validator.Int64{int64validator.Between(1, 256)}},
		"link_state": tfkit.OptionalString("`up` or `down` (the guest sees no carrier). Default: up."+
			" A change applies live on a running domain (and to its definition), without a restart.", stringvalidator.OneOf(domainxml.LinkStateUp, domainxml.LinkStateDown)),
		"bandwidth": schema.SingleNestedAttribute{
			MarkdownDescription: "Traffic shaping of the NIC (libvirt applies it with `tc`). A change applies live on a running domain (and to its definition), without a restart.",
			Optional:            true,
			Attributes:          map[string]schema.Attribute{"inbound": portsettings.LimitAttribute("incoming"), "outbound": portsettings.LimitAttribute("outgoing")},
		},
		"boot_order": schema.Int64Attribute{MarkdownDescription: "Boot priority (PXE; 1 first), shared with the disks' `boot_order`." + nicRestart,
			Optional: true, Validators: []validator.Int64{int64validator.AtLeast(1)}},
		"rom": schema.SingleNestedAttribute{
			MarkdownDescription: "The NIC's option ROM." + nicRestart,
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"bar":  tfkit.OptionalString("`on` or `off`: whether the ROM is visible in the guest's PCI BAR.", stringvalidator.OneOf("on", "off")),
				"file": tfkit.OptionalString("A ROM image on the host.", stringvalidator.RegexMatches(validators.AbsPathRegexp, "must be an absolute path on the host")),
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

// nicOptionsSpec is toSpec's part for the options; unknown values read as empty.
func nicOptionsSpec(m nicOptionsModel, n *domainxml.Interface) {
	if d := m.Direct; d != nil {
		n.Direct = &domainxml.Direct{Dev: d.Dev.ValueString(), Mode: d.Mode.ValueString()}
	}
	o := &n.NICOptions
	o.PortGroup, o.LinkState = m.PortGroup.ValueString(), m.LinkState.ValueString()
	o.MTU, o.Queues, o.BootOrder = tfkit.UintOf(m.MTU), tfkit.UintOf(m.Queues), tfkit.UintOf(m.BootOrder)
	if v := m.VLAN; v != nil {
		o.VLAN = &domainxml.VLAN{Trunk: v.Trunk.ValueBool(), NativeTag: tfkit.UintOf(v.NativeTag), NativeMode: v.NativeMode.ValueString()}
		for _, t := range v.Tags {
			o.VLAN.Tags = append(o.VLAN.Tags, tfkit.UintOf(t))
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
	if tfkit.Known(m.TrustGuestRXFilters) {
		t := m.TrustGuestRXFilters.ValueBool()
		o.TrustGuestRXFilters = &t
	}
}

func limitSpec(l *portsettings.LimitModel) *domainxml.BandwidthLimit {
	if l == nil {
		return nil
	}
	return &domainxml.BandwidthLimit{Average: tfkit.UintOf(l.Average), Peak: tfkit.UintOf(l.Peak), Burst: tfkit.UintOf(l.Burst)}
}

func limitModel(l *domainxml.BandwidthLimit) *portsettings.LimitModel {
	if l == nil {
		return nil
	}
	return &portsettings.LimitModel{Average: tfkit.Int64OrNull(l.Average), Peak: tfkit.Int64OrNull(l.Peak), Burst: tfkit.Int64OrNull(l.Burst)}
}

// nicOptionsModelOf is fromSpec's part: what libvirt has, with the prior NIC's way of
// saying what libvirt fills in (link up, trust no, an implied trunk) kept as written.
func nicOptionsModelOf(n domainxml.Interface, prior *nicModel) nicOptionsModel {
	o := n.NICOptions
	m := nicOptionsModel{PortGroup: tfkit.StringOrNull(o.PortGroup), MTU: tfkit.Int64OrNull(o.MTU), Queues: tfkit.Int64OrNull(o.Queues),
		BootOrder: tfkit.Int64OrNull(o.BootOrder), LinkState: tfkit.StringOrNull(o.LinkState), TrustGuestRXFilters: types.BoolNull()}
	if d := n.Direct; d != nil {
		m.Direct = &nicDirectModel{Dev: types.StringValue(d.Dev), Mode: tfkit.StringOrNull(d.Mode)}
		if d.Mode == "" {
			m.Direct.Mode = types.StringValue(domainxml.DirectModeVEPA)
		}
	}
	if t := o.TrustGuestRXFilters; t != nil {
		m.TrustGuestRXFilters = types.BoolValue(*t)
	}
	if v := o.VLAN; v != nil {
		m.VLAN = &portsettings.VLANModel{Trunk: types.BoolValue(v.Trunk), NativeTag: tfkit.Int64OrNull(v.NativeTag), NativeMode: tfkit.StringOrNull(v.NativeMode)}
		for _, t := range v.Tags {
			m.VLAN.Tags = append(m.VLAN.Tags, types.Int64Value(int64(t)))
		}
		if !v.Trunk || domainxml.TrunkOf(domainxml.VLAN{Tags: v.Tags, NativeMode: v.NativeMode}) {
			m.VLAN.Trunk = types.BoolNull() // false, or implied by the tags (libvirt then writes trunk='yes')
		}
	}
	if p := o.VirtualPort; p != nil {
		m.VirtualPort = &nicVirtualPortModel{Type: types.StringValue(p.Type), InterfaceID: tfkit.StringOrNull(p.InterfaceID), ProfileID: tfkit.StringOrNull(p.ProfileID)}
	}
	if b := o.Bandwidth; b != nil {
		m.Bandwidth = &portsettings.BandwidthModel{Inbound: limitModel(b.Inbound), Outbound: limitModel(b.Outbound)}
	}
	if r := o.ROM; r != nil {
		m.ROM = &nicROMModel{Bar: tfkit.StringOrNull(r.Bar), File: tfkit.StringOrNull(r.File)}
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
		if p != nil && s != nil && p.InterfaceID.IsUnknown() && p.Type.Equal(s.Type) && tfkit.Known(s.InterfaceID) {
			p.InterfaceID = s.InterfaceID
		}
	}
}

// fillNICOptionUnknowns makes an unknown generated id storable.
func fillNICOptionUnknowns(n *nicModel) {
	if n.VirtualPort != nil {
		tfkit.NullIfUnknown(&n.VirtualPort.InterfaceID)
	}
}

// Plan-time checks of the NIC options (above): what domainxml would
// refuse at apply, and the host objects they name.

// validateNICOptions reports at plan time what domainxml's validation would refuse at
// apply: options that do not fit the NIC, and a boot order used twice.
func validateNICOptions(m *Model, d *diag.Diagnostics) {
	used := map[int64]string{}
	for i, dk := range m.Disks {
		if tfkit.Known(dk.BootOrder) {
			used[dk.BootOrder.ValueInt64()] = fmt.Sprintf("disk %d", i)
		}
	}
	for i, n := range m.Interfaces {
		at := path.Root("network_interface").AtListIndex(i)
		var sources []string
		unknown := n.Network.IsUnknown() || n.Bridge.IsUnknown()
		for src, set := range map[string]bool{"network": !n.Network.IsNull(), "bridge": !n.Bridge.IsNull(), "direct": n.Direct != nil} {
			if set {
				sources = append(sources, src)
			}
		}
		if slices.Sort(sources); len(sources) > 1 || len(sources) == 0 && !unknown {
			has := "none: add one"
			if len(sources) > 1 {
				has = strings.Join(sources, " and ") + ": keep one"
			}
			d.AddAttributeError(at, "One source per network_interface",
				fmt.Sprintf("network_interface %d needs exactly one of network, bridge and direct; it has %s.", i, has))
		}
		if tfkit.Known(n.BootOrder) {
			if other, ok := used[n.BootOrder.ValueInt64()]; ok {
				d.AddAttributeError(at.AtName("boot_order"), "Boot order used twice",
					fmt.Sprintf("network_interface %d: boot_order %d is already used by %s; each device needs its own.", i, n.BootOrder.ValueInt64(), other))
			}
			used[n.BootOrder.ValueInt64()] = fmt.Sprintf("network_interface %d", i)
		}
		if tfkit.Known(n.Model) && tfkit.Known(n.Queues) && n.Model.ValueString() != domainxml.DefaultNIC {
			d.AddAttributeError(at.AtName("queues"), "queues needs a virtio NIC",
				fmt.Sprintf("network_interface %d: queues needs model = \"virtio\", not %q. Remove queues or use the virtio model.", i, n.Model.ValueString()))
		}
		if v := n.VirtualPort; v != nil && tfkit.Known(v.Type) {
			switch t := v.Type.ValueString(); {
			case t == domainxml.VirtualPortQbh && (v.ProfileID.IsNull() || !v.InterfaceID.IsNull() && !v.InterfaceID.IsUnknown()):
				d.AddAttributeError(at.AtName("virtualport"), "Invalid virtualport",
					fmt.Sprintf("network_interface %d: virtualport type 802.1Qbh needs profile_id and takes no interface_id.", i))
			case t == domainxml.VirtualPortQbg && !v.ProfileID.IsNull():
				d.AddAttributeError(at.AtName("virtualport").AtName("profile_id"), "Invalid virtualport",
					fmt.Sprintf("network_interface %d: virtualport type 802.1Qbg takes no profile_id (only interface_id, its instance id).", i))
			}
		}
		if n.ROM != nil && n.ROM.Bar.IsNull() && n.ROM.File.IsNull() {
			d.AddAttributeError(at.AtName("rom"), "Empty rom", fmt.Sprintf("network_interface %d: rom needs bar or file.", i))
		}
		if n.Bandwidth != nil && n.Bandwidth.Inbound == nil && n.Bandwidth.Outbound == nil {
			d.AddAttributeError(at.AtName("bandwidth"), "Empty bandwidth", fmt.Sprintf("network_interface %d: bandwidth needs inbound or outbound.", i))
		}
		if v := n.VLAN; v != nil && len(v.Tags) == 0 && v.NativeTag.IsNull() {
			d.AddAttributeError(at.AtName("vlan"), "Empty vlan", fmt.Sprintf("network_interface %d: vlan needs tags or native_tag.", i))
		}
	}
}

// checkNICReferences fails when a NIC names a filter or a port group the host lacks
// (libvirt would define the domain and only fail to start it). changed says which NICs
// to look at, so an unchanged plan asks the host nothing.
func checkNICReferences(ctx context.Context, c *libvirt.Client, nics []domainxml.Interface, changed func(i int) bool) error {
	for i, n := range nics {
		if !changed(i) {
			continue
		}
		if f := n.Filter; f != nil && f.Name != "" {
			if err := c.LookupNWFilter(ctx, f.Name); errors.Is(err, libvirt.ErrNotFound) {
				return missingRef(fmt.Sprintf("network_interface %d: nwfilter %q does not exist on %s: name one that `virsh nwfilter-list` shows, e.g. clean-traffic",
					i, f.Name, c.URI()))
			} else if err != nil {
				return fmt.Errorf("network_interface %d: %w", i, err)
			}
		}
		if n.PortGroup != "" && n.Network != "" {
			net, err := c.ReadNetwork(ctx, n.Network)
			if errors.Is(err, libvirt.ErrNotFound) {
				continue // resolve names the missing network
			} else if err != nil {
				return fmt.Errorf("network_interface %d: %w", i, err)
			}
			var names []string
			for _, g := range net.Def.PortGroups {
				names = append(names, g.Name)
			}
			if !slices.Contains(names, n.PortGroup) {
				return missingRef(fmt.Sprintf("network_interface %d: network %s has no port group %q (it has %v): add it to the network or name one of those",
					i, n.Network, n.PortGroup, names))
			}
		}
	}
	return nil
}

// missingRef is checkNICReferences' answer for a name the host lacks (the plan reports
// only these; an unreachable host leaves the check to apply).
type missingRef string

func (e missingRef) Error() string { return string(e) }

// planNICReferences is ModifyPlan's part: the filters and port groups that are new or
// changed since state must exist.
func (r *Resource) planNICReferences(ctx context.Context, plan, state *Model, d *diag.Diagnostics) {
	if r.Client == nil {
		return
	}
	ref := func(m *nicModel) string {
		f := ""
		if m.Filter != nil {
			f = m.Filter.Name.ValueString()
		}
		return f + "\x00" + m.PortGroup.ValueString() + "\x00" + m.Network.ValueString()
	}
	changed := func(i int) bool {
		return state == nil || i >= len(state.Interfaces) || ref(&plan.Interfaces[i]) != ref(&state.Interfaces[i])
	}
	var missing missingRef
	if err := checkNICReferences(ctx, r.Client, specFromModel(plan).Interfaces, changed); errors.As(err, &missing) {
		d.AddAttributeError(path.Root("network_interface"), "Unknown network_interface reference",
			fmt.Sprintf("libvirt_domain %s: %s.", plan.Name.ValueString(), missing))
	}
}
