package domain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// Power actions of libvirt_domain_power.
const (
	powerReboot   = "reboot"
	powerReset    = "reset"
	powerShutdown = "shutdown"
	powerStart    = "start"
	powerDestroy  = "destroy"
)

const defaultPowerTimeout = "2m"

// PowerResource is the action resource libvirt_domain_power.
type PowerResource struct {
	tfkit.ActionResource[PowerModel]
}

func (r *PowerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = tfkit.ActionSchema{
		Description: "A power operation performed once on a domain when this resource is created: `reboot`, `reset`, " +
			"`shutdown`, `start` or `destroy`. Changing `triggers` (or `domain_id` / `action`) replaces the resource, " +
			"which performs the action again. Destroying it does nothing on the host.\n\n" +
			"This is an operation, not a state: the domain's own `libvirt_domain.running` stays the source of truth for " +
			"whether it runs. A `shutdown` or `destroy` done here is undone by the next apply of a `libvirt_domain` with " +
			"`running = true` (it starts the domain again), and a `start` by one with `running = false`.",
		ID: "`<domain uuid>/<action>`.",
		Triggers: "Arbitrary values; any change replaces the resource and so performs the action again " +
			"(e.g. `{ config = sha256(local.config) }`).",
		CreateTimeout: "How long the whole action may take, its graceful wait (`timeout`) included (a Go duration, " +
			"default: `timeout` plus 2 minutes for the calls around it).",
		Attributes: map[string]schema.Attribute{
			"domain_id": tfkit.RequiredReplace("The domain: its uuid (`libvirt_domain.id`) or name. Changing it performs the action on the new domain.", stringvalidator.LengthAtLeast(1)),
			"action": tfkit.RequiredReplace("What to do: `reboot` (graceful: guest agent or ACPI, as libvirt chooses; then waits up to "+
				"`timeout` for the domain to run again), `reset` (the reset button, immediate), `shutdown` (graceful "+
				"request, then waits up to `timeout` for the domain to be shut off; a guest that does not stop is an "+
				"error, it is never forced off), `start`, `destroy` (immediate forced power-off). Changing it performs "+
				"the new action.", stringvalidator.OneOf(powerReboot, powerReset, powerShutdown, powerStart, powerDestroy)),
			"timeout": tfkit.DefaultString("How long `reboot` and `shutdown` wait for the guest (a Go duration, default `2m`). "+
				"Changing it does not perform the action again.", defaultPowerTimeout, validators.Duration()),
			"domain_name": tfkit.KeptString("Name of the domain the action was performed on."),
			"domain_state": tfkit.KeptString("State of the domain right after the action (`running`, `shutoff`, ...). Not refreshed: " +
				"the domain's own resource reports its current state."),
		},
	}.Schema(ctx)
}

// PowerModel is libvirt_domain_power.
type PowerModel struct {
	tfkit.ActionModel
	DomainID types.String `tfsdk:"domain_id"`
	Action   types.String `tfsdk:"action"`
	Timeout  types.String `tfsdk:"timeout"`
	Domain   types.String `tfsdk:"domain_name"`
	State    types.String `tfsdk:"domain_state"`
}

func (m *PowerModel) what() string {
	return m.Action.ValueString() + " of domain " + tfkit.NameOr(m.Domain, m.DomainID.ValueString())
}

// grace is how long reboot and shutdown wait for the guest.
func (m *PowerModel) grace() time.Duration {
	d, err := time.ParseDuration(m.Timeout.ValueString())
	if err != nil {
		return 2 * time.Minute
	}
	return d
}

func (r *PowerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var cfg PowerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &cfg)...)
	wait := cfg.grace()
	// The default deadline: the graceful wait plus room for the RPCs around it.
	tfkit.Create(ctx, req, resp, wait+2*time.Minute, (*PowerModel).what,
		func(ctx context.Context, plan *PowerModel, d *diag.Diagnostics) (*PowerModel, error) {
			id, action := plan.DomainID.ValueString(), plan.Action.ValueString()
			st, err := r.Client.GetDomainStatus(ctx, id)
			if errors.Is(err, libvirt.ErrNotFound) {
				return nil, fmt.Errorf("domain %q does not exist on %s", id, r.Client.URI())
			}
			if err != nil {
				return nil, err
			}
			name, uuid := st.Domain.Name, libvirt.UUIDString(st.Domain)
			plan.Domain = types.StringValue(name)
			tflog.Info(ctx, "domain power action", map[string]any{"domain": name, "action": action, "state": st.State})
			if err := r.perform(ctx, uuid, name, action, wait); err != nil {
				return nil, err
			}
			state, err := r.Client.DomainState(ctx, uuid)
			if err != nil {
				return nil, fmt.Errorf("the action was done, but reading the domain's state back failed: %w", err)
			}
			plan.ID = types.StringValue(uuid + "/" + action)
			plan.State = types.StringValue(state)
			return plan, nil
		})
}

// perform does one power action on the domain.
func (r *PowerResource) perform(ctx context.Context, uuid, name, action string, wait time.Duration) error {
	switch action {
	case powerReboot:
		return r.Client.RebootDomain(ctx, uuid, wait)
	case powerReset:
		return r.Client.ResetDomain(ctx, uuid)
	case powerShutdown:
		err := r.Client.ShutdownDomainGraceful(ctx, uuid, wait)
		var te *libvirt.ShutdownTimeoutError
		if errors.As(err, &te) {
			te.Domain = name
		}
		return err
	case powerStart:
		return r.Client.StartDomain(ctx, uuid)
	case powerDestroy:
		return r.Client.DestroyDomain(ctx, uuid)
	}
	return fmt.Errorf("unknown action %q", action)
}

// Read keeps the state as it is while the domain exists; a domain that is gone removes
// it from state.
func (r *PowerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, time.Minute,
		func(m *PowerModel) string { return "domain " + m.DomainID.ValueString() },
		func(ctx context.Context, m *PowerModel) (*PowerModel, error) {
			_, err := r.Client.LookupDomain(ctx, m.DomainID.ValueString())
			return m, err
		})
}
