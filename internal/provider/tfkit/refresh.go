package tfkit

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

// Timed is a resource model with a `timeouts` block (one that embeds WithTimeouts).
type Timed[M any] interface {
	*M
	readTimeouts() timeouts.Value
}

// TimeoutsBlock is the `timeouts` block every model embeds (WithTimeouts in a resource's,
// DataTimeouts in a data source's): WithDeadline reads the deadline of each operation
// from it.
type TimeoutsBlock[T any] struct {
	Timeouts T `tfsdk:"timeouts"`
}

func (m *TimeoutsBlock[T]) readTimeouts() T { return m.Timeouts }

type WithTimeouts = TimeoutsBlock[timeouts.Value]

// Refresh is the Read most resources share: the prior state in, a deadline from its
// timeouts block (def when unset), one look at libvirt, the refreshed model out.
//
// look returns the refreshed model. An error that wraps libvirt.ErrNotFound means the
// object is gone: that, and only that, removes the resource from state (logged, so that a
// vanished object is never silent). Any other error — a dropped connection, a daemon
// that does not answer, a denied call — is a diagnostic naming the object, and the state
// stays as it was. what names the object for both, e.g. "volume default/web.qcow2".
func Refresh[M any, P Timed[M]](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse,
	def time.Duration, what func(P) string, look func(context.Context, P) (P, error)) {
	RefreshWith(ctx, req, resp, def, what, func(ctx context.Context, m P, _ *diag.Diagnostics) (P, error) { return look(ctx, m) })
}

// RefreshWith is refresh for a look that adds diagnostics of its own (a warning that the
// object is not running, say).
func RefreshWith[M any, P Timed[M]](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse,
	def time.Duration, what func(P) string, look func(context.Context, P, *diag.Diagnostics) (P, error)) {
	WithDeadline(ctx, req.State.Get, &resp.Diagnostics, timeouts.Value.Read, def, func(ctx context.Context, state P) {
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
		CarryHost(state, got)
		resp.Diagnostics.Append(SetState(ctx, &resp.State, got)...)
	})
}

// Gone is the error of a look that finds the object gone for a reason other than a libvirt
// Lookup (an exported file deleted, say): refresh removes it from state as it does a
// not-found object.
func Gone(format string, args ...any) error {
	return fmt.Errorf("%w: %s", libvirt.ErrNotFound, fmt.Sprintf(format, args...))
}

// KeepState is the Read of a resource that records an action done once (a power action,
// a revert): there is nothing on the host to compare it with, so the state stays.
func KeepState[M any](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	CopyInto[M](ctx, req.State.Get, &resp.State, &resp.Diagnostics)
}
