package tfkit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Plan-time checks (ModifyPlan) and imports ask libvirt too, and Terraform gives those
// requests no deadline of their own: a daemon that accepts the connection but never
// answers (wedged, or a link gone silent under an established connection) would hold
// `terraform plan` or `terraform import` forever. The pool bounds only its dials; a call
// on a live connection is bounded by its context alone. So each gets a deadline here,
// derived from the request's context, which Ctrl-C still ends at once.

// PlanTimeout bounds the libvirt calls of a ModifyPlan when the resource's timeouts.read
// is not set (the same bound as the refresh that runs before it). A variable so that
// tests can shorten it.
var PlanTimeout = 2 * time.Minute

// ImportTimeout bounds the libvirt calls of an import: there is no timeouts block to read
// at import time. A variable so that tests can shorten it.
var ImportTimeout = 5 * time.Minute

// Deadline is the bound of one plan-time check or import.
type Deadline struct {
	parent  context.Context
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
	summary string // "Unable to plan libvirt_domain web-1"
	bound   string // which setting bounds it, for the message
	uri     string
}

// PlanContext bounds a ModifyPlan: timeouts.read of the planned object (of the prior
// state on destroy), PlanTimeout when unset. typ and the attributes named by attrs
// (joined with "/") name the object in the error, e.g. ("libvirt_domain", "name").
// Callers defer end.
func PlanContext(ctx context.Context, req resource.ModifyPlanRequest, c *libvirt.Client, typ string, attrs ...string) (context.Context, *Deadline) {
	from := req.Plan
	if req.Plan.Raw.IsNull() {
		from = tfsdk.Plan(req.State)
	}
	timeout := PlanTimeout
	var tv timeouts.Value
	if d := from.GetAttribute(ctx, path.Root("timeouts"), &tv); !d.HasError() {
		if t, d := tv.Read(ctx, PlanTimeout); !d.HasError() && t > 0 {
			timeout = t
		}
	}
	subject := typ
	if name := attrsOf(ctx, from, attrs); name != "" {
		subject += " " + name
	}
	return newDeadline(ctx, c, timeout, "Unable to plan "+subject,
		fmt.Sprintf("the bound on plan-time checks: timeouts.read of the resource, %s when unset", PlanTimeout))
}

// ImportContext bounds an import of typ with the given id by ImportTimeout. Callers
// defer end.
func ImportContext(ctx context.Context, c *libvirt.Client, typ, id string) (context.Context, *Deadline) {
	return newDeadline(ctx, c, ImportTimeout, fmt.Sprintf("Unable to import %s %s", typ, id), "the bound on imports")
}

func newDeadline(parent context.Context, c *libvirt.Client, timeout time.Duration, summary, bound string) (context.Context, *Deadline) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	d := &Deadline{parent: parent, ctx: ctx, cancel: cancel, timeout: timeout, summary: summary, bound: bound}
	if c != nil {
		d.uri = c.URI().String()
	}
	return ctx, d
}

// expired reports whether the bound itself ran out (not the caller's context: Ctrl-C is
// not a timeout).
func (d *Deadline) Expired() bool {
	return errors.Is(d.ctx.Err(), context.DeadlineExceeded) && d.parent.Err() == nil
}

// end releases the context. When the bound ran out it makes sure the request fails and
// says why: the errors already reported that carry the deadline get the explanation
// appended; when none was reported (plan-time checks that leave an unreachable host to
// apply), an error naming the object is added. Ctrl-C adds nothing.
func (d *Deadline) End(diags *diag.Diagnostics) {
	defer d.cancel()
	if !d.Expired() {
		return
	}
	check := "Check that the daemon answers"
	if d.uri != "" {
		check += fmt.Sprintf(" (virsh -c %s version)", d.uri)
	}
	why := fmt.Sprintf("The libvirt daemon did not answer within %s (%s). It accepted the connection but sent nothing "+
		"back: it may be wedged, or the link to it went silent. %s, then try again.", d.timeout, d.bound, check)
	found := false
	for i, e := range *diags {
		if e.Severity() != diag.SeverityError || !strings.Contains(e.Detail(), context.DeadlineExceeded.Error()) {
			continue
		}
		found = true
		var nd diag.Diagnostic = diag.NewErrorDiagnostic(e.Summary(), e.Detail()+"\n\n"+why)
		if p, ok := e.(diag.DiagnosticWithPath); ok {
			nd = diag.WithPath(p.Path(), nd)
		}
		(*diags)[i] = nd
	}
	if !found {
		diags.AddError(d.summary, why)
	}
}

// attrsOf joins the known string values of the named top-level attributes with "/".
func attrsOf(ctx context.Context, from tfsdk.Plan, attrs []string) string {
	var parts []string
	for _, a := range attrs {
		var v types.String
		if d := from.GetAttribute(ctx, path.Root(a), &v); d.HasError() || !Known(v) {
			continue
		}
		parts = append(parts, v.ValueString())
	}
	return strings.Join(parts, "/")
}
