package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// countingServer stands for the framework: it counts the plans it is asked for.
type countingServer struct {
	tfprotov6.ProviderServer
	plans int
}

func (c *countingServer) PlanResourceChange(context.Context, *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	c.plans++
	return &tfprotov6.PlanResourceChangeResponse{}, nil
}

func TestUnchangedPlanServer(t *testing.T) {
	ty := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String, "vcpu": tftypes.Number}}
	value := func(name string, vcpu any) *tfprotov6.DynamicValue {
		v, err := tfprotov6.NewDynamicValue(ty, tftypes.NewValue(ty, map[string]tftypes.Value{
			"name": tftypes.NewValue(tftypes.String, name), "vcpu": tftypes.NewValue(tftypes.Number, vcpu)}))
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	null, err := tfprotov6.NewDynamicValue(ty, tftypes.NewValue(ty, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		prior, proposed *tfprotov6.DynamicValue
		wantFramework   bool
	}{
		{"same object: the plan is the prior state", value("vm", 2), value("vm", 2), false},
		{"a changed value", value("vm", 2), value("vm", 4), true},
		{"an unknown value", value("vm", 2), value("vm", tftypes.UnknownValue), true},
		{"create", &null, value("vm", 2), true},
		{"destroy", value("vm", 2), &null, true},
		{"both null", &null, &null, true},
		{"no prior", nil, value("vm", 2), true},
		{"same JSON", &tfprotov6.DynamicValue{JSON: []byte(`{"name":"vm"}`)}, &tfprotov6.DynamicValue{JSON: []byte(`{"name":"vm"}`)}, false},
		{"JSON null", &tfprotov6.DynamicValue{JSON: []byte(`null`)}, &tfprotov6.DynamicValue{JSON: []byte(`null`)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &countingServer{}
			req := &tfprotov6.PlanResourceChangeRequest{TypeName: "libvirt_domain", PriorState: tc.prior,
				ProposedNewState: tc.proposed, PriorPrivate: []byte(`{"k":"v"}`)}
			resp, err := unchangedPlanServer{inner}.PlanResourceChange(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := inner.plans == 1; got != tc.wantFramework {
				t.Fatalf("framework asked: %v, want %v", got, tc.wantFramework)
			}
			if !tc.wantFramework && (resp.PlannedState != tc.prior || string(resp.PlannedPrivate) != `{"k":"v"}` || len(resp.RequiresReplace) > 0) {
				t.Fatalf("plan %+v, want the prior state and private data unchanged", resp)
			}
		})
	}
}
