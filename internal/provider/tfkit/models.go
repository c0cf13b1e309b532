package tfkit

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// ModelSource is what a model is read from: a request's state, plan or configuration.
type ModelSource interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// GetBoth reads a model from each of a and b (a ModifyPlan's state and plan, or plan and
// configuration); ok is false when d holds an error, theirs or one before.
func GetBoth[M any](ctx context.Context, d *diag.Diagnostics, a, b ModelSource) (ma, mb M, ok bool) {
	d.Append(a.Get(ctx, &ma)...)
	d.Append(b.Get(ctx, &mb)...)
	return ma, mb, !d.HasError()
}
