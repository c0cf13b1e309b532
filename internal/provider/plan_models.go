package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// modelSource is what a model is read from: a request's state, plan or configuration.
type modelSource interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// getBoth reads a model from each of a and b (a ModifyPlan's state and plan, or plan and
// configuration); ok is false when d holds an error, theirs or one before.
func getBoth[M any](ctx context.Context, d *diag.Diagnostics, a, b modelSource) (ma, mb M, ok bool) {
	d.Append(a.Get(ctx, &ma)...)
	d.Append(b.Get(ctx, &mb)...)
	return ma, mb, !d.HasError()
}
