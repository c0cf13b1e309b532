package tfkit

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// An attribute added to states that exist already: null in such a state, and its default
// (false) planned then, stores false in place; any real change replaces.
func TestAddedBoolReplace(t *testing.T) {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"q": tftypes.Bool}}
	some := tftypes.NewValue(obj, map[string]tftypes.Value{"q": tftypes.NewValue(tftypes.Bool, nil)})
	mod := AddedBoolReplace("test").PlanModifiers[0]
	for _, tc := range []struct {
		name        string
		state, plan types.Bool
		replace     bool
	}{
		{"state from before the attribute, default planned", types.BoolNull(), types.BoolValue(false), false},
		{"state from before the attribute, true configured", types.BoolNull(), types.BoolValue(true), true},
		{"false to true", types.BoolValue(false), types.BoolValue(true), true},
		{"true to false", types.BoolValue(true), types.BoolValue(false), true},
		{"unchanged", types.BoolValue(true), types.BoolValue(true), false},
	} {
		req := planmodifier.BoolRequest{State: tfsdk.State{Raw: some}, Plan: tfsdk.Plan{Raw: some}, StateValue: tc.state, PlanValue: tc.plan, ConfigValue: tc.plan}
		var resp planmodifier.BoolResponse
		mod.PlanModifyBool(context.Background(), req, &resp)
		if resp.RequiresReplace != tc.replace {
			t.Errorf("%s: replace %v, want %v", tc.name, resp.RequiresReplace, tc.replace)
		}
	}
}
