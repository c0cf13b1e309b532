package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
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

// The attributes data source schemas share: what the lookup reports.
func dataString(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}

func dataInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
}

func dataBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Computed: true}
}

func dataStrings(desc string) schema.ListAttribute {
	return schema.ListAttribute{MarkdownDescription: desc, Computed: true, ElementType: types.StringType}
}
