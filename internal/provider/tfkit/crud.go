package tfkit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// The write paths every resource shares, next to refresh (its Read): the model from the
// request, a deadline from the resource's `timeouts` block (def when unset), the work,
// and what goes into state. A resource supplies only the work, as a function of its
// model, and what names the object in messages (e.g. "storage pool web").
//
// The work returns the object as read back from libvirt after the change, never the plan
// as it came: state is what the host has.

// Create is a Create. do makes the object and returns it read back; nil means nothing
// was made. When do fails after the object exists, it returns the model anyway: it is
// stored (Terraform marks it tainted, and the next apply replaces it) so that no object
// is left on the host that the state does not track. The error is reported as
// "Unable to create <what>"; do may add diagnostics of its own (warnings, attribute
// errors) to d.
func Create[M any, P Timed[M]](ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, plan P, d *diag.Diagnostics) (P, error)) {
	WithDeadline(ctx, req.Plan.Get, &resp.Diagnostics, timeouts.Value.Create, def, func(ctx context.Context, plan P) {
		got, err := do(ctx, plan, &resp.Diagnostics)
		if got != nil {
			CarryHost(plan, got)
		}
		Keep(ctx, &resp.State, &resp.Diagnostics, got, "Unable to create "+what(plan), err)
	})
}

// Update is an Update. do changes the object from state to plan and returns it read
// back; nil leaves the state as it was (nothing changed, or the change failed before
// anything was done). Errors are reported as for create.
func Update[M any, P Timed[M]](ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, plan, state P, d *diag.Diagnostics) (P, error)) {
	var state M
	resp.Diagnostics.Append(GetState(ctx, req.State, &state)...)
	WithDeadline(ctx, req.Plan.Get, &resp.Diagnostics, timeouts.Value.Update, def, func(ctx context.Context, plan P) {
		got, err := do(ctx, plan, &state, &resp.Diagnostics)
		if got != nil {
			CarryHost(plan, got)
		}
		Keep(ctx, &resp.State, &resp.Diagnostics, got, "Unable to update "+what(&state), err)
	})
}

// Remove is a Delete. An object already gone (an error wrapping libvirt.ErrNotFound) is
// deleted; any other error is reported as "Unable to delete <what>" and the resource
// stays in state.
func Remove[M any, P Timed[M]](ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, state P, d *diag.Diagnostics) error) {
	WithDeadline(ctx, req.State.Get, &resp.Diagnostics, timeouts.Value.Delete, def, func(ctx context.Context, state P) {
		if err := do(ctx, state, &resp.Diagnostics); !errors.Is(err, libvirt.ErrNotFound) {
			Report(&resp.Diagnostics, "Unable to delete "+what(state), err)
		}
	})
}

// WithDeadline runs work on the model that get (a plan's, a state's or a configuration's
// Get) decodes, with ctx bounded by the timeout that op (the Create, Read, Update or
// Delete of the model's timeouts block T: a resource's or a data source's) gives, def
// when the block does not set it. When the model does not decode or the block is
// malformed, d has the error and work does not run.
func WithDeadline[M, T any, P interface {
	*M
	readTimeouts() T
}](ctx context.Context, get func(context.Context, any) diag.Diagnostics, d *diag.Diagnostics,
	op func(T, context.Context, time.Duration) (time.Duration, diag.Diagnostics), def time.Duration, work func(context.Context, P)) {
	var m M
	d.Append(get(ctx, &m)...)
	if d.HasError() {
		return
	}
	timeout, diags := op(P(&m).readTimeouts(), ctx, def)
	d.Append(diags...)
	if d.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	work(ctx, &m)
}

// StorePlan is the Update of a resource whose every attribute but `timeouts` replaces
// it: the plan (the prior values and the new timeouts) is what the state becomes.
func StorePlan[M any](ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	CopyInto[M](ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

// CopyInto sets state to the model M that get (a plan's, a state's or a configuration's
// Get) decodes.
func CopyInto[M any](ctx context.Context, get func(context.Context, any) diag.Diagnostics, state *tfsdk.State, d *diag.Diagnostics) {
	var m M
	d.Append(get(ctx, &m)...)
	if d.HasError() {
		return
	}
	d.Append(SetState(ctx, state, &m)...)
}

// Keep stores what a create or update returned, when it returned a model, and reports
// its error under summary.
func Keep[P any](ctx context.Context, state *tfsdk.State, d *diag.Diagnostics, got *P, summary string, err error) {
	if got != nil {
		d.Append(SetState(ctx, state, got)...)
	}
	Report(d, summary, err)
}

// PriorState is the prior state of a plan as the model M: nil when there is none (a
// Create), and nil with the diagnostics when it does not decode.
func PriorState[M any](ctx context.Context, state tfsdk.State) (*M, diag.Diagnostics) {
	if state.Raw.IsNull() {
		return nil, nil
	}
	var m M
	if d := GetState(ctx, state, &m); d.HasError() {
		return nil, d
	}
	return &m, nil
}

// AttributeError is an error caused by one attribute's value: report points the
// diagnostic at it (Terraform then shows the line of the configuration).
type AttributeError struct {
	Path path.Path
	Err  error
}

func (e *AttributeError) Error() string { return e.Err.Error() }
func (e *AttributeError) Unwrap() error { return e.Err }

// AtAttribute marks err as caused by the attribute at p (nil stays nil).
func AtAttribute(p path.Path, err error) error {
	if err == nil {
		return nil
	}
	return &AttributeError{p, err}
}

// Report adds err, when there is one, as an error headed summary: at its attribute when
// it is an AttributeError.
func Report(d *diag.Diagnostics, summary string, err error) {
	var ae *AttributeError
	switch {
	case err == nil:
	case errors.As(err, &ae):
		d.AddAttributeError(ae.Path, summary, err.Error())
	default:
		d.AddError(summary, err.Error())
	}
}

// Sentence is an error whose message is a sentence for users, shown as the detail of a
// diagnostic as it is (capitalised, with its full stop), where a wrapped Go error would
// read as a fragment. err, when given as an argument, is wrapped with %w as usual.
func Sentence(format string, args ...any) error { return fmt.Errorf(format, args...) }

// readBackTimeout bounds ReadBack.
const readBackTimeout = time.Minute

// ReadBack reads an object back after a create or update, on a deadline of its own (the
// work's may have run out while it waited), and waits while the daemon does not answer
// (a restart, a link dropped right after the write) rather than fail a change that was
// done: that would taint the object and have the next apply replace it for nothing.
func ReadBack[P any](ctx context.Context, read func(context.Context) (P, error)) (P, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readBackTimeout)
	defer cancel()
	var got P
	var last error
	err := poll.Until(rctx, poll.Options{Every: time.Second, Max: 5 * time.Second}, func(ctx context.Context) (bool, error) {
		got, last = read(ctx)
		return last == nil, NonTransport(last)
	})
	if err != nil && last != nil {
		return got, last
	}
	return got, err
}

// NonTransport is err unless it is a transport error (nil then): for checks that go on
// while the daemon is away.
func NonTransport(err error) error {
	if libvirt.IsTransport(err) {
		return nil
	}
	return err
}

// ValidateSpec is the ValidateConfig of a resource whose model becomes a spec that
// validates itself (a network, a pool: hostxml's; E, its FieldError, is an attribute and
// a detail, so tfkit names no object's XML package): the spec's own checks, each reported
// on its attribute as "Invalid <what> <attribute>". A configuration with unknown values
// is checked as far as it is Known (toSpec says ok false when it cannot be built yet).
func ValidateSpec[M any, E ~struct{ Attr, Detail string }, S interface{ Validate() []E }](ctx context.Context, req resource.ValidateConfigRequest,
	resp *resource.ValidateConfigResponse, what string, toSpec func(*M, context.Context) (S, bool, diag.Diagnostics)) {
	var m M
	if d := GetConfig(ctx, req.Config, &m); d.HasError() {
		// A value not known yet where the model holds a plain Go value (a whole block from
		// a module's variable, under `terraform validate`) cannot be read, and is no error
		// of the user's: the checks run once it is known (plan, apply).
		if req.Config.Raw.IsFullyKnown() {
			resp.Diagnostics.Append(d...)
		}
		return
	}
	spec, ok, diags := toSpec(&m, ctx)
	resp.Diagnostics.Append(diags...)
	if !ok {
		return
	}
	for _, fe := range spec.Validate() {
		e := struct{ Attr, Detail string }(fe)
		resp.Diagnostics.AddAttributeError(path.Root(e.Attr), "Invalid "+what+" "+e.Attr, e.Detail)
	}
}
