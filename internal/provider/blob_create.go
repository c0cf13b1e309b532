package provider

import (
	"context"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Create stores the content the model builds and records its sha256.
func (r *blobResource[M, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var config M // only the configuration holds the write-only contents
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	tfkit.Create(ctx, req, resp, 5*time.Minute, P.what, func(ctx context.Context, plan P, _ *diag.Diagnostics) (P, error) {
		content, err := plan.content(&config)
		if err != nil {
			return nil, err
		}
		if err := r.kind().store(ctx, r.Client, plan.volume(), content); err != nil {
			return nil, err
		}
		*plan.digest() = types.StringValue(sha256Hex(content))
		return plan, nil
	})
}
