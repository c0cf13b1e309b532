package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/validators"
)

// NewDHCPReservationResource is libvirt_dhcp_reservation.
func NewDHCPReservationResource() resource.Resource {
	return &dhcpReservationResource{resourceBase{typeName: "dhcp_reservation"}}
}

type dhcpReservationResource struct {
	resourceBase
}

type dhcpReservationModel struct {
	ID       types.String   `tfsdk:"id"`
	Network  types.String   `tfsdk:"network"`
	MAC      types.String   `tfsdk:"mac"`
	IP       types.String   `tfsdk:"ip"`
	Hostname types.String   `tfsdk:"hostname"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func (r *dhcpReservationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A fixed address for a MAC on a libvirt network: a DHCP `<host>` entry, written with network-update " +
			"to the running network (no restart, guests keep their links) and to its persistent definition; only to the " +
			"definition when the network is inactive. Changing `ip` or `hostname` modifies the entry in place.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "`<network>/<mac>`, also the import id.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"network": schema.StringAttribute{
				MarkdownDescription: "Name of the libvirt network. Changing it replaces the reservation.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1), stringvalidator.NoneOf("/")},
			},
			"mac": schema.StringAttribute{
				MarkdownDescription: "MAC address, `aa:bb:cc:dd:ee:ff` (stored in lower case). Changing it replaces the reservation.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{
					stringvalidator.RegexMatches(macRegexp, "must be a MAC address of six colon-separated hex pairs, e.g. 52:54:00:12:34:56"),
					validators.LowerCase("MAC address"),
				},
			},
			"ip": schema.StringAttribute{
				MarkdownDescription: "IPv4 address to give that MAC. It must sit inside one of the network's IPv4 subnets and not be " +
					"its network, broadcast or own (gateway) address.",
				Required:   true,
				Validators: []validator.String{validators.IPv4()},
			},
			"hostname": schema.StringAttribute{
				MarkdownDescription: "Host name dnsmasq hands out with the lease (and resolves on the network).",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`), "must be a host name label: letters, digits and '-', at most 63 characters")},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

func (m *dhcpReservationModel) host() libvirt.DHCPHost {
	return libvirt.DHCPHost{MAC: strings.ToLower(m.MAC.ValueString()), IP: m.IP.ValueString(), Name: m.Hostname.ValueString()}
}

// ModifyPlan checks the reservation against its network at plan time when the network
// exists already (one read): an ip outside its subnets or reserved for another MAC fails
// the plan rather than the apply. A network made in the same apply (not there yet) or a
// host that does not answer leaves the check to Create.
func (r *dhcpReservationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx, bound := planContext(ctx, req, r.client, "libvirt_dhcp_reservation", "network", "mac")
	defer bound.end(&resp.Diagnostics)
	if req.Plan.Raw.IsNull() || r.client == nil {
		return
	}
	var plan dhcpReservationModel
	if d := req.Plan.Get(ctx, &plan); d.HasError() || !known(plan.Network) || !known(plan.MAC) || !known(plan.IP) {
		return
	}
	var state *dhcpReservationModel
	if !req.State.Raw.IsNull() {
		var s dhcpReservationModel
		if d := req.State.Get(ctx, &s); d.HasError() {
			return
		}
		if s.Network.Equal(plan.Network) && s.MAC.Equal(plan.MAC) && s.IP.Equal(plan.IP) {
			return // the entry stays as it is
		}
		state = &s
	}
	net, err := r.client.ReadNetworkDHCP(ctx, plan.Network.ValueString())
	if err != nil {
		return
	}
	// Our own entry (being updated or replaced) clashes with nothing.
	updating := false
	if state != nil && state.Network.Equal(plan.Network) {
		own := strings.ToLower(state.MAC.ValueString())
		updating = own == strings.ToLower(plan.MAC.ValueString())
		drop := func(e libvirt.DHCPHost) bool { return e.MAC == own }
		net.Hosts = slices.DeleteFunc(slices.Clone(net.Hosts), drop)
		net.Live = slices.DeleteFunc(slices.Clone(net.Live), drop)
	}
	h := plan.host()
	if err := check(net, h, updating); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("ip"),
			fmt.Sprintf("Invalid DHCP reservation %s on network %s", h.MAC, net.Name), err.Error())
	}
}

// check validates the reservation against the network: the ip inside a subnet, no other
// entry with the same MAC (unless updating our own) or the same ip.
func check(net *libvirt.NetworkDHCP, h libvirt.DHCPHost, updating bool) error {
	ip, err := netip.ParseAddr(h.IP)
	if err != nil {
		return fmt.Errorf("ip %q is not an IPv4 address", h.IP)
	}
	var prefixes []string
	inside := false
	for _, s := range net.Subnets {
		prefixes = append(prefixes, s.Prefix.String())
		if !s.Contains(ip) {
			continue
		}
		switch {
		case ip == s.Prefix.Addr():
			return fmt.Errorf("ip %s is the network address of %s on network %s: choose a host address", ip, s.Prefix, net.Name)
		case ip == s.Gateway:
			return fmt.Errorf("ip %s is network %s's own address (the guests' gateway): choose another address in %s", ip, net.Name, s.Prefix)
		case s.Prefix.Bits() < 32 && ip == lastAddr(s.Prefix):
			return fmt.Errorf("ip %s is the broadcast address of %s on network %s: choose a host address", ip, s.Prefix, net.Name)
		}
		inside = true
	}
	if len(net.Subnets) == 0 {
		return fmt.Errorf("network %s has no IPv4 subnet with DHCP: a reservation needs an <ip> element with <dhcp>", net.Name)
	}
	if !inside {
		return fmt.Errorf("ip %s is outside network %s's subnets (%s): choose an address inside one of them", ip, net.Name, strings.Join(prefixes, ", "))
	}
	for _, e := range append(append([]libvirt.DHCPHost(nil), net.Hosts...), net.Live...) {
		switch {
		case e.MAC == h.MAC && !updating:
			return fmt.Errorf("network %s already has a DHCP host entry for MAC %s (ip %s): import it (id %s/%s) or remove it first", net.Name, h.MAC, e.IP, net.Name, h.MAC)
		case e.IP == h.IP && e.MAC != h.MAC:
			return fmt.Errorf("ip %s on network %s is already reserved for MAC %s: choose another address", h.IP, net.Name, e.MAC)
		}
	}
	return nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	mask := net.CIDRMask(p.Bits(), 32)
	for i := range a {
		a[i] |= ^mask[i]
	}
	return netip.AddrFrom4(a)
}

func (r *dhcpReservationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan dhcpReservationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 2*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	h := plan.host()
	summary := fmt.Sprintf("Unable to create DHCP reservation %s on network %s", h.MAC, plan.Network.ValueString())
	net, err := r.client.ReadNetworkDHCP(ctx, plan.Network.ValueString())
	if err != nil {
		if errors.Is(err, libvirt.ErrNotFound) {
			resp.Diagnostics.AddAttributeError(path.Root("network"), summary, fmt.Sprintf("Network %q does not exist on %s.", plan.Network.ValueString(), r.client.URI()))
			return
		}
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if err := check(net, h, false); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("ip"), summary, err.Error())
		return
	}
	if err := r.client.UpdateDHCPHost(ctx, net.Name, libvirt.DHCPAdd, h); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	r.readInto(ctx, &plan, &resp.Diagnostics, summary)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// readInto refreshes m from the network's persistent definition; false when the entry is gone.
func (r *dhcpReservationResource) readInto(ctx context.Context, m *dhcpReservationModel, d *diag.Diagnostics, summary string) bool {
	network, mac := m.Network.ValueString(), strings.ToLower(m.MAC.ValueString())
	net, err := r.client.ReadNetworkDHCP(ctx, network)
	if errors.Is(err, libvirt.ErrNotFound) {
		return false
	}
	if err != nil {
		d.AddError(summary, err.Error())
		return false
	}
	for _, h := range net.Hosts {
		if h.MAC != mac {
			continue
		}
		m.ID = types.StringValue(network + "/" + mac)
		m.MAC = types.StringValue(mac)
		m.IP = types.StringValue(h.IP)
		m.Hostname = types.StringNull()
		if h.Name != "" {
			m.Hostname = types.StringValue(h.Name)
		}
		return true
	}
	return false
}

func (r *dhcpReservationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state dhcpReservationModel
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
	summary := "Unable to read DHCP reservation " + state.ID.ValueString()
	if !r.readInto(ctx, &state, &resp.Diagnostics, summary) {
		if !resp.Diagnostics.HasError() {
			tflog.Info(ctx, "DHCP reservation is gone from its network; removing it from state", map[string]any{"id": state.ID.ValueString()})
			resp.State.RemoveResource(ctx)
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *dhcpReservationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan dhcpReservationModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, 2*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := plan.host()
	summary := fmt.Sprintf("Unable to update DHCP reservation %s on network %s", h.MAC, plan.Network.ValueString())
	net, err := r.client.ReadNetworkDHCP(ctx, plan.Network.ValueString())
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if err := check(net, h, true); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("ip"), summary, err.Error())
		return
	}
	if err := r.client.UpdateDHCPHost(ctx, net.Name, libvirt.DHCPModify, h); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if !r.readInto(ctx, &plan, &resp.Diagnostics, summary) {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "the entry is not in the network's definition after the update")
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *dhcpReservationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state dhcpReservationModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, 2*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := r.client.UpdateDHCPHost(ctx, state.Network.ValueString(), libvirt.DHCPDelete, state.host())
	if err == nil || errors.Is(err, libvirt.ErrNotFound) {
		return // deleted, or the whole network is gone
	}
	// libvirt refuses to delete an entry that is not there with an error of its own: if the
	// entry is gone, Delete got what it wanted.
	if net, rerr := r.client.ReadNetworkDHCP(ctx, state.Network.ValueString()); rerr == nil && !hasMAC(net.Hosts, state.host().MAC) {
		return
	}
	resp.Diagnostics.AddError("Unable to delete DHCP reservation "+state.ID.ValueString(), err.Error())
}

func hasMAC(hosts []libvirt.DHCPHost, mac string) bool {
	for _, h := range hosts {
		if h.MAC == mac {
			return true
		}
	}
	return false
}

func (r *dhcpReservationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	network, mac, ok := strings.Cut(req.ID, "/")
	if !ok || network == "" || !macRegexp.MatchString(mac) {
		resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("expected <network>/<mac>, e.g. default/52:54:00:12:34:56, got %q", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("network"), network)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("mac"), strings.ToLower(mac))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), network+"/"+strings.ToLower(mac))...)
}
