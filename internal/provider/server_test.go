package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
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
	ty := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String, "vcpu": tftypes.Number, "running": tftypes.Bool}}
	value := func(name string, vcpu, running any) *tfprotov6.DynamicValue {
		v, err := tfprotov6.NewDynamicValue(ty, tftypes.NewValue(ty, map[string]tftypes.Value{
			"name": tftypes.NewValue(tftypes.String, name), "vcpu": tftypes.NewValue(tftypes.Number, vcpu),
			"running": tftypes.NewValue(tftypes.Bool, running)}))
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	null, err := tfprotov6.NewDynamicValue(ty, tftypes.NewValue(ty, nil))
	if err != nil {
		t.Fatal(err)
	}
	// "running" defaults to true, as libvirt_domain's does.
	defs := &schemaDefaults{}
	defs.once.Do(func() {
		defs.byType = map[string]*defaultsIndex{"libvirt_domain": {typ: ty, values: map[string]tftypes.Value{"running": tftypes.NewValue(tftypes.Bool, true)}}}
	})
	unset := value("vm", 2, nil) // a configuration without running
	for _, tc := range []struct {
		name                    string
		config, prior, proposed *tfprotov6.DynamicValue
		wantFramework           bool
	}{
		{"same object: the plan is the prior state", unset, value("vm", 2, true), value("vm", 2, true), false},
		{"running set in the configuration, as in state", value("vm", 2, false), value("vm", 2, false), value("vm", 2, false), false},
		{"a default the prior state lacks (stopped outside Terraform)", unset, value("vm", 2, false), value("vm", 2, false), true},
		{"a changed value", unset, value("vm", 2, true), value("vm", 4, true), true},
		{"an unknown value", unset, value("vm", 2, true), value("vm", tftypes.UnknownValue, true), true},
		{"create", unset, &null, value("vm", 2, true), true},
		{"destroy", &null, value("vm", 2, true), &null, true},
		{"both null", &null, &null, &null, true},
		{"no prior", unset, nil, value("vm", 2, true), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &countingServer{}
			req := &tfprotov6.PlanResourceChangeRequest{TypeName: "libvirt_domain", Config: tc.config, PriorState: tc.prior,
				ProposedNewState: tc.proposed, PriorPrivate: []byte(`{"k":"v"}`)}
			resp, err := shortcutServer{ProviderServer: inner, schemas: defs}.PlanResourceChange(context.Background(), req)
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

// Every resource's defaults can be read, so no type is left out of the shortcut, and
// libvirt_domain's include the nested ones.
func TestSchemaDefaultsOfEveryResource(t *testing.T) {
	d := &schemaDefaults{newRes: func() []func() resource.Resource { return New("test")().Resources(context.Background()) }}
	ctx := context.Background()
	for _, f := range New("test")().Resources(ctx) {
		var md resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		if d.index(ctx, md.TypeName) == nil {
			t.Errorf("%s: its defaults could not be read", md.TypeName)
		}
	}
	dom := d.index(ctx, "libvirt_domain")
	for _, p := range []string{"running", "autostart", "disk.device", "graphics", "graphics.type"} {
		if _, ok := dom.values[p]; !ok {
			t.Errorf("libvirt_domain: no default for %s (have %d)", p, len(dom.values))
		}
	}
	if v := dom.values["running"]; !v.Equal(tftypes.NewValue(tftypes.Bool, true)) {
		t.Errorf("libvirt_domain.running defaults to %v, want true", v)
	}
}
