package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// timed is a resource model with a `timeouts` block.
type timed[M any] interface {
	*M
	readTimeouts() timeouts.Value
}

// refresh is the Read most resources share: the prior state in, a deadline from its
// timeouts block (def when unset), one look at libvirt, the refreshed model out.
//
// look returns the refreshed model. An error that wraps libvirt.ErrNotFound means the
// object is gone: that, and only that, removes the resource from state (logged, so that a
// vanished object is never silent). Any other error — a dropped connection, a daemon
// that does not answer, a denied call — is a diagnostic naming the object, and the state
// stays as it was. what names the object for both, e.g. "volume default/web.qcow2".
func refresh[M any, P timed[M]](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse,
	def time.Duration, what func(P) string, look func(context.Context, P) (P, error)) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := P(&state).readTimeouts().Read(ctx, def)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got, err := look(ctx, &state)
	if errors.Is(err, libvirt.ErrNotFound) {
		tflog.Info(ctx, what(&state)+" is gone from the host; removing it from state", map[string]any{"error": err.Error()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Unable to read "+what(&state), err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, got)...)
}
