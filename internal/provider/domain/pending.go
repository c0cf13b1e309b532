package domain

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// restart_on_update = false and pending_restart. A change that needs a restart then only
// rewrites the definition; the running domain keeps the old one until it next starts.
// Which run that is, is kept in the resource's private state: libvirt gives a domain a
// new id on every start, so the restart is pending while the domain still runs under the
// id it had when the restart was deferred — however it is restarted afterwards (by
// Terraform, virsh or the guest's own poweroff and a start).

// pendingRestartKey is the private-state key holding the deferred run ({"run": id}).
const pendingRestartKey = "pending_restart"

type pendingRestart struct {
	Run int32 `json:"run"`
}

// privateGetter and privateSetter are the parts of the framework's private state used here.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// deferredRun is the run whose restart is pending, 0 for none.
func deferredRun(ctx context.Context, p privateGetter) int32 {
	if p == nil {
		return 0
	}
	raw, _ := p.GetKey(ctx, pendingRestartKey)
	var v pendingRestart
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return 0
	}
	return v.Run
}

// keepDeferredRun stores run (0 removes the key) when it is not what private state holds.
func keepDeferredRun(ctx context.Context, p privateSetter, was, run int32, d *diag.Diagnostics) {
	if run == was {
		return
	}
	var raw []byte
	if run != 0 {
		raw, _ = json.Marshal(pendingRestart{Run: run}) // a struct of one int always marshals
	}
	d.Append(p.SetKey(ctx, pendingRestartKey, raw)...)
}

// planPendingRestart sets pending_restart (and for a deferred restart update_method and
// the warning) in the plan of an update whose change is ch.
func planPendingRestart(plan, state *Model, ch domainxml.Plan, after bool, d *diag.Diagnostics) {
	switch {
	case ch.Change == domainxml.ChangeRestart && !plan.RestartOnUpdate.ValueBool():
		plan.UpdateMethod = types.StringValue(string(domainxml.ChangeDefinition))
		plan.PendingRestart = types.BoolValue(true)
		d.AddWarning(fmt.Sprintf("libvirt_domain %s needs a restart, left to you", plan.Name.ValueString()),
			fmt.Sprintf("The change cannot be applied to the running domain (%s). restart_on_update = false: only the definition is "+
				"rewritten, the domain keeps running as it is, and pending_restart stays true until it is stopped and started "+
				"again (e.g. running = false, then true, or `virsh shutdown` and `virsh start`).", ch.Reason))
	case ch.Change == domainxml.ChangeRestart || !after || !state.Running.ValueBool():
		plan.PendingRestart = types.BoolValue(false) // restarted, stopped, or started fresh
	case tfkit.Known(state.PendingRestart):
		plan.PendingRestart = state.PendingRestart
	default:
		plan.PendingRestart = types.BoolValue(false)
	}
}
