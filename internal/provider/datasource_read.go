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

// dataTimeouts is withTimeouts for data sources (whose block has only `read`).
type dataTimeouts struct {
	Timeouts timeouts.Value `tfsdk:"timeouts"`
}

func (m *dataTimeouts) readTimeouts() timeouts.Value { return m.Timeouts }

// lookup is the Read every data source shares, the data-source twin of refresh: the
// configuration in, a deadline from its timeouts block (def when unset), the lookup, the
// result into state. An error is reported as "Unable to read <what>"; do may add
// diagnostics of its own.
func lookup[M any, P dataTimed[M]](ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, m P, d *diag.Diagnostics) (P, error)) {
	var m M
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := P(&m).readTimeouts().Read(ctx, def)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got, err := do(ctx, &m, &resp.Diagnostics)
	if err != nil {
		resp.Diagnostics.AddError("Unable to read "+what(&m), err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, got)...)
}
