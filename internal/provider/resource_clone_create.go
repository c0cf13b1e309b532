package provider

import (
	"context"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// Create makes the clone (workflow.Clone: its disks, its varstore, its domain, all
// removed again when a step fails) and reads it back.
func (r *cloneResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 30*time.Minute,
		func(m *cloneModel) string { return "libvirt clone " + m.Name.ValueString() },
		func(ctx context.Context, plan *cloneModel, d *diag.Diagnostics) (*cloneModel, error) {
			res, err := workflow.Clone(ctx, r.Client, workflow.CloneRequest{
				SourceID: plan.SourceDomainID.ValueString(), Name: plan.Name.ValueString(), Mode: plan.Mode.ValueString(),
				Pool: tfkit.StringOf(plan.Pool), VCPU: uint(plan.VCPU.ValueInt64()), MemoryMiB: uint64(plan.MemoryMiB.ValueInt64()),
				CloudinitID: tfkit.StringOf(plan.CloudinitID), Running: plan.Running.ValueBool(),
				Log: func(msg string, fields map[string]any) { tflog.Info(ctx, msg, fields) },
			})
			if err != nil {
				return nil, err
			}
			for _, w := range res.Warnings {
				d.AddWarning("The source of linked clone "+plan.Name.ValueString()+" is now its backing image", w)
			}
			got, err := tfkit.ReadBack(ctx, func(ctx context.Context) (*cloneModel, error) { return r.read(ctx, res.ID, plan) })
			if err != nil {
				// The clone exists and is complete: keep it tracked, report the failed read.
				plan.ID = types.StringValue(res.ID)
				fillCloneUnknowns(plan)
				return plan, err
			}
			return got, nil
		})
}
