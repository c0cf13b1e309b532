package provider

import (
	"context"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/clone"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// SetPlanAndImportTimeoutsForTest shortens the default bounds of plan-time checks and
// imports (deadlines.go) and returns a function that restores them. Acceptance tests run
// the provider in the test process, so this reaches the provider under test.
func SetPlanAndImportTimeoutsForTest(plan, imp time.Duration) (restore func()) {
	oldPlan, oldImport := tfkit.PlanTimeout, tfkit.ImportTimeout
	tfkit.PlanTimeout, tfkit.ImportTimeout = plan, imp
	return func() { tfkit.PlanTimeout, tfkit.ImportTimeout = oldPlan, oldImport }
}

// ImportCloneForTest runs libvirt_clone's ImportState with id against c, as
// `terraform import` does, and returns its diagnostics.
func ImportCloneForTest(ctx context.Context, c *libvirt.Client, id string) diag.Diagnostics {
	r := &clone.Resource{ResourceBase: tfkit.ResourceBase{Client: c}}
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	resp := &resource.ImportStateResponse{State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)}}
	r.ImportState(ctx, resource.ImportStateRequest{ID: id}, resp)
	return resp.Diagnostics
}
