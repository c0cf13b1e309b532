package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// dataTimed is a data source model with a `timeouts` block (one that embeds
// dataTimeouts).
type dataTimed[M any] interface {
	*M
	readTimeouts() timeouts.Value
}

// dataTimeouts is the data sources' timeouts block (it has only `read`).
type dataTimeouts = timeoutsBlock[timeouts.Value]

// lookup is the Read every data source shares, the data-source twin of refresh: the
// configuration in, a deadline from its timeouts block (def when unset), the lookup, the
// result into state. An error is reported as "Unable to read <what>"; do may add
// diagnostics of its own.
func lookup[M any, P dataTimed[M]](ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, m P, d *diag.Diagnostics) (P, error)) {
	withDeadline(ctx, req.Config.Get, &resp.Diagnostics, timeouts.Value.Read, def, func(ctx context.Context, m P) {
		got, err := do(ctx, m, &resp.Diagnostics)
		if err != nil {
			resp.Diagnostics.AddError("Unable to read "+what(m), err.Error())
			return
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, got)...)
	})
}
