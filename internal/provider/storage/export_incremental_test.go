package storage

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestLinkPath(t *testing.T) {
	for _, c := range []struct {
		path string
		n    int
		want string
	}{
		{"/b/week-48.qcow2", 0, "/b/week-48.qcow2"},
		{"/b/week-48.qcow2", 1, "/b/week-48.1.qcow2"},
		{"/b/week-48.qcow2", 12, "/b/week-48.12.qcow2"},
		{"/b/disk.img", 2, "/b/disk.img.2"},
		{"/b/disk", 3, "/b/disk.3"},
	} {
		if got := linkPath(c.path, c.n); got != c.want {
			t.Errorf("linkPath(%q, %d) = %q, want %q", c.path, c.n, got, c.want)
		}
	}
	a, b := checkpointPrefix("/b/week-48.qcow2"), checkpointPrefix("/b/week-49.qcow2")
	if a == b || a != checkpointPrefix("/b/week-48.qcow2") || len(a) != len("tfexport-")+12+1 {
		t.Errorf("checkpoint prefixes %q, %q: want stable, distinct, tfexport-<12 hex>-", a, b)
	}
}

// exportValue is the export's state or plan with only incremental and triggers set.
func exportValue(incremental *bool, trigger string) (tfsdk.State, tfsdk.Plan) {
	var r VolumeExportResource
	var resp resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
	typ := resp.Schema.Type().TerraformType(context.Background()).(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	if incremental != nil {
		vals["incremental"] = tftypes.NewValue(tftypes.Bool, *incremental)
	}
	vals["triggers"] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"day": tftypes.NewValue(tftypes.String, trigger)})
	raw := tftypes.NewValue(typ, vals)
	return tfsdk.State{Schema: resp.Schema, Raw: raw}, tfsdk.Plan{Schema: resp.Schema, Raw: raw}
}

// A change of triggers replaces an export unless it is incremental before and after.
func TestTriggersReplace(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name          string
		before, after *bool
		replace       bool
	}{
		{"incremental", &yes, &yes, false},
		{"plain", &no, &no, true},
		{"unset (states before incremental existed)", nil, nil, true},
		{"turned on", &no, &yes, true},
		{"turned off", &yes, &no, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			state, _ := exportValue(c.before, "mon")
			_, plan := exportValue(c.after, "tue")
			var resp mapplanmodifier.RequiresReplaceIfFuncResponse
			triggersReplace(context.Background(), planmodifier.MapRequest{State: state, Plan: plan}, &resp)
			if resp.Diagnostics.HasError() || resp.RequiresReplace != c.replace {
				t.Fatalf("RequiresReplace = %v (%v), want %v", resp.RequiresReplace, resp.Diagnostics, c.replace)
			}
		})
	}
}
