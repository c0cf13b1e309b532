package tfkit

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// DataTimed is a data source model with a `timeouts` block (one that embeds
// DataTimeouts).
type DataTimed[M any] interface {
	*M
	readTimeouts() timeouts.Value
}

// DataTimeouts is the data sources' timeouts block (it has only `read`).
type DataTimeouts = TimeoutsBlock[timeouts.Value]

// Lookup is the Read every data source shares, the data-source twin of refresh: the
// configuration in, a deadline from its timeouts block (def when unset), the lookup, the
// result into state. An error is reported as "Unable to read <what>"; do may add
// diagnostics of its own.
func Lookup[M any, P DataTimed[M]](ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, m P, d *diag.Diagnostics) (P, error)) {
	WithDeadline(ctx, req.Config.Get, &resp.Diagnostics, timeouts.Value.Read, def, func(ctx context.Context, m P) {
		got, err := do(ctx, m, &resp.Diagnostics)
		if err != nil {
			resp.Diagnostics.AddError("Unable to read "+what(m), err.Error())
			return
		}
		CarryHost(m, got)
		resp.Diagnostics.Append(SetState(ctx, &resp.State, got)...)
	})
}

// The attributes data source schemas share: what the lookup reports.
func DataString(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}

func DataInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
}

func DataBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Computed: true}
}

func DataStrings(desc string) schema.ListAttribute {
	return schema.ListAttribute{MarkdownDescription: desc, Computed: true, ElementType: types.StringType}
}

// DataSchema is a data source's schema: its attributes, its `host` (unless it has its
// own) and the timeouts block (read) every data source has.
func DataSchema(ctx context.Context, desc string, attrs map[string]schema.Attribute) schema.Schema {
	if _, own := attrs["host"]; !own {
		attrs["host"] = DataSourceHostAttribute()
	}
	return schema.Schema{MarkdownDescription: desc, Attributes: attrs, Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx)}}
}

// DataKey is a string that may pick the object to look up (one of several such keys) and
// is filled in from the object found when another one did.
func DataKey(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true}
}
