package network

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/portsettings"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
)

type Model struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	Mode      types.String `tfsdk:"mode"`
	Bridge    types.String `tfsdk:"bridge"`
	MTU       types.Int64  `tfsdk:"mtu"`
	Domain    types.String `tfsdk:"domain"`
	Addresses types.List   `tfsdk:"addresses"`
	DHCP      types.Object `tfsdk:"dhcp"`
	DNS       types.Object `tfsdk:"dns"`
	Autostart types.Bool   `tfsdk:"autostart"`
	Active    types.Bool   `tfsdk:"active"`
	// Beyond NAT: forward.go, portgroup.go, dns_records.go.
	Routes         types.List                   `tfsdk:"routes"`
	Forward        *netForwardModel             `tfsdk:"forward"`
	PortGroups     types.Set                    `tfsdk:"port_groups"`
	VLAN           *portsettings.VLANModel      `tfsdk:"vlan"`
	VirtualPort    *netVirtualPortModel         `tfsdk:"virtualport"`
	Bandwidth      *portsettings.BandwidthModel `tfsdk:"bandwidth"`
	DnsmasqOptions types.List                   `tfsdk:"dnsmasq_options"`
}

type networkDHCPModel struct {
	Enabled types.Bool `tfsdk:"enabled"`
	Ranges  types.List `tfsdk:"ranges"`
	Hosts   types.Set  `tfsdk:"hosts"`
}

type networkRangeModel struct {
	Start types.String `tfsdk:"start"`
	End   types.String `tfsdk:"end"`
}

type networkDHCPHostModel struct {
	MAC      types.String `tfsdk:"mac"`
	IP       types.String `tfsdk:"ip"`
	Hostname types.String `tfsdk:"hostname"`
}

type networkDNSModel struct {
	Enabled    types.Bool `tfsdk:"enabled"`
	Hosts      types.Set  `tfsdk:"hosts"`
	Forwarders types.List `tfsdk:"forwarders"`
	SRV        types.Set  `tfsdk:"srv"`
	TXT        types.Set  `tfsdk:"txt"`
}

type networkDNSHostModel struct {
	IP        types.String `tfsdk:"ip"`
	Hostnames types.List   `tfsdk:"hostnames"`
}

type networkForwarderModel struct {
	Addr   types.String `tfsdk:"addr"`
	Domain types.String `tfsdk:"domain"`
}

var (
	networkRangeType     = types.ObjectType{AttrTypes: map[string]attr.Type{"start": types.StringType, "end": types.StringType}}
	networkDHCPHostType  = types.ObjectType{AttrTypes: map[string]attr.Type{"mac": types.StringType, "ip": types.StringType, "hostname": types.StringType}}
	networkDNSHostType   = types.ObjectType{AttrTypes: map[string]attr.Type{"ip": types.StringType, "hostnames": types.ListType{ElemType: types.StringType}}}
	networkForwarderType = types.ObjectType{AttrTypes: map[string]attr.Type{"addr": types.StringType, "domain": types.StringType}}
	networkDHCPAttrTypes = map[string]attr.Type{
		"enabled": types.BoolType,
		"ranges":  types.ListType{ElemType: networkRangeType},
		"hosts":   types.SetType{ElemType: networkDHCPHostType},
	}
	networkDNSAttrTypes = tfkit.WithTypes(dnsRecordAttributes(), map[string]attr.Type{
		"enabled":    types.BoolType,
		"hosts":      types.SetType{ElemType: networkDNSHostType},
		"forwarders": types.ListType{ElemType: networkForwarderType},
	})
	// networkAttrTypes are the types of the attributes beyond NAT, from their schema.
	networkAttrTypes = tfkit.WithTypes(networkExtraAttributes(), map[string]attr.Type{})
)

// networkExtraAttributes are the network's attributes beyond NAT.
func networkExtraAttributes() map[string]schema.Attribute {
	attrs := tfkit.WithAttributes(networkForwardAttributes(), networkPortGroupAttributes())
	attrs["dnsmasq_options"] = dnsmasqOptionsAttribute()
	return attrs
}

// toSpec turns the model into a spec. ok is false when a value is unknown (not yet
// known at plan time): callers then skip what needs the whole spec.
func (m *Model) toSpec(ctx context.Context) (spec *hostxml.Network, ok bool, diags diag.Diagnostics) {
	// bridge is unknown in a create plan when libvirt is to pick it: that is "".
	if !tfkit.AllKnown(m.Name, m.Mode, m.MTU, m.Domain, m.Addresses, m.DHCP, m.DNS, m.Routes, m.PortGroups, m.DnsmasqOptions) ||
		!tfkit.ModelKnown(m.Forward, m.VLAN, m.VirtualPort, m.Bandwidth) ||
		(m.Bridge.IsUnknown() && m.Mode.ValueString() == hostxml.ModeBridge && m.Forward == nil) {
		return nil, false, nil
	}
	n := &hostxml.Network{Name: m.Name.ValueString(), Mode: m.Mode.ValueString(), Bridge: tfkit.StringOf(m.Bridge), Domain: tfkit.StringOf(m.Domain)}
	if n.Mode == "" {
		n.Mode = hostxml.ModeNAT
	}
	if !m.MTU.IsNull() {
		n.MTU = uint(max(m.MTU.ValueInt64(), 0))
	}
	tfkit.ElementsOf(ctx, m.Addresses, &n.Addresses, &diags)
	n.Routes, n.Forward, n.PortGroups = routesSpec(ctx, m.Routes, &diags), forwardSpec(m.Forward), portGroupsSpec(ctx, m.PortGroups, &diags)
	n.VLAN, n.VirtualPort, n.Bandwidth = vlanSpec(m.VLAN), virtualPortSpec(m.VirtualPort), bandwidthSpec(m.Bandwidth)
	tfkit.ElementsOf(ctx, m.DnsmasqOptions, &n.DnsmasqOptions, &diags)
	if !m.DHCP.IsNull() {
		var d networkDHCPModel
		diags.Append(m.DHCP.As(ctx, &d, basetypes.ObjectAsOptions{})...)
		n.DHCP = &hostxml.DHCP{Enabled: d.Enabled.IsNull() || d.Enabled.ValueBool(), ManageHosts: !d.Hosts.IsNull()}
		var ranges []networkRangeModel
		tfkit.ElementsOf(ctx, d.Ranges, &ranges, &diags)
		for i, r := range ranges {
			rg, err := netaddr.ParseRange(r.Start.ValueString(), r.End.ValueString())
			if err != nil {
				diags.AddAttributeError(path.Root("dhcp"), "Invalid network dhcp", fmt.Sprintf("ranges[%d]: %v", i, err))
				continue
			}
			n.DHCP.Ranges = append(n.DHCP.Ranges, rg)
		}
		var hosts []networkDHCPHostModel
		tfkit.ElementsOf(ctx, d.Hosts, &hosts, &diags)
		for _, h := range hosts {
			n.DHCP.Hosts = append(n.DHCP.Hosts, netaddr.DHCPHost{MAC: h.MAC.ValueString(), IP: h.IP.ValueString(), Name: tfkit.StringOf(h.Hostname)})
		}
	}
	if !m.DNS.IsNull() {
		var d networkDNSModel
		diags.Append(m.DNS.As(ctx, &d, basetypes.ObjectAsOptions{})...)
		n.DNS = &hostxml.DNS{Enabled: d.Enabled.IsNull() || d.Enabled.ValueBool(), ManageHosts: !d.Hosts.IsNull()}
		var hosts []networkDNSHostModel
		tfkit.ElementsOf(ctx, d.Hosts, &hosts, &diags)
		for _, h := range hosts {
			dh := netaddr.DNSHost{IP: h.IP.ValueString()}
			tfkit.ElementsOf(ctx, h.Hostnames, &dh.Hostnames, &diags)
			n.DNS.Hosts = append(n.DNS.Hosts, dh)
		}
		var fwds []networkForwarderModel
		tfkit.ElementsOf(ctx, d.Forwarders, &fwds, &diags)
		for _, f := range fwds {
			n.DNS.Forwarders = append(n.DNS.Forwarders, hostxml.Forwarder{Addr: tfkit.StringOf(f.Addr), Domain: tfkit.StringOf(f.Domain)})
		}
		dnsRecordsSpec(ctx, d.SRV, d.TXT, n.DNS, &diags)
	}
	return n, !diags.HasError(), diags
}

// specNow is toSpec at apply time, when every value is known.
func (m *Model) specNow(ctx context.Context) (*hostxml.Network, error) {
	spec, ok, diags := m.toSpec(ctx)
	if err := tfkit.DiagsErr(diags); err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("a value is still unknown at apply time")
	}
	return spec, nil
}

// rangeList is ranges as the `dhcp.ranges` attribute holds them.
func rangeList(ranges []netaddr.Range) types.List {
	vs := []attr.Value{}
	for _, r := range ranges {
		vs = append(vs, types.ObjectValueMust(networkRangeType.AttrTypes, map[string]attr.Value{
			"start": types.StringValue(r.Start.String()), "end": types.StringValue(r.End.String())}))
	}
	return types.ListValueMust(networkRangeType, vs)
}

// fromState sets the model from what libvirt has. prior is the model before (state or
// plan): it decides the forms libvirt does not keep — null versus empty lists, the way an
// address was written, and whether host entries are managed here at all.
func (m *Model) fromState(ctx context.Context, st *libvirt.NetworkState, prior Model) error {
	var diags diag.Diagnostics
	n, err := hostxml.NetworkFromDefinition(st.Doc)
	if err != nil {
		return err
	}
	m.ID = types.StringValue(st.UUID)
	m.Name = types.StringValue(n.Name)
	m.Mode = types.StringValue(n.Mode)
	m.Bridge = tfkit.StringOrNull(n.Bridge)
	m.MTU = types.Int64Null()
	if n.MTU != 0 {
		m.MTU = types.Int64Value(int64(n.MTU))
	}
	m.Domain = tfkit.StringOrNull(n.Domain)
	m.Autostart = types.BoolValue(st.Autostart)
	m.Active = types.BoolValue(st.Active)
	m.Routes, m.Forward = routesValue(ctx, n.Routes, &diags), forwardModelOf(n.Forward, prior.Forward)
	m.PortGroups = portGroupsValue(ctx, n.PortGroups, prior.PortGroups, &diags)
	m.VLAN, m.VirtualPort, m.Bandwidth = vlanModelOf(n.VLAN, prior.VLAN), virtualPortModelOf(n.VirtualPort), bandwidthModelOf(n.Bandwidth)
	m.DnsmasqOptions = dnsmasqValue(n.DnsmasqOptions)

	// addresses: keep the way each was written when it means the same.
	var priorAddrs []string
	tfkit.ElementsOf(ctx, prior.Addresses, &priorAddrs, &diags)
	addrs := make([]attr.Value, len(n.Addresses))
	for i, a := range n.Addresses {
		if i < len(priorAddrs) && netaddr.EquivalentCIDR(priorAddrs[i], a) {
			a = priorAddrs[i]
		}
		addrs[i] = types.StringValue(a)
	}
	m.Addresses = tfkit.ListOrNull(types.StringType, addrs, prior.Addresses)

	// dhcp
	var pd networkDHCPModel
	priorDHCP := tfkit.PriorObject(ctx, prior.DHCP, &pd, &diags)
	switch {
	case n.DHCP == nil && priorDHCP && !pd.Enabled.ValueBool():
		m.DHCP = types.ObjectValueMust(networkDHCPAttrTypes, map[string]attr.Value{
			"enabled": types.BoolValue(false), "ranges": types.ListNull(networkRangeType), "hosts": types.SetNull(networkDHCPHostType),
		})
	case n.DHCP == nil:
		m.DHCP = types.ObjectNull(networkDHCPAttrTypes)
	default:
		var hosts []attr.Value
		// libvirt keeps ranges per <ip> element: keep the order they were written in.
		if !pd.Ranges.IsNull() && !pd.Ranges.IsUnknown() {
			var pr []networkRangeModel
			diags.Append(pd.Ranges.ElementsAs(ctx, &pr, false)...)
			var prior []netaddr.Range
			for _, r := range pr {
				if rg, err := netaddr.ParseRange(r.Start.ValueString(), r.End.ValueString()); err == nil {
					prior = append(prior, rg)
				}
			}
			if tfkit.SameElements(prior, n.DHCP.Ranges) {
				n.DHCP.Ranges = prior
			}
		}
		for _, h := range n.DHCP.Hosts {
			hosts = append(hosts, types.ObjectValueMust(networkDHCPHostType.AttrTypes, map[string]attr.Value{
				"mac": types.StringValue(h.MAC), "ip": types.StringValue(h.IP), "hostname": tfkit.StringOrNull(h.Name)}))
		}
		m.DHCP = types.ObjectValueMust(networkDHCPAttrTypes, map[string]attr.Value{
			"enabled": types.BoolValue(true), "ranges": rangeList(n.DHCP.Ranges), "hosts": hostSet(networkDHCPHostType, hosts, priorDHCP, pd.Hosts),
		})
	}

	// dns
	var pn networkDNSModel
	priorDNS := tfkit.PriorObject(ctx, prior.DNS, &pn, &diags)
	if n.DNS == nil {
		m.DNS = types.ObjectNull(networkDNSAttrTypes)
	} else {
		var hosts, fwds []attr.Value
		for _, h := range n.DNS.Hosts {
			hosts = append(hosts, types.ObjectValueMust(networkDNSHostType.AttrTypes, map[string]attr.Value{
				"ip": types.StringValue(h.IP), "hostnames": tfkit.StringList(h.Hostnames)}))
		}
		for _, f := range n.DNS.Forwarders {
			fwds = append(fwds, types.ObjectValueMust(networkForwarderType.AttrTypes, map[string]attr.Value{
				"addr": tfkit.StringOrNull(f.Addr), "domain": tfkit.StringOrNull(f.Domain)}))
		}
		var priorFwds types.List
		if priorDNS {
			priorFwds = pn.Forwarders
		} else {
			priorFwds = types.ListNull(networkForwarderType)
		}
		srv, txt := dnsRecordValues(ctx, n.DNS, pn, &diags)
		m.DNS = types.ObjectValueMust(networkDNSAttrTypes, map[string]attr.Value{
			"enabled": types.BoolValue(n.DNS.Enabled), "hosts": hostSet(networkDNSHostType, hosts, priorDNS, pn.Hosts), "forwarders": tfkit.ListOrNull(networkForwarderType, fwds, priorFwds),
			"srv": srv, "txt": txt,
		})
	}
	return tfkit.DiagsErr(diags)
}

// hostSet is the `hosts` of a network's dhcp or dns block: the entries libvirt has when
// they are managed here (the prior block, known, sets hosts), none when they are not;
// with no prior block (an import) whatever is there.
func hostSet(t attr.Type, hosts []attr.Value, hadPrior bool, priorHosts types.Set) types.Set {
	switch {
	case hadPrior && !priorHosts.IsNull(): // managed here
		return types.SetValueMust(t, tfkit.NonNilValues(hosts))
	case !hadPrior && len(hosts) > 0: // import: show what is there
		return types.SetValueMust(t, hosts)
	}
	return types.SetNull(t)
}
