package domain

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// tfkit.Decode reads libvirt_domain's model exactly as the framework's Get does: for
// states read from definitions using every family (groups written and null), and for a
// plan whose blocks are unknown, where both refuse with the same diagnostics.
func TestDecodeMatchesFrameworkGet(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&Resource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	for _, file := range []string{"every_family_libvirt.xml", "every_family_defaulted_libvirt.xml", "chardev_libvirt.xml", "aarch64-virt-defined.xml"} {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile("../../domainxml/testdata/" + file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := domainxml.Parse(string(b))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []*Model{fromSpec(p.Spec, nil), fromSpec(p.Spec, fromSpec(p.Spec, nil))} {
				m.Timeouts = timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{
					"create": types.StringType, "read": types.StringType, "update": types.StringType, "delete": types.StringType,
				})}
				st := tfsdk.State{Schema: sr.Schema}
				if d := st.Set(ctx, m); d.HasError() {
					t.Fatal(d)
				}
				var want, got Model
				if d := st.Get(ctx, &want); d.HasError() {
					t.Fatal(d)
				}
				calls := 0
				if d := tfkit.Decode(ctx, st.Raw, sr.Schema.Type(), &got, func(any) diag.Diagnostics { calls++; return nil }); d.HasError() {
					t.Fatal(d)
				}
				if calls != 0 {
					t.Fatal("Decode left a whole domain model to the framework")
				}
				if !reflect.DeepEqual(want, got) {
					t.Errorf("Decode and the framework's Get differ:\n got %+v\nwant %+v", got, want)
				}
			}
		})
	}

	// A plan whose network_interface blocks are unknown (a dynamic block over an unknown
	// for_each): the model cannot hold that; both say so the same way.
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	vals["network_interface"] = tftypes.NewValue(typ.AttributeTypes["network_interface"], tftypes.UnknownValue)
	plan := tfsdk.Plan{Schema: sr.Schema, Raw: tftypes.NewValue(typ, vals)}
	var a, b Model
	da := plan.Get(ctx, &a)
	db := tfkit.GetPlan(ctx, plan, &b)
	if !da.HasError() || !reflect.DeepEqual(da, db) {
		t.Errorf("unknown blocks: framework %v, Decode %v", da, db)
	}
}

// tfkit.SetState writes libvirt_domain's model exactly as the framework's Set does (same
// value, not left to the framework), on the same definitions; a value whose type is not
// the schema's is left to the framework, which refuses it with its own diagnostics.
func TestEncodeMatchesFrameworkSet(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&Resource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	nullTimeouts := timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{
		"create": types.StringType, "read": types.StringType, "update": types.StringType, "delete": types.StringType,
	})}
	for _, file := range []string{"every_family_libvirt.xml", "every_family_defaulted_libvirt.xml", "chardev_libvirt.xml", "aarch64-virt-defined.xml"} {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile("../../domainxml/testdata/" + file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := domainxml.Parse(string(b))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []*Model{fromSpec(p.Spec, nil), fromSpec(p.Spec, fromSpec(p.Spec, nil))} {
				m.Timeouts = nullTimeouts
				want := tfsdk.State{Schema: sr.Schema}
				if d := want.Set(ctx, m); d.HasError() {
					t.Fatal(d)
				}
				got, err := tfkit.Encode(ctx, sr.Schema.Type(), nil, m)
				if err != nil {
					t.Fatalf("Encode left a whole domain model to the framework: %v", err)
				}
				if !got.Equal(want.Raw) {
					diffs, _ := got.Diff(want.Raw)
					t.Errorf("Encode and the framework's Set differ: %v", diffs)
				}
				// Replacing a value: the Terraform type comes from it.
				st := tfsdk.State{Schema: sr.Schema, Raw: want.Raw}
				if d := tfkit.SetState(ctx, &st, m); d.HasError() || !st.Raw.Equal(want.Raw) {
					t.Errorf("SetState over a value: %v", d)
				}
			}
		})
	}

	m := &Model{}
	m.Timeouts = nullTimeouts
	m.Tags = types.MapNull(types.Int64Type) // tags is a map of strings
	if _, err := tfkit.Encode(ctx, sr.Schema.Type(), nil, m); err == nil {
		t.Error("Encode took a list of numbers for a list of strings")
	}
	a, b := tfsdk.State{Schema: sr.Schema}, tfsdk.State{Schema: sr.Schema}
	// (Which mistyped attribute the framework names first depends on map order.)
	da, db := a.Set(ctx, m), tfkit.SetState(ctx, &b, m)
	if !da.HasError() || !db.HasError() || da[0].Summary() != db[0].Summary() {
		t.Errorf("a mistyped value: framework %v, SetState %v", da, db)
	}
}
