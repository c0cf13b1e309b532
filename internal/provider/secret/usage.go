package secret

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// trackedSecrets holds the UUIDs of the secrets this provider process has seen in state
// (refreshed or planned). A replacement is planned as a create with no prior state, right
// after the plan of the object it replaces, so a create whose usage a tracked secret has
// is that replacement (or a configuration naming one usage twice, which apply reports).
var trackedSecrets sync.Map

// ModifyPlan refuses, at plan time, a new secret whose UUID (when configured) or usage
// another secret on the host has already, one no state tracks: libvirt keeps one secret
// per usage (a volume path, a Ceph or iSCSI name) and would refuse the define at apply,
// and for the same UUID would overwrite that secret. An unreachable host leaves the check
// to apply (Create checks again); a daemon that does not answer fails the plan when the
// plan-time bound (timeouts.read, planTimeout when unset) runs out.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		trackSecret(ctx, req.State)
		return // not a create
	}
	if r.Client == nil || req.Plan.Raw.IsNull() {
		return
	}
	var plan Model
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() || !tfkit.Known(plan.UsageType) || !tfkit.Known(plan.UsageName) {
		return
	}
	ctx, dl := tfkit.PlanContext(ctx, req, r.Client, "libvirt_secret", "usage_type", "usage_name")
	defer dl.End(&resp.Diagnostics)
	usage := plan.UsageType.ValueString() + " " + plan.UsageName.ValueString()
	if tfkit.Known(plan.UUID) {
		s, err := r.Client.GetSecret(ctx, plan.UUID.ValueString())
		switch {
		case err == nil:
			if _, replaced := trackedSecrets.Load(s.UUID); !replaced {
				resp.Diagnostics.AddAttributeError(path.Root("uuid"), "Secret UUID taken",
					fmt.Sprintf("libvirt_secret for %s: the host has a secret with UUID %s already (%s %s), which no state tracks; "+
						"creating this one would take it over. Import that one (terraform import <address> %s) or choose another uuid.",
						usage, s.UUID, s.UsageType, s.UsageName, s.UUID))
			}
			return
		case !errors.Is(err, libvirt.ErrNotFound):
			tflog.Debug(ctx, "secret uuid not checked at plan time", map[string]any{"error": err.Error()})
			return
		}
	}
	id, err := r.Client.SecretByUsage(ctx, plan.UsageType.ValueString(), plan.UsageName.ValueString())
	if err != nil {
		if !errors.Is(err, libvirt.ErrNotFound) {
			tflog.Debug(ctx, "secret usage not checked at plan time", map[string]any{"error": err.Error()})
		}
		return
	}
	if _, replaced := trackedSecrets.Load(id); replaced {
		return
	}
	resp.Diagnostics.AddAttributeError(path.Root("usage_name"), "Secret usage taken",
		fmt.Sprintf("libvirt_secret for %s: the host has a secret with this usage already (UUID %s), and libvirt keeps "+
			"one secret per usage. Import that one (terraform import <address> %s) or choose another usage_name.",
			usage, id, id))
}

// trackSecret notes the UUID of the secret in state (trackedSecrets).
func trackSecret(ctx context.Context, state tfsdk.State) {
	var id types.String
	if !state.GetAttribute(ctx, path.Root("id"), &id).HasError() && tfkit.Known(id) {
		trackedSecrets.Store(id.ValueString(), struct{}{})
	}
}
