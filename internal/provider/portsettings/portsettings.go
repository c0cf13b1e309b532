// Package portsettings holds the port settings a domain's network interface and a
// network (or one of its port groups) both have: `vlan` and `bandwidth`, their schema and
// models. Their XML is the caller's (hostxml for a network, domainxml for an interface).
package portsettings

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// VLANModel is `vlan`.
type VLANModel struct {
	Tags       []types.Int64 `tfsdk:"tags"`
	Trunk      types.Bool    `tfsdk:"trunk"`
	NativeTag  types.Int64   `tfsdk:"native_tag"`
	NativeMode types.String  `tfsdk:"native_mode"`
}

// BandwidthModel is `bandwidth`: the limits of each direction.
type BandwidthModel struct {
	Inbound  *LimitModel `tfsdk:"inbound"`
	Outbound *LimitModel `tfsdk:"outbound"`
}

// LimitModel is `bandwidth.inbound` or `bandwidth.outbound`.
type LimitModel struct {
	Average types.Int64 `tfsdk:"average_kib"`
	Peak    types.Int64 `tfsdk:"peak_kib"`
	Burst   types.Int64 `tfsdk:"burst_kib"`
}

var vlanID = []validator.Int64{int64validator.Between(0, 4095)}

// LimitAttribute is `bandwidth.inbound` (dir "incoming") or `bandwidth.outbound`
// (dir "outgoing").
func LimitAttribute(dir string) schema.SingleNestedAttribute {
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

// VLANAttribute is a NIC's or a network's (or port group's) `vlan`.
func VLANAttribute(desc string) schema.SingleNestedAttribute {
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
			"native_mode": tfkit.OptionalString("How the native VLAN reaches the guest: `tagged` or `untagged`.",
				stringvalidator.OneOf("tagged", "untagged"), stringvalidator.AlsoRequires(sourceOf("native_tag"))),
		},
	}
}
