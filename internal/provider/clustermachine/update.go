package clustermachine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// machineSizing is the part of a machine's domain that updates touch.
type machineSizing struct {
	VCPU, MaxVCPU     uint
	MemMiB, MaxMemMiB uint64
}

func (s machineSizing) spec() domainxml.Spec {
	return domainxml.Spec{VCPU: s.VCPU, MaxVCPU: s.MaxVCPU, MemoryKiB: s.MemMiB * domainxml.KiBPerMiB, MaxMemoryKiB: s.MaxMemMiB * domainxml.KiBPerMiB}
}

// planSizing is the sizing an update goes to: the ceilings stay while the new values fit
// under them, else they become the new values times the headroom factor.
func planSizing(old machineSizing, vcpu uint, mem uint64) machineSizing {
	n := machineSizing{VCPU: vcpu, MaxVCPU: old.MaxVCPU, MemMiB: mem, MaxMemMiB: old.MaxMemMiB}
	if vcpu > old.MaxVCPU || old.MaxVCPU == 0 {
		n.MaxVCPU = vcpu * cmHeadroom
	}
	if mem > old.MaxMemMiB || old.MaxMemMiB == 0 {
		n.MaxMemMiB = mem * cmHeadroom
	}
	return n
}

func sizingOf(m *Model) machineSizing {
	return machineSizing{VCPU: uint(m.VCPU.ValueInt64()), MaxVCPU: uint(m.MaxVCPU.ValueInt64()),
		MemMiB: uint64(m.MemoryMiB.ValueInt64()), MaxMemMiB: uint64(m.MaxMemoryMiB.ValueInt64())}
}

// ModifyPlan shows at plan time the names the machine gets (domain_name, mac, and
// provider_id when uid is known), how an update reaches it (update_method, a warning
// before a restart) and the new ceilings; it refuses a disk shrink.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan Model
	if d := req.Plan.Get(ctx, &plan); d.HasError() {
		return
	}
	state, _ := tfkit.PriorState[Model](ctx, req.State) // one that does not decode plans as a create
	if tfkit.Known(plan.Namespace) && tfkit.Known(plan.Name) {
		dn := capi.DomainName(plan.Namespace.ValueString(), plan.Name.ValueString())
		plan.DomainName = types.StringValue(dn)
		plan.MAC = types.StringValue(capi.MAC(dn))
	}
	if tfkit.Known(plan.UID) && plan.UID.ValueString() != "" {
		plan.ID = plan.UID
		plan.ProviderID = types.StringValue(capi.ProviderID(plan.UID.ValueString()))
	}
	sizesKnown := tfkit.Known(plan.VCPU) && tfkit.Known(plan.MemoryMiB)
	if state == nil || !tfkit.Known(state.MaxVCPU) || !tfkit.Known(state.MaxMemoryMiB) {
		if sizesKnown {
			plan.MaxVCPU = types.Int64Value(plan.VCPU.ValueInt64() * cmHeadroom)
			plan.MaxMemoryMiB = types.Int64Value(plan.MemoryMiB.ValueInt64() * cmHeadroom)
		}
		plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	if tfkit.Known(plan.DiskGiB) && tfkit.Known(state.DiskGiB) && plan.DiskGiB.ValueInt64() < state.DiskGiB.ValueInt64() {
		resp.Diagnostics.AddAttributeError(path.Root("disk_gib"), "disk_gib cannot shrink",
			fmt.Sprintf("The root disk of machine %s is %d GiB; it cannot shrink to %d GiB. Keep disk_gib at %d or more, or replace the machine "+
				"(terraform apply -replace=...).", state.DomainName.ValueString(), state.DiskGiB.ValueInt64(), plan.DiskGiB.ValueInt64(), state.DiskGiB.ValueInt64()))
		return
	}
	if !sizesKnown {
		return
	}
	old := sizingOf(state)
	next := planSizing(old, uint(plan.VCPU.ValueInt64()), uint64(plan.MemoryMiB.ValueInt64()))
	if plan.MaxVCPU.IsUnknown() {
		plan.MaxVCPU = types.Int64Value(int64(next.MaxVCPU))
	}
	if plan.MaxMemoryMiB.IsUnknown() {
		plan.MaxMemoryMiB = types.Int64Value(int64(next.MaxMemMiB))
	}
	before := state.Running.ValueBool()
	after := plan.Running.IsUnknown() || plan.Running.ValueBool()
	method := domainxml.Classify(old.spec(), next.spec(), before, after)
	if !plan.UpdateMethod.IsUnknown() {
		// Nothing changes (computed values are unknown only when something does).
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	plan.UpdateMethod = types.StringValue(string(method))
	if method == domainxml.ChangeRestart {
		resp.Diagnostics.AddWarning(fmt.Sprintf("libvirt_cluster_machine %s will restart", state.DomainName.ValueString()),
			fmt.Sprintf("vcpu %d -> %d, memory_mib %d -> %d does not fit the running machine's ceilings (max_vcpu %d, max_memory_mib %d), "+
				"or removes vCPUs: the domain is shut down gracefully (forced off after %s), redefined with ceilings of %d vCPUs and %d MiB, "+
				"and started again.", old.VCPU, next.VCPU, old.MemMiB, next.MemMiB, old.MaxVCPU, old.MaxMemMiB, cmShutdownTimeout, next.MaxVCPU, next.MaxMemMiB))
	}
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.Update(ctx, req, resp, 20*time.Minute, func(m *Model) string { return "libvirt cluster machine " + machinePartsOf(m).Domain },
		func(ctx context.Context, plan, state *Model, d *diag.Diagnostics) (*Model, error) {
			return r.update(ctx, plan, state, d)
		})
}

// update grows the disk, then takes the domain to the new sizing and power state
// (workflow.Apply), waits for the lease of a machine it started, and reads it back.
func (r *Resource) update(ctx context.Context, plan, state *Model, d *diag.Diagnostics) (*Model, error) {
	p := machinePartsOf(state)
	uid := state.UID.ValueString()
	plan.UID, plan.ID = state.UID, state.ID
	old := sizingOf(state)
	next := planSizing(old, uint(plan.VCPU.ValueInt64()), uint64(plan.MemoryMiB.ValueInt64()))
	wantRunning := plan.Running.ValueBool()

	// disk_gib: grown in place (online through the running domain) before the domain's
	// own change, which may restart or stop it.
	var errs []error
	if plan.DiskGiB.ValueInt64() > state.DiskGiB.ValueInt64() {
		res, err := r.Client.GrowVolume(ctx, libvirt.VolumeRef{Pool: p.Pool, Name: p.Root}, uint64(plan.DiskGiB.ValueInt64())<<30)
		errs = append(errs, err)
		if res != nil {
			for _, w := range res.Warnings {
				d.AddWarning("Root disk of "+p.Domain+" grown; the guest's filesystem was not", w)
			}
		}
	}
	started := false
	if errors.Join(errs...) == nil {
		res, err := workflow.Apply(ctx, r.Client, workflow.Change{
			ID: uid, Name: p.Domain, Old: old.spec(), New: next.spec(), Running: wantRunning, Autostart: &wantRunning,
			ShutdownTimeout: cmShutdownTimeout, Redefine: workflow.SizingOnly(next.spec()),
		})
		plan.UpdateMethod = types.StringValue(string(res.Method))
		tflog.Info(ctx, "updated cluster machine", map[string]any{"domain": p.Domain, "method": string(res.Method)})
		if res.Forced {
			tflog.Warn(ctx, "machine did not shut down in time and was forced off for the restart", map[string]any{"domain": p.Domain})
		}
		errs = append(errs, err)
		started = res.Started
	}
	if started && errors.Join(errs...) == nil {
		ip := state.IP.ValueString()
		if _, err := workflow.WaitForLease(ctx, r.Client, p.Network, p.MAC, ip, leaseTimeout(plan)); err != nil {
			errs = append(errs, fmt.Errorf("machine %s started but took no lease of its reserved address %s: %w", p.Domain, ip, err))
		}
	}
	return r.readBack(ctx, plan, errors.Join(errs...))
}
