package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// timed is a resource model with a `timeouts` block (one that embeds withTimeouts).
type timed[M any] interface {
	*M
	readTimeouts() timeouts.Value
}

// timeoutsBlock is the `timeouts` block every model embeds (withTimeouts in a resource's,
// dataTimeouts in a data source's): withDeadline reads the deadline of each operation
// from it.
type timeoutsBlock[T any] struct {
	Timeouts T `tfsdk:"timeouts"`
}

func (m *timeoutsBlock[T]) readTimeouts() T { return m.Timeouts }

type withTimeouts = timeoutsBlock[timeouts.Value]

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
	refreshWith(ctx, req, resp, def, what, func(ctx context.Context, m P, _ *diag.Diagnostics) (P, error) { return look(ctx, m) })
}

// refreshWith is refresh for a look that adds diagnostics of its own (a warning that the
// object is not running, say).
func refreshWith[M any, P timed[M]](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse,
	def time.Duration, what func(P) string, look func(context.Context, P, *diag.Diagnostics) (P, error)) {
	withDeadline(ctx, req.State.Get, &resp.Diagnostics, timeouts.Value.Read, def, func(ctx context.Context, state P) {
		got, err := look(ctx, state, &resp.Diagnostics)
		if errors.Is(err, libvirt.ErrNotFound) {
			tflog.Info(ctx, what(state)+" is gone; removing it from state", map[string]any{"error": err.Error()})
			resp.State.RemoveResource(ctx)
			return
		}
		if err != nil {
			resp.Diagnostics.AddError("Unable to read "+what(state), err.Error())
			return
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, got)...)
	})
}

// gone is the error of a look that finds the object gone for a reason other than a libvirt
// lookup (an exported file deleted, say): refresh removes it from state as it does a
// not-found object.
func gone(format string, args ...any) error {
	return fmt.Errorf("%w: %s", libvirt.ErrNotFound, fmt.Sprintf(format, args...))
}

// keepState is the Read of a resource that records an action done once (a power action,
// a revert): there is nothing on the host to compare it with, so the state stays.
func keepState[M any](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	copyInto[M](ctx, req.State.Get, &resp.State, &resp.Diagnostics)
}
