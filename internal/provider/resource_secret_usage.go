package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"

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

// ModifyPlan refuses, at plan time, a new secret whose usage another secret on the host
// has already: libvirt keeps one secret per usage (a volume path, a Ceph or iSCSI name)
// and would refuse the define at apply, or, for the same UUID, overwrite a secret that no
// state tracks. An unreachable host leaves the check to apply.
func (r *secretResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if !req.State.Raw.IsNull() {
		trackSecret(ctx, req.State)
		return // not a create
	}
	if r.client == nil || req.Plan.Raw.IsNull() {
		return
	}
	var plan secretModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() || !known(plan.UsageType) || !known(plan.UsageName) {
		return
	}
	id, err := r.client.SecretByUsage(ctx, plan.UsageType.ValueString(), plan.UsageName.ValueString())
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
		fmt.Sprintf("libvirt_secret for %s %s: the host has a secret with this usage already (UUID %s), and libvirt keeps "+
			"one secret per usage. Import that one (terraform import <address> %s) or choose another usage_name.",
			plan.UsageType.ValueString(), plan.UsageName.ValueString(), id, id))
}

// trackSecret notes the UUID of the secret in state (trackedSecrets).
func trackSecret(ctx context.Context, state tfsdk.State) {
	var id types.String
	if !state.GetAttribute(ctx, path.Root("id"), &id).HasError() && known(id) {
		trackedSecrets.Store(id.ValueString(), struct{}{})
	}
}
