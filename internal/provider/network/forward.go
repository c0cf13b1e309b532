package network

import (
	"context"
	"slices"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

// A network's `routes` and `forward` (hostxml/network_forward.go has their XML).

type netRouteModel struct {
	Address types.String `tfsdk:"address"`
	Gateway types.String `tfsdk:"gateway"`
	Metric  types.Int64  `tfsdk:"metric"`
}

type netForwardModel struct {
	Dev        types.String   `tfsdk:"dev"`
	Interfaces []types.String `tfsdk:"interfaces"`
	PF         types.String   `tfsdk:"pf"`
}

var ifname = []validator.String{stringvalidator.LengthBetween(1, 15)}

func networkForwardAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"routes": schema.ListNestedAttribute{
			MarkdownDescription: "Static routes libvirt adds on the host while the network runs: traffic for `address` goes to " +
				"`gateway`, a guest on the network (e.g. a router VM with a LAN behind it). Mostly with `mode = \"route\"` or " +
				"`\"open\"`. Changing them replaces the network.",
			Optional:      true,
			PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
			Validators:    []validator.List{listvalidator.SizeAtLeast(1)},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"address": schema.StringAttribute{MarkdownDescription: "The destination, a CIDR in network form, e.g. `10.20.0.0/24` or `fd00:20::/64`.", Required: true},
				"gateway": schema.StringAttribute{MarkdownDescription: "The next hop: an address inside one of the network's `addresses`.", Required: true},
				"metric": schema.Int64Attribute{MarkdownDescription: "Route metric (1 or more). Omitted: libvirt's default.", Optional: true,
					Validators: []validator.Int64{int64validator.Between(1, 1<<31-1)}},
			}},
		},
		"forward": schema.SingleNestedAttribute{
			MarkdownDescription: "The host links the network forwards over. With `mode = \"nat\"`, `\"route\"` or `\"open\"`: `dev` only, the " +
				"link traffic leaves by. With `mode = \"bridge\"` (and no `bridge`), `\"private\"`, `\"vepa\"` or `\"passthrough\"`: each guest gets " +
				"a macvtap link on one of the host links of `interfaces` (or `dev`); with `mode = \"hostdev\"`: an SR-IOV VF of `pf`. " +
				"Adding or removing the block, `dev` or `pf` replaces the network; `interfaces` change in place (network-update, " +
				"no restart; a link a running guest uses cannot be removed: the plan says which guests use it).",
			Optional:      true,
			PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(tfkit.PresenceChanged, "Adding or removing forward replaces the network.", "Adding or removing `forward` replaces the network.")},
			Attributes: map[string]schema.Attribute{
				"dev": schema.StringAttribute{MarkdownDescription: "A host link, e.g. `eth0`: the outgoing link (nat, route, open) or a pool of one link. Changing it replaces the network.",
					Optional: true, Validators: ifname, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
				"interfaces": schema.ListAttribute{MarkdownDescription: "The pool of host links for macvtap modes (`dev`, when set, must be the first). Changes in place.",
					Optional: true, ElementType: types.StringType, Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(ifname...)}},
				"pf": schema.StringAttribute{MarkdownDescription: "An SR-IOV physical function whose virtual functions form the pool (`hostdev`, or macvtap modes). Changing it replaces the network.",
					Optional: true, Validators: ifname, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			},
		},
	}
}

func routesSpec(ctx context.Context, l types.List, d *diag.Diagnostics) []hostxml.Route {
	var ms []netRouteModel
	tfkit.ElementsOf(ctx, l, &ms, d)
	var out []hostxml.Route
	for _, m := range ms {
		out = append(out, hostxml.Route{Address: m.Address.ValueString(), Gateway: m.Gateway.ValueString(), Metric: tfkit.UintOf(m.Metric)})
	}
	return out
}

func routesValue(ctx context.Context, rs []hostxml.Route, d *diag.Diagnostics) types.List {
	t := tfkit.NestedType(networkAttrTypes["routes"])
	if len(rs) == 0 {
		return types.ListNull(t)
	}
	var ms []netRouteModel
	for _, r := range rs {
		ms = append(ms, netRouteModel{Address: types.StringValue(r.Address), Gateway: types.StringValue(r.Gateway), Metric: tfkit.Int64OrNull(r.Metric)})
	}
	v, diags := types.ListValueFrom(ctx, t, ms)
	d.Append(diags...)
	return v
}

func forwardSpec(m *netForwardModel) *hostxml.Forward {
	if m == nil {
		return nil
	}
	f := &hostxml.Forward{Dev: m.Dev.ValueString(), PF: m.PF.ValueString()}
	for _, i := range m.Interfaces {
		f.Interfaces = append(f.Interfaces, i.ValueString())
	}
	return f
}

// forwardModelOf is the forward block libvirt has; interfaces keep prior's order when
// they are the same links (network-update appends).
func forwardModelOf(f *hostxml.Forward, prior *netForwardModel) *netForwardModel {
	if f == nil {
		return nil
	}
	m := &netForwardModel{Dev: tfkit.StringOrNull(f.Dev), PF: tfkit.StringOrNull(f.PF)}
	ifaces := f.Interfaces
	// libvirt sets dev to the first interface when only interfaces were given (and
	// hostxml reads a pool of that one link as dev alone).
	if prior != nil && prior.Dev.IsNull() && len(prior.Interfaces) > 0 && f.Dev != "" {
		if len(ifaces) == 0 {
			ifaces = []string{f.Dev}
		}
		if ifaces[0] == f.Dev {
			m.Dev = types.StringNull()
		}
	}
	if prior != nil {
		var p []string
		for _, i := range prior.Interfaces {
			p = append(p, i.ValueString())
		}
		if tfkit.SameElements(p, ifaces) {
			ifaces = p
		}
	}
	for _, i := range slices.Clone(ifaces) {
		m.Interfaces = append(m.Interfaces, types.StringValue(i))
	}
	return m
}
