package tfkit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// planRequest is a ModifyPlanRequest for a schema of name + timeouts: plan (nil: a
// destroy) and state (nil: a create) give name and timeouts.read ("" for unset).
func planRequest(t *testing.T, plan, state *[2]string) resource.ModifyPlanRequest {
	t.Helper()
	ctx := context.Background()
	s := schema.Schema{
		Attributes: map[string]schema.Attribute{"name": schema.StringAttribute{Required: true}},
		Blocks:     map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Read: true})},
	}
	typ := s.Type().TerraformType(ctx).(tftypes.Object)
	toRaw := func(v *[2]string) tftypes.Value {
		if v == nil {
			return tftypes.NewValue(typ, nil)
		}
		tt := typ.AttributeTypes["timeouts"].(tftypes.Object)
		to := tftypes.NewValue(tt, nil)
		if v[1] != "" {
			to = tftypes.NewValue(tt, map[string]tftypes.Value{"read": tftypes.NewValue(tftypes.String, v[1])})
		}
		return tftypes.NewValue(typ, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, v[0]), "timeouts": to})
	}
	return resource.ModifyPlanRequest{
		Plan:  tfsdk.Plan{Schema: s, Raw: toRaw(plan)},
		State: tfsdk.State{Schema: s, Raw: toRaw(state)},
	}
}

// The bound of a plan-time check: timeouts.read of the plan, of the state on destroy,
// PlanTimeout when unset; the object is named from the attributes.
func TestPlanContextBound(t *testing.T) {
	cases := []struct {
		name         string
		plan, state  *[2]string
		want         time.Duration
		wantSubjects string
	}{
		{"create, read set", &[2]string{"web-1", "3s"}, nil, 3 * time.Second, "Unable to plan libvirt_domain web-1"},
		{"create, read unset", &[2]string{"web-1", ""}, nil, PlanTimeout, "Unable to plan libvirt_domain web-1"},
		{"destroy: the state's", nil, &[2]string{"old", "7s"}, 7 * time.Second, "Unable to plan libvirt_domain old"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, d := PlanContext(context.Background(), planRequest(t, c.plan, c.state), nil, "libvirt_domain", "name")
			defer d.cancel()
			dl, ok := ctx.Deadline()
			if !ok {
				t.Fatal("no deadline")
			}
			if got := time.Until(dl); got > c.want || got < c.want-time.Second {
				t.Errorf("deadline in %s, want %s", got, c.want)
			}
			if d.summary != c.wantSubjects {
				t.Errorf("summary %q, want %q", d.summary, c.wantSubjects)
			}
		})
	}
}

// When the bound runs out, the request fails saying so: an error is added when the
// code swallowed the failure, errors that carry the deadline get the explanation (keeping
// their attribute path); Ctrl-C (the caller's context ending) adds nothing.
func TestDeadlineEnd(t *testing.T) {
	expire := func(parent context.Context) *Deadline {
		_, d := newDeadline(parent, nil, time.Millisecond, "Unable to plan libvirt_clone c1", "the bound")
		<-d.ctx.Done()
		return d
	}
	t.Run("swallowed", func(t *testing.T) {
		var diags diag.Diagnostics
		expire(context.Background()).End(&diags)
		if diags.ErrorsCount() != 1 || diags[0].Summary() != "Unable to plan libvirt_clone c1" ||
			!strings.Contains(diags[0].Detail(), "did not answer within 1ms (the bound)") {
			t.Errorf("diags = %v", diags)
		}
	})
	t.Run("reported", func(t *testing.T) {
		var diags diag.Diagnostics
		diags.AddWarning("w", "context deadline exceeded but a warning")
		diags.AddAttributeError(path.Root("source_domain_id"), "Unable to plan libvirt clone c1", "look up: context deadline exceeded (x)")
		diags.AddError("other", "unrelated")
		expire(context.Background()).End(&diags)
		if diags.ErrorsCount() != 2 || len(diags) != 3 {
			t.Fatalf("diags = %v", diags)
		}
		e := diags[1]
		p, ok := e.(diag.DiagnosticWithPath)
		if !ok || !p.Path().Equal(path.Root("source_domain_id")) {
			t.Errorf("the attribute path was lost: %v", e)
		}
		if !strings.HasPrefix(e.Detail(), "look up: context deadline exceeded (x)\n\n") || !strings.Contains(e.Detail(), "did not answer within") {
			t.Errorf("detail = %q", e.Detail())
		}
		if strings.Contains(diags[0].Detail(), "did not answer") || strings.Contains(diags[2].Detail(), "did not answer") {
			t.Errorf("the explanation went to a warning or an unrelated error: %v", diags)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		_, d := newDeadline(parent, nil, time.Hour, "s", "b")
		cancel()
		var diags diag.Diagnostics
		d.End(&diags)
		if diags.HasError() || d.ctx.Err() == nil {
			t.Errorf("Ctrl-C: diags %v, ctx %v", diags, d.ctx.Err())
		}
	})
	t.Run("in time", func(t *testing.T) {
		_, d := newDeadline(context.Background(), nil, time.Hour, "s", "b")
		var diags diag.Diagnostics
		d.End(&diags)
		if diags.HasError() || d.ctx.Err() == nil {
			t.Errorf("diags %v, ctx not released: %v", diags, d.ctx.Err())
		}
	})
}

func TestImportContextBound(t *testing.T) {
	ctx, d := ImportContext(context.Background(), nil, "libvirt_volume", "default/x")
	defer d.cancel()
	dl, _ := ctx.Deadline()
	if got := time.Until(dl); got > ImportTimeout || got < ImportTimeout-time.Second {
		t.Errorf("deadline in %s, want %s", got, ImportTimeout)
	}
	if d.summary != "Unable to import libvirt_volume default/x" {
		t.Errorf("summary %q", d.summary)
	}
}
