package main

import (
	"context"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A resource type shaped like the provider's: a computed id, a required and an optional
// attribute, a write-only one, and a list block with a computed attribute.
var testSchema = &tfprotov6.Schema{Block: &tfprotov6.SchemaBlock{
	Attributes: []*tfprotov6.SchemaAttribute{
		{Name: "id", Type: tftypes.String, Computed: true},
		{Name: "name", Type: tftypes.String, Required: true},
		{Name: "ref", Type: tftypes.String, Optional: true},
		{Name: "secret_wo", Type: tftypes.String, Optional: true, WriteOnly: true},
	},
	BlockTypes: []*tfprotov6.SchemaNestedBlock{{
		TypeName: "nic",
		Nesting:  tfprotov6.SchemaNestedBlockNestingModeList,
		Block: &tfprotov6.SchemaBlock{Attributes: []*tfprotov6.SchemaAttribute{
			{Name: "net", Type: tftypes.String, Optional: true},
			{Name: "mac", Type: tftypes.String, Optional: true, Computed: true},
		}},
	}},
}}

var (
	testType = testSchema.ValueType().(tftypes.Object)
	nicType  = testType.AttributeTypes["nic"].(tftypes.List).ElementType
	unknown  = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	null     = tftypes.NewValue(tftypes.String, nil)
)

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func obj(id, name, ref, secret, nicNet, nicMAC tftypes.Value) tftypes.Value {
	nic := tftypes.NewValue(nicType, map[string]tftypes.Value{"net": nicNet, "mac": nicMAC})
	return tftypes.NewValue(testType, map[string]tftypes.Value{
		"id": id, "name": name, "ref": ref, "secret_wo": secret,
		"nic": tftypes.NewValue(testType.AttributeTypes["nic"], []tftypes.Value{nic}),
	})
}

func dv(t *testing.T, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	d, err := tfprotov6.NewDynamicValue(testType, v)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

func value(t *testing.T, d *tfprotov6.DynamicValue) tftypes.Value {
	t.Helper()
	if d == nil {
		t.Fatal("no value")
	}
	v, err := d.Unmarshal(testType)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testServer() *server {
	s := &server{}
	s.once.Do(func() {
		s.schema = &tfprotov6.GetProviderSchemaResponse{ResourceSchemas: map[string]*tfprotov6.Schema{"t": testSchema}}
		s.types = map[string]*typeInfo{"t": newTypeInfo(testSchema)}
	})
	return s
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	s := testServer()
	// ref refers to another resource's id, unknown until that one is applied.
	config := obj(null, str("a"), unknown, str("hush"), str("default"), null)
	proposed := config
	plan, err := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: "t", PriorState: dv(t, tftypes.NewValue(testType, nil)), ProposedNewState: dv(t, proposed), Config: dv(t, config),
	})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatal(err, plan.Diagnostics)
	}
	want := obj(unknown, str("a"), unknown, null, str("default"), null)
	if got := value(t, plan.PlannedState); !got.Equal(want) {
		t.Fatalf("planned %v, want %v", got, want)
	}

	config = obj(null, str("a"), str("other-id"), str("hush"), str("default"), null)
	applied, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: "t", PriorState: dv(t, tftypes.NewValue(testType, nil)), PlannedState: plan.PlannedState, Config: dv(t, config),
	})
	if err != nil || len(applied.Diagnostics) > 0 {
		t.Fatal(err, applied.Diagnostics)
	}
	got := value(t, applied.NewState)
	var m map[string]tftypes.Value
	if err := got.As(&m); err != nil {
		t.Fatal(err)
	}
	var id string
	if err := m["id"].As(&id); err != nil || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("id %q (%v), want a UUID", id, err)
	}
	if want := obj(str(id), str("a"), str("other-id"), null, str("default"), null); !got.Equal(want) {
		t.Fatalf("new state %v, want %v", got, want)
	}
}

func TestNoChangePlanIsThePriorState(t *testing.T) {
	s := testServer()
	prior := dv(t, obj(str("x"), str("a"), null, null, str("default"), null))
	plan, err := s.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: "t", PriorState: prior, ProposedNewState: prior, PriorPrivate: []byte("p"),
	})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatal(err, plan.Diagnostics)
	}
	if plan.PlannedState != prior || string(plan.PlannedPrivate) != "p" {
		t.Fatalf("planned %v %q, want the prior state and private data", plan.PlannedState, plan.PlannedPrivate)
	}
}

func TestUpdateAndDestroy(t *testing.T) {
	ctx := context.Background()
	s := testServer()
	prior := dv(t, obj(str("x"), str("a"), null, null, str("default"), null))
	proposed := dv(t, obj(str("x"), str("b"), null, str("hush"), str("default"), null))
	plan, err := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "t", PriorState: prior, ProposedNewState: proposed})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatal(err, plan.Diagnostics)
	}
	if got, want := value(t, plan.PlannedState), obj(str("x"), str("b"), null, null, str("default"), null); !got.Equal(want) {
		t.Fatalf("planned %v, want %v (id kept, write-only null)", got, want)
	}
	gone := dv(t, tftypes.NewValue(testType, nil))
	plan, err = s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "t", PriorState: prior, ProposedNewState: gone})
	if err != nil || len(plan.Diagnostics) > 0 || !value(t, plan.PlannedState).IsNull() {
		t.Fatal("destroy plan:", err, plan.Diagnostics)
	}
	applied, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: "t", PriorState: prior, PlannedState: gone, Config: gone})
	if err != nil || len(applied.Diagnostics) > 0 || !value(t, applied.NewState).IsNull() {
		t.Fatal("destroy:", err, applied.Diagnostics)
	}
}

func TestUpgradeResourceState(t *testing.T) {
	s := testServer()
	raw := `{"id":"x","name":"a","ref":null,"gone":1,"nic":[{"net":"default","mac":"52:54:00:00:00:01"}]}`
	resp, err := s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "t", RawState: &tfprotov6.RawState{JSON: []byte(raw)},
	})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatal(err, resp.Diagnostics)
	}
	if got, want := value(t, resp.UpgradedState), obj(str("x"), str("a"), null, null, str("default"), str("52:54:00:00:00:01")); !got.Equal(want) {
		t.Fatalf("upgraded %v, want %v", got, want)
	}
}

// The floor serves exactly the provider's schema.
func TestSchemaIsTheProvidersOwn(t *testing.T) {
	ctx := context.Background()
	s := newServer()
	got, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.real.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ResourceSchemas) == 0 || len(got.ResourceSchemas) != len(want.ResourceSchemas) {
		t.Fatalf("%d resource types, want %d", len(got.ResourceSchemas), len(want.ResourceSchemas))
	}
	for name, sc := range want.ResourceSchemas {
		if !got.ResourceSchemas[name].ValueType().Equal(sc.ValueType()) {
			t.Errorf("%s: the floor's type differs from the provider's", name)
		}
	}
	if s.types["libvirt_domain"] == nil || !s.types["libvirt_domain"].computedID {
		t.Error("libvirt_domain: no computed id found")
	}
}
