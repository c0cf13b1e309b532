package network

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/portsettings"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

// A network's `port_groups`, and the port settings (`vlan`, `virtualport`, `bandwidth`)
// a network or one of its port groups gives its guests (hostxml/network_portgroup.go).

type netPortGroupModel struct {
	Name        types.String                 `tfsdk:"name"`
	Default     types.Bool                   `tfsdk:"default"`
	VLAN        *portsettings.VLANModel      `tfsdk:"vlan"`
	Bandwidth   *portsettings.BandwidthModel `tfsdk:"bandwidth"`
	VirtualPort *netVirtualPortModel         `tfsdk:"virtualport"`
}

type netVirtualPortModel struct {
	Type      types.String `tfsdk:"type"`
	ProfileID types.String `tfsdk:"profile_id"`
}

const netReplace = " Changing it replaces the network."

// netBandwidthAttribute is a NIC's bandwidth shape (libvirt takes no floor in a network).
func netBandwidthAttribute(desc string, mods ...planmodifier.Object) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{MarkdownDescription: desc, Optional: true, PlanModifiers: mods,
		Attributes: map[string]schema.Attribute{"inbound": portsettings.LimitAttribute("incoming"), "outbound": portsettings.LimitAttribute("outgoing")}}
}

func netVirtualPortAttribute(desc string, mods ...planmodifier.Object) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{MarkdownDescription: desc, Optional: true, PlanModifiers: mods,
		Attributes: map[string]schema.Attribute{
			"type": schema.StringAttribute{MarkdownDescription: "`openvswitch` (the `bridge` is an Open vSwitch bridge), `802.1Qbh` or `802.1Qbg`.",
				Required: true, Validators: []validator.String{stringvalidator.OneOf(hostxml.VirtualPortTypes...)}},
			"profile_id": tfkit.OptionalString("The port profile: required for 802.1Qbh, optional for openvswitch.", stringvalidator.LengthAtLeast(1)),
		}}
}

func networkPortGroupAttributes() map[string]schema.Attribute {
	replace := objectplanmodifier.RequiresReplace()
	vlan := portsettings.VLANAttribute("VLAN tags of the network's ports (needs Open vSwitch or SR-IOV on the host side)." + netReplace)
	vlan.PlanModifiers = []planmodifier.Object{replace}
	return map[string]schema.Attribute{
		"port_groups": schema.SetNestedAttribute{
			MarkdownDescription: "Named port settings guests pick with their interface's `port_group`; the `default` one applies to " +
				"interfaces that name none. Added, changed and removed **in place** with network-update: the definition and the " +
				"running network, no restart, guests keep their links (a guest already in a changed port group keeps its old " +
				"settings until its interface is plugged again).",
			Optional:   true,
			Validators: []validator.Set{setvalidator.SizeAtLeast(1)},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":        schema.StringAttribute{MarkdownDescription: "The port group's name, unique in the network.", Required: true},
				"default":     schema.BoolAttribute{MarkdownDescription: "The port group of interfaces that name none (at most one). Default `false`.", Optional: true},
				"vlan":        portsettings.VLANAttribute("VLAN tags of the group's ports."),
				"bandwidth":   netBandwidthAttribute("Traffic shaping of each port of the group."),
				"virtualport": netVirtualPortAttribute("The port profile of the group's ports."),
			}},
		},
		"vlan":        vlan,
		"virtualport": netVirtualPortAttribute("The port profile of the network's switch: `openvswitch` for a `mode = \"bridge\"` network on an Open vSwitch bridge."+netReplace, replace),
		"bandwidth":   netBandwidthAttribute("Traffic shaping of the whole network (on its bridge)."+netReplace, replace),
	}
}

func vlanSpec(m *portsettings.VLANModel) *hostxml.VLAN {
	if m == nil {
		return nil
	}
	v := &hostxml.VLAN{Trunk: m.Trunk.ValueBool(), NativeTag: tfkit.UintOf(m.NativeTag), NativeMode: m.NativeMode.ValueString()}
	for _, t := range m.Tags {
		v.Tags = append(v.Tags, tfkit.UintOf(t))
	}
	return v
}

// vlanModelOf keeps prior's trunk when libvirt's is implied by the tags.
func vlanModelOf(v *hostxml.VLAN, prior *portsettings.VLANModel) *portsettings.VLANModel {
	if v == nil {
		return nil
	}
	m := &portsettings.VLANModel{Trunk: types.BoolNull(), NativeTag: tfkit.Int64OrNull(v.NativeTag), NativeMode: tfkit.StringOrNull(v.NativeMode)}
	for _, t := range v.Tags {
		m.Tags = append(m.Tags, types.Int64Value(int64(t)))
	}
	implied := domainxml.TrunkOf(domainxml.VLAN{Tags: v.Tags, NativeMode: v.NativeMode})
	switch {
	case prior != nil && (implied || !v.Trunk) && prior.Trunk.ValueBool() == (v.Trunk || implied):
		m.Trunk = prior.Trunk
	case v.Trunk && !implied:
		m.Trunk = types.BoolValue(true)
	}
	return m
}

func bandwidthSpec(m *portsettings.BandwidthModel) *hostxml.Bandwidth {
	if m == nil {
		return nil
	}
	l := func(m *portsettings.LimitModel) *hostxml.BandwidthLimit {
		if m == nil {
			return nil
		}
		return &hostxml.BandwidthLimit{Average: tfkit.UintOf(m.Average), Peak: tfkit.UintOf(m.Peak), Burst: tfkit.UintOf(m.Burst)}
	}
	return &hostxml.Bandwidth{Inbound: l(m.Inbound), Outbound: l(m.Outbound)}
}

func bandwidthModelOf(b *hostxml.Bandwidth) *portsettings.BandwidthModel {
	if b == nil {
		return nil
	}
	l := func(b *hostxml.BandwidthLimit) *portsettings.LimitModel {
		if b == nil {
			return nil
		}
		return &portsettings.LimitModel{Average: tfkit.Int64OrNull(b.Average), Peak: tfkit.Int64OrNull(b.Peak), Burst: tfkit.Int64OrNull(b.Burst)}
	}
	return &portsettings.BandwidthModel{Inbound: l(b.Inbound), Outbound: l(b.Outbound)}
}

func virtualPortSpec(m *netVirtualPortModel) *hostxml.VirtualPort {
	if m == nil {
		return nil
	}
	return &hostxml.VirtualPort{Type: m.Type.ValueString(), ProfileID: m.ProfileID.ValueString()}
}

func virtualPortModelOf(p *hostxml.VirtualPort) *netVirtualPortModel {
	if p == nil {
		return nil
	}
	return &netVirtualPortModel{Type: types.StringValue(p.Type), ProfileID: tfkit.StringOrNull(p.ProfileID)}
}

func portGroupsSpec(ctx context.Context, s types.Set, d *diag.Diagnostics) []hostxml.PortGroup {
	var ms []netPortGroupModel
	tfkit.ElementsOf(ctx, s, &ms, d)
	var out []hostxml.PortGroup
	for _, m := range ms {
		out = append(out, hostxml.PortGroup{Name: m.Name.ValueString(), Default: m.Default.ValueBool(), VLAN: vlanSpec(m.VLAN),
			Bandwidth: bandwidthSpec(m.Bandwidth), VirtualPort: virtualPortSpec(m.VirtualPort)})
	}
	return out
}

// portGroupsValue is the port groups libvirt has, each in the form its namesake in prior
// was written in (an explicit default = false, an implied trunk).
func portGroupsValue(ctx context.Context, gs []hostxml.PortGroup, prior types.Set, d *diag.Diagnostics) types.Set {
	t := tfkit.NestedType(networkAttrTypes["port_groups"])
	if len(gs) == 0 {
		return types.SetNull(t)
	}
	var pm []netPortGroupModel
	tfkit.ElementsOf(ctx, prior, &pm, d)
	byName := map[string]netPortGroupModel{}
	for _, p := range pm {
		byName[p.Name.ValueString()] = p
	}
	var vs []attr.Value
	for _, g := range gs {
		p, had := byName[g.Name]
		m := netPortGroupModel{Name: types.StringValue(g.Name), Default: types.BoolNull(), Bandwidth: bandwidthModelOf(g.Bandwidth),
			VirtualPort: virtualPortModelOf(g.VirtualPort)}
		if g.Default || (had && p.Default.Equal(types.BoolValue(false))) {
			m.Default = types.BoolValue(g.Default)
		}
		var pv *portsettings.VLANModel
		if had {
			pv = p.VLAN
		}
		m.VLAN = vlanModelOf(g.VLAN, pv)
		v, diags := types.ObjectValueFrom(ctx, t.AttrTypes, m)
		d.Append(diags...)
		vs = append(vs, v)
	}
	v, diags := types.SetValue(t, vs)
	d.Append(diags...)
	return v
}
