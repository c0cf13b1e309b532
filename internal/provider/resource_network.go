package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// NewNetworkResource is libvirt_network.
func NewNetworkResource() resource.Resource {
	return &networkResource{resourceBase{typeName: "network"}}
}

type networkResource struct {
	resourceBase
}

var objectNameRegexp = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// presenceChanged replaces the resource when a block is added or removed (changes inside
// it are decided by its attributes).
func presenceChanged(_ context.Context, req planmodifier.ObjectRequest, resp *objectplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = req.StateValue.IsNull() != req.PlanValue.IsNull()
}

func (r *networkResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceStr := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A libvirt virtual network: a bridge on the host with, depending on `mode`, NAT or routed " +
			"forwarding, DHCP and DNS served by libvirt's dnsmasq.\n\n" +
			"DHCP host entries (`dhcp.hosts`) and DNS host entries (`dns.hosts`) change **in place**: they are written " +
			"with network-update to the persistent definition and, when the network runs, to the live network — dnsmasq " +
			"re-reads them, the network is not restarted and guests keep their links. Every other change **replaces** the " +
			"network (the plan says so).\n\n" +
			"**A network in use.** Replacing or destroying a network that running domains use cuts them off: libvirt " +
			"removes the bridge their interfaces are plugged into, and the new network's bridge does not take them back. " +
			"Those guests lose connectivity until each domain is restarted (or its interface detached and attached again) " +
			"after the new network is up. The plan warns when this would happen, naming how many interfaces are attached; " +
			"the apply is not refused.\n\n" +
			"What libvirt fills in by itself (the bridge name when none is given, the bridge's MAC, the uuid, STP and " +
			"forward delay, NAT port ranges) never shows as a change.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The network's UUID.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Network name, unique on the host; also the import id. Changing it replaces the network.",
				Required:            true,
				PlanModifiers:       replaceStr,
				Validators: []validator.String{stringvalidator.RegexMatches(objectNameRegexp,
					"must start with a letter or digit and hold only letters, digits, '_', '.', '+' and '-'")},
			},
			"mode": schema.StringAttribute{
				MarkdownDescription: "How guests reach the outside: `nat` (default: masqueraded behind the host's address), `route` " +
					"(routed, no NAT — the LAN needs a route back), `open` (routed, libvirt adds no firewall rules), `isolated` " +
					"(guests reach only each other and the host), `bridge` (guests join the existing host bridge named by " +
					"`bridge`; no addresses, DHCP or DNS of libvirt's own). Changing it replaces the network.",
				Optional:      true,
				Computed:      true,
				Default:       stringdefault.StaticString(hostxml.ModeNAT),
				PlanModifiers: replaceStr,
				Validators:    []validator.String{stringvalidator.OneOf(hostxml.Modes...)},
			},
			"bridge": schema.StringAttribute{
				MarkdownDescription: "Bridge device name (at most 15 characters). For `mode = \"bridge\"`, the existing host bridge " +
					"to join (required); otherwise the bridge libvirt creates — libvirt picks a free `virbrN` when omitted, and " +
					"that name is reported here. Changing it replaces the network.",
				Optional: true,
				Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(),
					stringplanmodifier.RequiresReplaceIfConfigured()},
			},
			"mtu": schema.Int64Attribute{
				MarkdownDescription: "MTU of the bridge, in bytes (68-65535). Omitted: libvirt's default (the bridge's, usually 1500). " +
					"Changing it replaces the network.",
				Optional:      true,
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
				Validators:    []validator.Int64{int64validator.Between(68, 65535)},
			},
			"domain": schema.StringAttribute{
				MarkdownDescription: "DNS domain of the network: dnsmasq answers `<hostname>.<domain>` for its DHCP clients and DNS " +
					"hosts. Changing it replaces the network.",
				Optional:      true,
				PlanModifiers: replaceStr,
			},
			"addresses": schema.ListAttribute{
				MarkdownDescription: "The host's addresses on the network, as CIDRs, IPv4 and IPv6 (at most one DHCP subnet per " +
					"family). In network form (`10.17.0.0/24`, `fd00:17::/64`) the host takes the subnet's first address " +
					"(`10.17.0.1`, `fd00:17::1`), which guests use as gateway and DNS server; in host form (`10.17.0.254/24`) " +
					"it takes that address. Write them canonically (lower case, no leading zeros). Changing them replaces the network.",
				ElementType:   types.StringType,
				Optional:      true,
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
			},
			"autostart": schema.BoolAttribute{
				MarkdownDescription: "Start the network when libvirtd starts. Default `false`. Changes in place.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"active": schema.BoolAttribute{
				MarkdownDescription: "Whether the network runs. Default `true`. Changes in place (stopping it cuts its guests off).",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
		},
		Blocks: map[string]schema.Block{
			"dhcp": schema.SingleNestedBlock{
				MarkdownDescription: "DHCP served by dnsmasq. Without this block the network has no DHCP server. Adding or " +
					"removing the block, `enabled` or `ranges` replaces the network; `hosts` change in place.",
				PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(presenceChanged,
					"Adding or removing the dhcp block replaces the network.", "Adding or removing the `dhcp` block replaces the network.")},
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{
						MarkdownDescription: "Serve DHCP. Default `true`; `false` is the same as no block.",
						Optional:            true,
						Computed:            true,
						Default:             booldefault.StaticBool(true),
						PlanModifiers:       []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
					},
					"ranges": schema.ListNestedAttribute{
						MarkdownDescription: "Address ranges handed out, inclusive; each lies inside one subnet of `addresses`, " +
							"IPv4 or IPv6 (libvirt serves DHCP on one subnet per family). Default (when the network is made; " +
							"omitting ranges later keeps what the network has): one range on the first IPv4 " +
							"subnet, from the address after the host's to the one before the broadcast address " +
							"(`10.17.0.2`-`10.17.0.254` for `10.17.0.0/24`); IPv6 subnets get no default range (guests " +
							"still configure themselves from router advertisements).",
						Optional:      true,
						Computed:      true,
						PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"start": schema.StringAttribute{MarkdownDescription: "First address of the range.", Required: true},
							"end":   schema.StringAttribute{MarkdownDescription: "Last address of the range.", Required: true},
						}},
					},
					"hosts": schema.SetNestedAttribute{
						MarkdownDescription: "Fixed IPv4 addresses for MACs, applied live without restarting the network. " +
							"Omitted (null): this resource leaves host entries alone, so `libvirt_dhcp_reservation` and " +
							"`libvirt_cluster_machine` can manage them. Set (even to `[]`): this resource owns the whole " +
							"list and removes entries it does not name. Do not mix both ways on one network.",
						Optional: true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"mac": schema.StringAttribute{MarkdownDescription: "MAC address, lower case, e.g. `52:54:00:12:34:56`.", Required: true},
							"ip":  schema.StringAttribute{MarkdownDescription: "IPv4 address inside the DHCP subnet (not the host's own).", Required: true},
							"hostname": schema.StringAttribute{
								MarkdownDescription: "Host name dnsmasq gives with the lease and resolves on the network.",
								Optional:            true,
							},
						}},
					},
				},
			},
			"dns": schema.SingleNestedBlock{
				MarkdownDescription: "DNS served by dnsmasq on the host's addresses. Without this block libvirt's default applies " +
					"(DNS on, nothing extra). Adding or removing the block, `enabled` or `forwarders` replaces the network; " +
					"`hosts` change in place.",
				PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(presenceChanged,
					"Adding or removing the dns block replaces the network.", "Adding or removing the `dns` block replaces the network.")},
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{
						MarkdownDescription: "Serve DNS. Default `true`. `false` turns dnsmasq's DNS off (DHCP still works).",
						Optional:            true,
						Computed:            true,
						Default:             booldefault.StaticBool(true),
						PlanModifiers:       []planmodifier.Bool{boolplanmodifier.RequiresReplace()},
					},
					"hosts": schema.SetNestedAttribute{
						MarkdownDescription: "Extra names dnsmasq answers, applied live without restarting the network. " +
							"Each ip and each hostname appears once. Omitted (null): entries are left alone; set (even to `[]`): " +
							"this resource owns the whole list.",
						Optional: true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"ip":        schema.StringAttribute{MarkdownDescription: "IPv4 or IPv6 address.", Required: true},
							"hostnames": schema.ListAttribute{MarkdownDescription: "Names for that address.", Required: true, ElementType: types.StringType},
						}},
					},
					"forwarders": schema.ListNestedAttribute{
						MarkdownDescription: "Upstream servers: queries (for `domain` only, when given) go to `addr`; a " +
							"forwarder with `domain` and no `addr` makes that domain local-only. Changing them replaces the network.",
						Optional:      true,
						PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"addr":   schema.StringAttribute{MarkdownDescription: "Upstream server address.", Optional: true},
							"domain": schema.StringAttribute{MarkdownDescription: "Domain this forwarder serves.", Optional: true},
						}},
					},
				},
			},
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

func (r *networkResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m networkModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, ok, diags := m.toSpec(ctx)
	resp.Diagnostics.Append(diags...)
	if !ok {
		return
	}
	for _, e := range spec.Validate() {
		resp.Diagnostics.AddAttributeError(path.Root(e.Attr), "Invalid network "+e.Attr, e.Detail)
	}
}

// ModifyPlan fills the default DHCP ranges into the plan, so that plans show them, and
// warns when a replace or destroy would cut off running guests.
func (r *networkResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx, bound := planContext(ctx, req, r.client, "libvirt_network", "name")
	defer bound.end(&resp.Diagnostics)
	if req.Plan.Raw.IsNull() {
		var state networkModel
		if !req.State.Raw.IsNull() && !req.State.Get(ctx, &state).HasError() {
			r.warnInUse(ctx, state.Name.ValueString(), "Destroying", &resp.Diagnostics)
		}
		return
	}
	r.planDefaultRanges(ctx, req, resp)
	if req.State.Raw.IsNull() || resp.Diagnostics.HasError() {
		return
	}
	var state, plan networkModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(resp.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if replaces(ctx, state, plan) {
		r.warnInUse(ctx, state.Name.ValueString(), "Replacing", &resp.Diagnostics)
	}
}

// replaces reports whether the plan changes more than what changes in place (host
// entries, autostart, active); unknown values count as a change.
func replaces(ctx context.Context, state, plan networkModel) bool {
	a, ok1, _ := state.toSpec(ctx)
	b, ok2, _ := plan.toSpec(ctx)
	if !ok1 || !ok2 {
		return true
	}
	for _, n := range []*hostxml.Network{a, b} {
		if n.DHCP != nil {
			n.DHCP.Hosts, n.DHCP.ManageHosts = nil, false
		}
		if n.DNS != nil {
			n.DNS.Hosts, n.DNS.ManageHosts = nil, false
		}
	}
	return !reflect.DeepEqual(a, b)
}

// warnInUse adds a warning when running domains use the network: replacing or
// destroying it takes their bridge away.
func (r *networkResource) warnInUse(ctx context.Context, name, doing string, d *diag.Diagnostics) {
	if r.client == nil || name == "" {
		return
	}
	st, err := r.client.ReadNetwork(ctx, name)
	if err != nil {
		tflog.Debug(ctx, "could not tell whether the network is in use", map[string]any{"name": name, "error": err.Error()})
		return
	}
	if st.Connections > 0 {
		d.AddWarning(fmt.Sprintf("%s network %s cuts off running guests", doing, name),
			fmt.Sprintf("%d interface(s) of running domains are attached to network %s. %s it removes their bridge: those guests "+
				"lose connectivity until each domain is restarted, or its interface detached and attached again, after the "+
				"network is back.", st.Connections, name, doing))
	}
}

func (r *networkResource) planDefaultRanges(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan, config networkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || plan.DHCP.IsNull() || plan.DHCP.IsUnknown() || config.DHCP.IsNull() {
		return
	}
	var cd, pd networkDHCPModel
	resp.Diagnostics.Append(config.DHCP.As(ctx, &cd, basetypes.ObjectAsOptions{})...)
	resp.Diagnostics.Append(plan.DHCP.As(ctx, &pd, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || !cd.Ranges.IsNull() || pd.Enabled.IsUnknown() || !allKnown(plan.Addresses) {
		return
	}
	// An existing network keeps the ranges it has while its addresses stay: omitted
	// ranges mean the default at creation, not a replacement later (e.g. after import).
	if !req.State.Raw.IsNull() {
		var state networkModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if resp.Diagnostics.HasError() {
			return
		}
		if !state.DHCP.IsNull() && state.Addresses.Equal(plan.Addresses) {
			var sd networkDHCPModel
			resp.Diagnostics.Append(state.DHCP.As(ctx, &sd, basetypes.ObjectAsOptions{})...)
			if !resp.Diagnostics.HasError() && sd.Enabled.Equal(pd.Enabled) {
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("dhcp").AtName("ranges"), sd.Ranges)...)
				return
			}
		}
	}
	ranges := types.ListNull(networkRangeType)
	if pd.Enabled.ValueBool() {
		var addrs []string
		if !plan.Addresses.IsNull() {
			resp.Diagnostics.Append(plan.Addresses.ElementsAs(ctx, &addrs, false)...)
		}
		var vs []attr.Value
		for _, rg := range hostxml.DefaultRanges(addrs) {
			vs = append(vs, types.ObjectValueMust(networkRangeType.AttrTypes, map[string]attr.Value{
				"start": types.StringValue(rg.Start), "end": types.StringValue(rg.End)}))
		}
		ranges = types.ListValueMust(networkRangeType, nonNilValues(vs))
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("dhcp").AtName("ranges"), ranges)...)
}

func (r *networkResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan networkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 5*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := "Unable to create network " + plan.Name.ValueString()
	spec, ok, diags := plan.toSpec(ctx)
	resp.Diagnostics.Append(diags...)
	if !ok {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "a value is still unknown at apply time")
		}
		return
	}
	def, err := spec.ToXML()
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if err := r.client.CreateNetwork(ctx, def, plan.Active.ValueBool(), plan.Autostart.ValueBool()); err != nil {
		resp.Diagnostics.AddError(summary, err.Error()+alreadyExistsHint(err, "libvirt_network", spec.Name)+subnetInUseHint(err))
		return
	}
	if !r.readInto(ctx, &plan, &resp.Diagnostics, summary) {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "the network is gone right after it was created")
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// readInto refreshes m from libvirt; false when the network is gone (or on error, then in d).
func (r *networkResource) readInto(ctx context.Context, m *networkModel, d *diag.Diagnostics, summary string) bool {
	st, err := r.client.ReadNetwork(ctx, m.Name.ValueString())
	if errors.Is(err, libvirt.ErrNotFound) {
		return false
	}
	if err != nil {
		d.AddError(summary, err.Error())
		return false
	}
	prior := *m
	d.Append(m.fromState(ctx, st, prior)...)
	return !d.HasError()
}

func (r *networkResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state networkModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Read(ctx, time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !r.readInto(ctx, &state, &resp.Diagnostics, "Unable to read network "+state.Name.ValueString()) {
		if !resp.Diagnostics.HasError() {
			tflog.Info(ctx, "network is gone; removing it from state", map[string]any{"name": state.Name.ValueString()})
			resp.State.RemoveResource(ctx)
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *networkResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan networkModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, 5*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := plan.Name.ValueString()
	summary := "Unable to update network " + name
	spec, ok, diags := plan.toSpec(ctx)
	resp.Diagnostics.Append(diags...)
	if !ok {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "a value is still unknown at apply time")
		}
		return
	}
	st, err := r.client.ReadNetwork(ctx, name)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	// Stop first when asked to, so that host entries go to the definition only.
	if !plan.Active.ValueBool() && st.Active {
		if err := r.client.SetNetworkActive(ctx, name, false); err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
	}
	updates, err := hostUpdates(st.Def, spec)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if err := r.client.UpdateNetwork(ctx, name, updates); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if plan.Active.ValueBool() && !st.Active {
		if err := r.client.SetNetworkActive(ctx, name, true); err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
	}
	if plan.Autostart.ValueBool() != st.Autostart {
		if err := r.client.SetNetworkAutostart(ctx, name, plan.Autostart.ValueBool()); err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
	}
	if !r.readInto(ctx, &plan, &resp.Diagnostics, summary) {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "the network is gone")
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// hostUpdates are the network-update calls that turn the host entries of def into those
// of spec, for the lists spec manages: deletions first (libvirt refuses an entry whose MAC,
// IP or name another entry still has), then modifications, then additions.
func hostUpdates(def *libvirtxml.Network, spec *hostxml.Network) ([]libvirt.NetworkUpdate, error) {
	var dels, mods, adds []libvirt.NetworkUpdate
	have, err := hostxml.NetworkFromXML(def)
	if err != nil {
		return nil, err
	}
	if spec.DHCP != nil && spec.DHCP.ManageHosts {
		var cur []hostxml.DHCPHost
		if have.DHCP != nil {
			cur = have.DHCP.Hosts
		}
		want := map[string]hostxml.DHCPHost{}
		for _, h := range spec.DHCP.Hosts {
			want[h.MAC] = h
		}
		got := map[string]hostxml.DHCPHost{}
		for _, h := range cur {
			got[h.MAC] = h
			if w, ok := want[h.MAC]; !ok {
				dels = append(dels, dhcpUpdate(def, golibvirt.NetworkUpdateCommandDelete, h))
			} else if w != h {
				if w.IP == h.IP {
					mods = append(mods, dhcpUpdate(def, golibvirt.NetworkUpdateCommandModify, w))
				} else { // another <ip> element may hold it: delete and add
					dels = append(dels, dhcpUpdate(def, golibvirt.NetworkUpdateCommandDelete, h))
					adds = append(adds, dhcpUpdate(def, golibvirt.NetworkUpdateCommandAddLast, w))
				}
			}
		}
		for _, h := range spec.DHCP.Hosts {
			if _, ok := got[h.MAC]; !ok {
				adds = append(adds, dhcpUpdate(def, golibvirt.NetworkUpdateCommandAddLast, h))
			}
		}
	}
	if spec.DNS != nil && spec.DNS.ManageHosts {
		var cur []hostxml.DNSHost
		if have.DNS != nil {
			cur = have.DNS.Hosts
		}
		want := map[string]hostxml.DNSHost{}
		for _, h := range spec.DNS.Hosts {
			want[h.IP] = h
		}
		got := map[string]hostxml.DNSHost{}
		for _, h := range cur {
			got[h.IP] = h
			// libvirt cannot modify a DNS host entry: delete and add.
			if w, ok := want[h.IP]; !ok || !slices.Equal(w.Hostnames, h.Hostnames) {
				dels = append(dels, dnsUpdate(golibvirt.NetworkUpdateCommandDelete, h))
			}
		}
		for _, h := range spec.DNS.Hosts {
			if g, ok := got[h.IP]; !ok || !slices.Equal(g.Hostnames, h.Hostnames) {
				adds = append(adds, dnsUpdate(golibvirt.NetworkUpdateCommandAddLast, h))
			}
		}
	}
	return append(append(dels, mods...), adds...), nil
}

func dhcpUpdate(def *libvirtxml.Network, cmd golibvirt.NetworkUpdateCommand, h hostxml.DHCPHost) libvirt.NetworkUpdate {
	return libvirt.NetworkUpdate{
		Command: cmd, Section: golibvirt.NetworkSectionIPDhcpHost, ParentIndex: int32(hostxml.IPIndexFor(def, h.IP)),
		Element: hostxml.DHCPHostXML(h), What: fmt.Sprintf("DHCP host %s (%s)", h.MAC, h.IP),
	}
}

func dnsUpdate(cmd golibvirt.NetworkUpdateCommand, h hostxml.DNSHost) libvirt.NetworkUpdate {
	return libvirt.NetworkUpdate{
		Command: cmd, Section: golibvirt.NetworkSectionDNSHost, ParentIndex: -1,
		Element: hostxml.DNSHostXML(h), What: fmt.Sprintf("DNS host %s %v", h.IP, h.Hostnames),
	}
}

func (r *networkResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state networkModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, 5*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := r.client.DeleteNetwork(ctx, state.Name.ValueString())
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError("Unable to delete network "+state.Name.ValueString(), err.Error())
	}
}

func (r *networkResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !objectNameRegexp.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("expected the network's name, e.g. default, got %q", req.ID))
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}

// subnetInUseHint explains libvirt's refusal to start a network whose subnet is routed
// on the host already ("Network is already in use by interface virbr0").
func subnetInUseHint(err error) string {
	if err == nil || !strings.Contains(err.Error(), "already in use by interface") {
		return ""
	}
	hint := "\n\nA subnet in addresses is already in use on the host, on that interface (another libvirt network or a host " +
		"interface). Choose addresses in a free subnet."
	if !strings.Contains(err.Error(), "removing the half-made network failed") {
		hint += " The network was removed again."
	}
	return hint
}
