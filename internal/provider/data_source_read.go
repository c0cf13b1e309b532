package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/datasource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
)

// timedData is a data source model with a `timeouts` block.
type timedData[M any] interface {
	*M
	readTimeouts() timeouts.Value
}

// readData is the Read every data source shares: the configuration in, a deadline from its
// timeouts block (def when unset), one look at libvirt that fills the model, the model
// out. An error is a diagnostic "<what>" (e.g. "Unable to list domains on <uri>") with
// the error as detail.
func readData[M any, P timedData[M]](ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse,
	def time.Duration, what string, look func(context.Context, P) error) {
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
	if err := look(ctx, &m); err != nil {
		resp.Diagnostics.AddError(what, err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
