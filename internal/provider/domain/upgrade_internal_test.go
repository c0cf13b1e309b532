package domain

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// v3Type is libvirt_domain's schema type.
func v3Type(t *testing.T) tftypes.Type {
	t.Helper()
	var sr resource.SchemaResponse
	(&Resource{}).Schema(context.Background(), resource.SchemaRequest{}, &sr)
	if sr.Diagnostics.HasError() {
		t.Fatal(sr.Diagnostics)
	}
	return sr.Schema.Type().TerraformType(context.Background())
}

// The v2 state of a domain using every grouped field (captured from a v2 apply) moves into
// v3's groups and decodes with v3's schema, each value where the contract's table puts it.
func TestUpgradeFromV2_moves(t *testing.T) {
	b, err := os.ReadFile("../testdata/v2-upgrade/every.json") // shared with the acceptance test of internal/provider
	if err != nil {
		t.Fatal(err)
	}
	var v2 map[string]any
	if err := json.Unmarshal(b, &v2); err != nil {
		t.Fatal(err)
	}
	typ := v3Type(t)
	v3, ok := fitToType(movedToGroups(v2), typ).(map[string]any)
	if !ok {
		t.Fatal("the upgraded state is not an object")
	}
	out, err := json.Marshal(v3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tftypes.ValueFromJSONWithOpts(out, typ, tftypes.ValueFromJSONOpts{}); err != nil {
		t.Fatalf("the upgraded state does not decode with the v3 schema: %v", err)
	}
	for v2Name, to := range v2Moves {
		if _, still := v3[v2Name]; still {
			t.Errorf("%s is still at the top level", v2Name)
		}
		g, _ := v3[to[0]].(map[string]any)
		if v2[v2Name] != nil && g[to[1]] == nil {
			t.Errorf("%s -> %s.%s: lost on the way", v2Name, to[0], to[1])
		}
	}
	os := v3[groupOS].(map[string]any)
	if m, ok := os["boot_menu"].(map[string]any); !ok || m["enabled"] != true {
		t.Errorf("boot_menu = true -> os.boot_menu = %v, want {enabled = true}", os["boot_menu"])
	}
	if v3["name"] != "@NAME@" || v3["vcpu"] != float64(2) {
		t.Errorf("top-level values changed: name %v vcpu %v", v3["name"], v3["vcpu"])
	}
}

// Only what an import writes stays in a group; a group left with nothing is null.
func TestUpgradeFromV2_pruneToWritten(t *testing.T) {
	obj := func(attrs map[string]tftypes.Value) tftypes.Value {
		types := map[string]tftypes.Type{}
		for k, v := range attrs {
			types[k] = v.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
	}
	str := func(s any) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	v3 := map[string]any{
		"name":     "d",
		groupOS:    map[string]any{"machine": "pc-i440fx-7.2", "arch": "x86_64", "kernel": map[string]any{"path": "/k"}},
		groupCPU:   map[string]any{"mode": "custom", "model": "qemu64"},
		"features": map[string]any{"acpi": true, "smm": true},
	}
	written := map[string]tftypes.Value{
		groupOS:    obj(map[string]tftypes.Value{"machine": str(nil), "arch": str(nil), "kernel": obj(map[string]tftypes.Value{"path": str("/k")})}),
		groupCPU:   tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"mode": tftypes.String}}, nil),
		"features": obj(map[string]tftypes.Value{"acpi": tftypes.NewValue(tftypes.Bool, nil), "smm": tftypes.NewValue(tftypes.Bool, true)}),
	}
	pruneToWritten(v3, written)
	os := v3[groupOS].(map[string]any)
	if os["machine"] != nil || os["arch"] != nil || os["kernel"] == nil {
		t.Errorf("os = %v, want the kernel only", os)
	}
	if v3[groupCPU] != nil {
		t.Errorf("cpu = %v, want null (an import writes none of it)", v3[groupCPU])
	}
	if f := v3["features"].(map[string]any); f["acpi"] != nil || f["smm"] != true {
		t.Errorf("features = %v, want smm only", f)
	}
}

// Inside a written object and inside list elements, what an import leaves null goes too.
func TestUpgradeFromV2_pruneNested(t *testing.T) {
	obj := func(attrs map[string]tftypes.Value) tftypes.Value {
		types := map[string]tftypes.Type{}
		for k, v := range attrs {
			types[k] = v.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
	}
	str := func(s any) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	rng := obj(map[string]tftypes.Value{"model": str(nil), "backend": str(nil), "rate_bytes": tftypes.NewValue(tftypes.Number, 1024)})
	v3 := map[string]any{groupDevices: map[string]any{
		"rng": []any{map[string]any{"model": "virtio", "backend": "/dev/urandom", "rate_bytes": float64(1024)}},
		"tpm": map[string]any{"model": "tpm-crb", "version": "2.0"},
	}}
	written := map[string]tftypes.Value{groupDevices: obj(map[string]tftypes.Value{
		"rng": tftypes.NewValue(tftypes.List{ElementType: rng.Type()}, []tftypes.Value{rng}),
		"tpm": obj(map[string]tftypes.Value{"model": str(nil), "version": str(nil)}),
	})}
	pruneToWritten(v3, written)
	d := v3[groupDevices].(map[string]any)
	r := d["rng"].([]any)[0].(map[string]any)
	if r["model"] != nil || r["backend"] != nil || r["rate_bytes"] != float64(1024) {
		t.Errorf("rng = %v, want rate_bytes only", r)
	}
	if tpm, ok := d["tpm"].(map[string]any); !ok || tpm["model"] != nil || tpm["version"] != nil {
		t.Errorf("tpm = %v, want an empty object (an import writes tpm = {} for a default TPM)", d["tpm"])
	}
}
