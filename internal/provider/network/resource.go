package network

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

type Resource struct {
	tfkit.ResourceBase
}

func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	tfkit.ValidateSpec(ctx, req, resp, "network", (*Model).toSpec)
}

// ModifyPlan fills the default DHCP ranges into the plan, so that plans show them,
// warns when a replace or destroy would cut off running guests, and refuses to take a
// host link out of a macvtap pool while a running guest's interface is on it.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx, bound := tfkit.PlanContext(ctx, req, r.Client, "libvirt_network", "name")
	defer bound.End(&resp.Diagnostics)
	if req.Plan.Raw.IsNull() {
		var state Model
		if !req.State.Raw.IsNull() && !req.State.Get(ctx, &state).HasError() {
			r.warnInUse(ctx, state.Name.ValueString(), "Destroying", &resp.Diagnostics)
		}
		return
	}
	r.planDefaultRanges(ctx, req, resp)
	if req.State.Raw.IsNull() || resp.Diagnostics.HasError() {
		return
	}
	state, plan, ok := tfkit.GetBoth[Model](ctx, &resp.Diagnostics, req.State, resp.Plan)
	if !ok {
		return
	}
	// A plan that changes more than what changes in place (host entries, records, port
	// groups, forward interfaces, autostart, active) replaces the network; unknown values
	// count as a change.
	have, ok1, _ := state.toSpec(ctx)
	want, ok2, _ := plan.toSpec(ctx)
	if !ok1 || !ok2 || !hostxml.InPlace(have, want) {
		r.warnInUse(ctx, state.Name.ValueString(), "Replacing", &resp.Diagnostics)
		return
	}
	r.refuseUsedLinkRemoval(ctx, state.Name.ValueString(), have, want, &resp.Diagnostics)
}

// warnInUse adds a warning when running domains use the network: replacing or
// destroying it takes their bridge away. It names them (from libvirt's network ports).
func (r *Resource) warnInUse(ctx context.Context, name, doing string, d *diag.Diagnostics) {
	if r.Client == nil || name == "" {
		return
	}
	users, err := r.Client.NetworkUsers(ctx, name)
	if err != nil {
		tflog.Debug(ctx, "could not tell whether the network is in use", map[string]any{"name": name, "error": err.Error()})
		return
	}
	if len(users) > 0 {
		d.AddWarning(fmt.Sprintf("%s network %s cuts off running guests", doing, name),
			fmt.Sprintf("Running domains have interfaces attached to network %s: %s. %s it removes their bridge: those guests "+
				"lose connectivity until each domain is restarted, or its interface detached and attached again, after the "+
				"network is back.", name, strings.Join(users, ", "), doing))
	}
}

func (r *Resource) planDefaultRanges(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, config, ok := tfkit.GetBoth[Model](ctx, &resp.Diagnostics, req.Plan, req.Config)
	if !ok || plan.DHCP.IsNull() || plan.DHCP.IsUnknown() || config.DHCP.IsNull() {
		return
	}
	var cd, pd networkDHCPModel
	resp.Diagnostics.Append(config.DHCP.As(ctx, &cd, basetypes.ObjectAsOptions{})...)
	resp.Diagnostics.Append(plan.DHCP.As(ctx, &pd, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || !cd.Ranges.IsNull() || pd.Enabled.IsUnknown() || !tfkit.AllKnown(plan.Addresses) {
		return
	}
	// An existing network keeps the ranges it has while its addresses stay: omitted
	// ranges mean the default at creation, not a replacement later (e.g. after import).
	if !req.State.Raw.IsNull() {
		var state Model
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
		tfkit.ElementsOf(ctx, plan.Addresses, &addrs, &resp.Diagnostics)
		ranges = rangeList(netaddr.DefaultRanges((&hostxml.Network{Addresses: addrs}).Subnets()))
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("dhcp").AtName("ranges"), ranges)...)
}

func networkWhat(m *Model) string { return "network " + m.Name.ValueString() }

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 5*time.Minute, networkWhat, func(ctx context.Context, plan *Model, _ *diag.Diagnostics) (*Model, error) {
		spec, err := plan.specNow(ctx)
		if err != nil {
			return nil, err
		}
		def, err := spec.Definition()
		if err != nil {
			return nil, err
		}
		if err := r.Client.CreateNetwork(ctx, def, plan.Active.ValueBool(), plan.Autostart.ValueBool()); err != nil {
			return nil, errors.New(err.Error() + tfkit.AlreadyExistsHint(err, "libvirt_network", spec.Name) + subnetInUseHint(err))
		}
		return r.readBack(ctx, plan, "the network is gone right after it was created")
	})
}

// read is the network as libvirt has it, in the forms prior was written in.
func (r *Resource) read(ctx context.Context, prior *Model) (*Model, error) {
	st, err := r.Client.ReadNetwork(ctx, prior.Name.ValueString())
	if err != nil {
		return nil, err
	}
	m := *prior
	return &m, m.fromState(ctx, st, *prior)
}

// readBack reads the network after a change; gone is the error when it is not there.
func (r *Resource) readBack(ctx context.Context, plan *Model, gone string) (*Model, error) {
	got, err := tfkit.ReadBack(ctx, func(ctx context.Context) (*Model, error) { return r.read(ctx, plan) })
	if errors.Is(err, libvirt.ErrNotFound) {
		return nil, errors.New(gone)
	}
	return got, err
}

func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, time.Minute, networkWhat, r.read)
}

func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.Update(ctx, req, resp, 5*time.Minute, networkWhat, func(ctx context.Context, plan, _ *Model, _ *diag.Diagnostics) (*Model, error) {
		spec, err := plan.specNow(ctx)
		if err != nil {
			return nil, err
		}
		if err := r.change(ctx, plan, spec); err != nil {
			return nil, err
		}
		return r.readBack(ctx, plan, "the network is gone")
	})
}

// change brings the network's host entries, state and autostart to the plan, holding the
// network's lock (see netaddr.Lock) from reading its host entries to the last write.
func (r *Resource) change(ctx context.Context, plan *Model, spec *hostxml.Network) error {
	name := plan.Name.ValueString()
	defer netaddr.LockNetwork(r.Client.URI().String(), name)()
	st, err := r.Client.ReadNetwork(ctx, name)
	if err != nil {
		return err
	}
	// Stop first when asked to, so that host entries go to the definition only.
	if !plan.Active.ValueBool() && st.Active {
		if err := r.Client.SetNetworkActive(ctx, name, false); err != nil {
			return err
		}
	}
	changes, err := netaddr.DiffHosts(st.Def, spec.WantedHosts())
	if err != nil {
		return err
	}
	if err := r.Client.UpdateNetwork(ctx, name, changes); err != nil {
		return err
	}
	have, err := hostxml.NetworkFromDefinition(st.Doc)
	if err != nil {
		return err
	}
	if err := r.Client.UpdateNetworkSections(ctx, name, hostxml.LiveChanges(have, spec)); err != nil {
		return err
	}
	if plan.Active.ValueBool() && !st.Active {
		if err := r.Client.SetNetworkActive(ctx, name, true); err != nil {
			return err
		}
	}
	if plan.Autostart.ValueBool() != st.Autostart {
		return r.Client.SetNetworkAutostart(ctx, name, plan.Autostart.ValueBool())
	}
	return nil
}

func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 5*time.Minute, networkWhat, func(ctx context.Context, state *Model, _ *diag.Diagnostics) error {
		return r.Client.DeleteNetwork(ctx, state.Name.ValueString())
	})
}

func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !validators.ObjectNameRegexp.MatchString(req.ID) {
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
