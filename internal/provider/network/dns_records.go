package network

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

// DNS SRV and TXT records of the dns block, and raw dnsmasq options
// (hostxml/network_dns_records.go).

type netSRVModel struct {
	Service  types.String `tfsdk:"service"`
	Protocol types.String `tfsdk:"protocol"`
	Domain   types.String `tfsdk:"domain"`
	Target   types.String `tfsdk:"target"`
	Port     types.Int64  `tfsdk:"port"`
	Priority types.Int64  `tfsdk:"priority"`
	Weight   types.Int64  `tfsdk:"weight"`
}

type netTXTModel struct {
	Name  types.String `tfsdk:"name"`
	Value types.String `tfsdk:"value"`
}

const liveRecords = " Added and removed **in place** (network-update: the definition and the running network; dnsmasq re-reads them, no restart)."

func dnsRecordAttributes() map[string]schema.Attribute {
	u16 := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{MarkdownDescription: desc, Optional: true, Validators: []validator.Int64{int64validator.Between(0, 65535)}}
	}
	return map[string]schema.Attribute{
		"srv": schema.SetNestedAttribute{
			MarkdownDescription: "DNS SRV records: `_<service>._<protocol>.<domain>` points at `target`:`port`." + liveRecords,
			Optional:            true,
			Validators:          []validator.Set{setvalidator.SizeAtLeast(1)},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"service":  schema.StringAttribute{MarkdownDescription: "Service name without the leading `_`, e.g. `ldap`.", Required: true},
				"protocol": schema.StringAttribute{MarkdownDescription: "`tcp` or `udp`.", Required: true, Validators: []validator.String{stringvalidator.OneOf("tcp", "udp")}},
				"domain":   tfkit.OptionalString("Domain of the record. Omitted: the network's `domain`."),
				"target":   tfkit.OptionalString("Host that provides the service."),
				"port":     u16("Port of the service on `target`."),
				"priority": u16("Priority (lower first)."),
				"weight":   u16("Weight among records of one priority."),
			}},
		},
		"txt": schema.SetNestedAttribute{
			MarkdownDescription: "DNS TXT records." + liveRecords,
			Optional:            true,
			Validators:          []validator.Set{setvalidator.SizeAtLeast(1)},
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":  schema.StringAttribute{MarkdownDescription: "Record name, e.g. `info`.", Required: true},
				"value": schema.StringAttribute{MarkdownDescription: "Record text.", Required: true},
			}},
		},
	}
}

func dnsmasqOptionsAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		MarkdownDescription: "Extra dnsmasq.conf lines for the network's dnsmasq (libvirt's `dnsmasq:options`), e.g. " +
			"`[\"log-queries\", \"dhcp-option=option:ntp-server,10.17.0.1\"]`. libvirt passes them as they are: a line dnsmasq " +
			"refuses fails the network's start. Changing them replaces the network.",
		ElementType:   types.StringType,
		Optional:      true,
		PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
		Validators:    []validator.List{listvalidator.SizeAtLeast(1)},
	}
}

func dnsRecordsSpec(ctx context.Context, srv, txt types.Set, dns *hostxml.DNS, d *diag.Diagnostics) {
	var ss []netSRVModel
	tfkit.ElementsOf(ctx, srv, &ss, d)
	for _, s := range ss {
		dns.SRVs = append(dns.SRVs, hostxml.SRV{Service: s.Service.ValueString(), Protocol: s.Protocol.ValueString(), Domain: s.Domain.ValueString(),
			Target: s.Target.ValueString(), Port: tfkit.UintOf(s.Port), Priority: tfkit.UintOf(s.Priority), Weight: tfkit.UintOf(s.Weight)})
	}
	var ts []netTXTModel
	tfkit.ElementsOf(ctx, txt, &ts, d)
	for _, t := range ts {
		dns.TXTs = append(dns.TXTs, hostxml.TXT{Name: t.Name.ValueString(), Value: t.Value.ValueString()})
	}
}

// dnsRecordValues are the srv and txt sets of what libvirt has. A record that prior
// wrote with an explicit 0 keeps it (libvirt writes no 0).
func dnsRecordValues(ctx context.Context, dns *hostxml.DNS, prior networkDNSModel, d *diag.Diagnostics) (srv, txt types.Set) {
	st, tt := tfkit.NestedType(networkDNSAttrTypes["srv"]), tfkit.NestedType(networkDNSAttrTypes["txt"])
	var ps []netSRVModel
	tfkit.ElementsOf(ctx, prior.SRV, &ps, d)
	var svs, tvs []attr.Value
	for _, s := range dns.SRVs {
		m := netSRVModel{Service: types.StringValue(s.Service), Protocol: types.StringValue(s.Protocol), Domain: tfkit.StringOrNull(s.Domain),
			Target: tfkit.StringOrNull(s.Target), Port: tfkit.Int64OrNull(s.Port), Priority: tfkit.Int64OrNull(s.Priority), Weight: tfkit.Int64OrNull(s.Weight)}
		for _, p := range ps {
			if p.Service.Equal(m.Service) && p.Protocol.Equal(m.Protocol) && p.Target.Equal(m.Target) && p.Domain.Equal(m.Domain) {
				for _, f := range [][2]*types.Int64{{&m.Port, &p.Port}, {&m.Priority, &p.Priority}, {&m.Weight, &p.Weight}} {
					if f[0].IsNull() && f[1].Equal(types.Int64Value(0)) {
						*f[0] = *f[1]
					}
				}
			}
		}
		v, diags := types.ObjectValueFrom(ctx, st.AttrTypes, m)
		d.Append(diags...)
		svs = append(svs, v)
	}
	for _, t := range dns.TXTs {
		v, diags := types.ObjectValueFrom(ctx, tt.AttrTypes, netTXTModel{Name: types.StringValue(t.Name), Value: types.StringValue(t.Value)})
		d.Append(diags...)
		tvs = append(tvs, v)
	}
	srv, txt = types.SetNull(st), types.SetNull(tt)
	if len(svs) > 0 {
		srv = types.SetValueMust(st, svs)
	}
	if len(tvs) > 0 {
		txt = types.SetValueMust(tt, tvs)
	}
	return srv, txt
}

func dnsmasqValue(opts []string) types.List {
	if len(opts) == 0 {
		return types.ListNull(types.StringType)
	}
	return tfkit.StringList(opts)
}
