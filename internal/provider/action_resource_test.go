package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

// The action resources keep the contract of action_resource.go: `id` is computed and
// kept, `triggers` and every other configurable attribute replace the resource but for
// the few that only shape what comes later, the timeouts block has create only; Update
// stores the plan, and Read (where the contract's) and Delete leave the state as it is
// without a call to libvirt (there is no client here).
func TestActionResources_keepTheContract(t *testing.T) {
	ctx := t.Context()
	cases := map[string]struct {
		inPlace          []string // configurable attributes an update changes in place
		ownRead, ownDrop bool     // Read or Delete of its own (looks at the host, or cleans up)
	}{
		"libvirt_domain_power":    {inPlace: []string{"timeout"}, ownRead: true},
		"libvirt_snapshot_revert": {},
		"libvirt_volume_export":   {inPlace: []string{"remove_on_destroy"}, ownRead: true, ownDrop: true},
	}
	for _, newR := range (&libvirtProvider{}).Resources(ctx) {
		r := newR()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		name := md.TypeName
		c, ok := cases[name]
		if !ok {
			continue
		}
		delete(cases, name)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		for attr, a := range s.Schema.Attributes {
			replaces := slices.ContainsFunc(modifierTexts(ctx, a), func(d string) bool { return strings.Contains(d, "destroy and recreate") })
			configurable := a.IsRequired() || a.IsOptional()
			switch {
			case attr == "id" && (!a.IsComputed() || configurable || !slices.Contains(modifierTexts(ctx, a), keptText(ctx))):
				t.Errorf("%s: id is not computed and kept", name)
			case configurable && !replaces && !slices.Contains(c.inPlace, attr):
				t.Errorf("%s: %s changes in place", name, attr)
			case slices.Contains(c.inPlace, attr) && replaces:
				t.Errorf("%s: %s replaces", name, attr)
			}
		}
		if _, ok := s.Schema.Attributes["triggers"]; !ok {
			t.Errorf("%s: no triggers", name)
		}
		to, ok := s.Schema.Blocks["timeouts"].(schema.SingleNestedBlock)
		if !ok || len(to.Attributes) != 1 || to.Attributes["create"] == nil {
			t.Errorf("%s: timeouts block %v", name, s.Schema.Blocks["timeouts"])
		}

		state := tfsdk.State{Schema: s.Schema, Raw: nullAttributes(s.Schema.Type().TerraformType(ctx))}
		state.SetAttribute(ctx, path.Root("id"), "x/y")
		raw := state.Raw
		var up resource.UpdateResponse
		up.State = tfsdk.State{Schema: s.Schema}
		r.Update(ctx, resource.UpdateRequest{Plan: tfsdk.Plan{Schema: s.Schema, Raw: raw}, State: tfsdk.State{Schema: s.Schema, Raw: raw}}, &up)
		if up.Diagnostics.HasError() || !up.State.Raw.Equal(raw) {
			t.Errorf("%s: Update stored %v (%v)", name, up.State.Raw, up.Diagnostics)
		}
		if !c.ownRead {
			rd := resource.ReadResponse{State: state}
			r.Read(ctx, resource.ReadRequest{State: state}, &rd)
			if rd.Diagnostics.HasError() || !rd.State.Raw.Equal(raw) {
				t.Errorf("%s: Read changed the state to %v (%v)", name, rd.State.Raw, rd.Diagnostics)
			}
		}
		if !c.ownDrop {
			del := resource.DeleteResponse{State: state}
			r.Delete(ctx, resource.DeleteRequest{State: state}, &del)
			if del.Diagnostics.HasError() || !del.State.Raw.Equal(raw) {
				t.Errorf("%s: Delete did something: %v (%v)", name, del.State.Raw, del.Diagnostics)
			}
		}
	}
	if len(cases) != 0 {
		t.Errorf("not registered: %v", cases)
	}
}

// modifierTexts is the descriptions of the plan modifiers of a.
func modifierTexts(ctx context.Context, a schema.Attribute) []string {
	switch a := a.(type) {
	case schema.StringAttribute:
		return texts(ctx, a.PlanModifiers)
	case schema.MapAttribute:
		return texts(ctx, a.PlanModifiers)
	case schema.BoolAttribute:
		return texts(ctx, a.PlanModifiers)
	case schema.Int64Attribute:
		return texts(ctx, a.PlanModifiers)
	}
	return nil
}

func texts[M interface{ Description(context.Context) string }](ctx context.Context, ms []M) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Description(ctx))
	}
	return out
}

// keptText is how a kept (UseStateForUnknown) attribute's modifier describes itself.
func keptText(ctx context.Context) string {
	return modifierTexts(ctx, tfkit.KeptString(""))[0]
}
