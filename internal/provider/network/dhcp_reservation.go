package network

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

type DHCPReservationResource struct {
	tfkit.ResourceBase
}

type DHCPReservationModel struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID       types.String `tfsdk:"id"`
	Network  types.String `tfsdk:"network"`
	MAC      types.String `tfsdk:"mac"`
	IP       types.String `tfsdk:"ip"`
	Hostname types.String `tfsdk:"hostname"`
}

func (r *DHCPReservationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A fixed address for a MAC on a libvirt network: a DHCP `<host>` entry, written with network-update " +
			"to the running network (no restart, guests keep their links) and to its persistent definition; only to the " +
			"definition when the network is inactive. Changing `ip` or `hostname` modifies the entry in place.",
		Attributes: map[string]schema.Attribute{
			"host": tfkit.HostAttribute(""),
			"id":   tfkit.KeptString("`<network>/<mac>`, also the import id."),
			"network": tfkit.RequiredReplace("Name of the libvirt network. Changing it replaces the reservation.",
				stringvalidator.LengthAtLeast(1), stringvalidator.NoneOf("/")),
			"mac": tfkit.RequiredReplace("MAC address, `aa:bb:cc:dd:ee:ff` (stored in lower case). Changing it replaces the reservation.",
				stringvalidator.RegexMatches(validators.MACRegexp, "must be a MAC address of six colon-separated hex pairs, e.g. 52:54:00:12:34:56"),
				validators.LowerCase("MAC address")),
			"ip": schema.StringAttribute{
				MarkdownDescription: "IPv4 address to give that MAC. It must sit inside one of the network's IPv4 subnets and not be " +
					"its network, broadcast or own (gateway) address.",
				Required:   true,
				Validators: []validator.String{validators.IPv4()},
			},
			"hostname": tfkit.OptionalString("Host name dnsmasq hands out with the lease (and resolves on the network).", stringvalidator.RegexMatches(regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`), "must be a host name label: letters, digits and '-', at most 63 characters")),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

func (m *DHCPReservationModel) host() netaddr.DHCPHost {
	return netaddr.DHCPHost{MAC: strings.ToLower(m.MAC.ValueString()), IP: m.IP.ValueString(), Name: m.Hostname.ValueString()}
}

func reservationWhat(m *DHCPReservationModel) string {
	return fmt.Sprintf("DHCP reservation %s on network %s", strings.ToLower(m.MAC.ValueString()), m.Network.ValueString())
}

// ModifyPlan checks the reservation against its network at plan time when the network
// exists already (one read): an ip outside its subnets or reserved for another MAC fails
// the plan rather than the apply. A network made in the same apply (not there yet) or a
// host that does not answer leaves the check to Create.
func (r *DHCPReservationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx, bound := tfkit.PlanContext(ctx, req, r.Client, "libvirt_dhcp_reservation", "network", "mac")
	defer bound.End(&resp.Diagnostics)
	if req.Plan.Raw.IsNull() || r.Client == nil {
		return
	}
	var plan DHCPReservationModel
	if d := req.Plan.Get(ctx, &plan); d.HasError() || !tfkit.Known(plan.Network) || !tfkit.Known(plan.MAC) || !tfkit.Known(plan.IP) {
		return
	}
	state, d := tfkit.PriorState[DHCPReservationModel](ctx, req.State)
	if d.HasError() {
		return
	}
	if state != nil && state.Network.Equal(plan.Network) && state.MAC.Equal(plan.MAC) && state.IP.Equal(plan.IP) {
		return // the entry stays as it is
	}
	net, err := r.Client.ReadNetworkDHCP(ctx, plan.Network.ValueString())
	if err != nil {
		return
	}
	// Our own entry (being updated or replaced) clashes with nothing.
	h := plan.host()
	updating := false
	if state != nil && state.Network.Equal(plan.Network) {
		own := state.host().MAC
		updating = own == h.MAC
		net = net.Without(own)
	}
	if err := net.CheckReservation(h, updating); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("ip"), fmt.Sprintf("Invalid DHCP reservation %s on network %s", h.MAC, net.Name), err.Error())
	}
}

func (r *DHCPReservationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 2*time.Minute, reservationWhat, func(ctx context.Context, plan *DHCPReservationModel, d *diag.Diagnostics) (*DHCPReservationModel, error) {
		if err := r.write(ctx, plan, d, "Unable to create "+reservationWhat(plan), netaddr.Add); err != nil || d.HasError() {
			return nil, err
		}
		return r.readBack(ctx, plan, "create")
	})
}

func (r *DHCPReservationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.Update(ctx, req, resp, 2*time.Minute, reservationWhat, func(ctx context.Context, plan, _ *DHCPReservationModel, d *diag.Diagnostics) (*DHCPReservationModel, error) {
		if err := r.write(ctx, plan, d, "Unable to update "+reservationWhat(plan), netaddr.Modify); err != nil || d.HasError() {
			return nil, err
		}
		return r.readBack(ctx, plan, "update")
	})
}

// write adds (op Add) or modifies the reservation's entry once it is checked against the
// network's other entries, holding the network's lock from the read to the write (see
// netaddr.Lock). A problem with the configuration is an attribute error in d.
func (r *DHCPReservationResource) write(ctx context.Context, plan *DHCPReservationModel, d *diag.Diagnostics, summary string, op netaddr.Op) error {
	network := plan.Network.ValueString()
	defer netaddr.LockNetwork(r.Client.URI().String(), network)()
	net, err := r.Client.ReadNetworkDHCP(ctx, network)
	if errors.Is(err, libvirt.ErrNotFound) && op == netaddr.Add {
		d.AddAttributeError(path.Root("network"), summary, fmt.Sprintf("Network %q does not exist on %s.", network, r.Client.URI()))
		return nil
	}
	if err != nil {
		return err
	}
	h := plan.host()
	if err := net.CheckReservation(h, op == netaddr.Modify); err != nil {
		d.AddAttributeError(path.Root("ip"), summary, err.Error())
		return nil
	}
	return r.Client.UpdateNetwork(ctx, network, []netaddr.HostChange{net.Change(op, h)})
}

// read is the reservation as the network's persistent definition has it; an entry gone
// (or a network gone) is ErrNotFound.
func (r *DHCPReservationResource) read(ctx context.Context, prior *DHCPReservationModel) (*DHCPReservationModel, error) {
	network, mac := prior.Network.ValueString(), strings.ToLower(prior.MAC.ValueString())
	net, err := r.Client.ReadNetworkDHCP(ctx, network)
	if err != nil {
		return nil, err
	}
	for _, h := range net.Hosts {
		if h.MAC == mac {
			m := *prior
			m.ID, m.MAC, m.IP, m.Hostname = types.StringValue(network+"/"+mac), types.StringValue(mac), types.StringValue(h.IP), tfkit.StringOrNull(h.Name)
			return &m, nil
		}
	}
	return nil, fmt.Errorf("DHCP host entry %s in network %s: %w", mac, network, libvirt.ErrNotFound)
}

// readBack reads the reservation after the write of a create or update.
func (r *DHCPReservationResource) readBack(ctx context.Context, plan *DHCPReservationModel, what string) (*DHCPReservationModel, error) {
	got, err := tfkit.ReadBack(ctx, func(ctx context.Context) (*DHCPReservationModel, error) { return r.read(ctx, plan) })
	if errors.Is(err, libvirt.ErrNotFound) {
		return nil, fmt.Errorf("the entry is not in the network's definition after the %s", what)
	}
	return got, err
}

func (r *DHCPReservationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, time.Minute, reservationWhat, r.read)
}

func (r *DHCPReservationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 2*time.Minute, reservationWhat, func(ctx context.Context, state *DHCPReservationModel, _ *diag.Diagnostics) error {
		network, mac := state.Network.ValueString(), state.host().MAC
		defer netaddr.LockNetwork(r.Client.URI().String(), network)()
		net, err := r.Client.ReadNetworkDHCP(ctx, network)
		if err != nil {
			return err // a network gone (ErrNotFound) took the entry with it
		}
		h, ok := net.Entry(mac)
		if !ok {
			return nil
		}
		err = r.Client.UpdateNetwork(ctx, network, []netaddr.HostChange{net.Change(netaddr.Delete, h)})
		if err == nil {
			return nil
		}
		// libvirt refuses to delete an entry that is not there with an error of its own: if
		// the entry is gone, Delete got what it wanted.
		if again, rerr := r.read(ctx, state); errors.Is(rerr, libvirt.ErrNotFound) && again == nil {
			return nil
		}
		return err
	})
}

func (r *DHCPReservationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	network, mac, ok := strings.Cut(req.ID, "/")
	if !ok || network == "" || !validators.MACRegexp.MatchString(mac) {
		resp.Diagnostics.AddError("Invalid import id", "expected <network>/<mac>, e.g. default/52:54:00:12:34:56, got "+strconv.Quote(req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("network"), network)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("mac"), strings.ToLower(mac))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), network+"/"+strings.ToLower(mac))...)
}
