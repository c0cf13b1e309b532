package provider

import (
	"context"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A libvirt_domain state written before memory_kib, max_memory_kib and
// cpu.numa_cell[*].memory_kib existed (testdata/domain-state-before-kib.json: the
// attributes of a real terraform apply of that provider, memory_mib = 256,
// max_memory_mib = 512, two cells of 256 MiB) is read by the same schema version, with
// the new attributes null and the MiB ones as they were: no state upgrade is needed.
func TestDomainStateBeforeKiB(t *testing.T) {
	ctx := context.Background()
	raw, err := os.ReadFile("testdata/domain-state-before-kib.json")
	if err != nil {
		t.Fatal(err)
	}
	framework := providerserver.NewProtocol6(New("test")())()
	schemas := &schemaDefaults{newRes: func() []func() resource.Resource { return New("test")().Resources(ctx) }}
	idx := schemas.index(ctx, "libvirt_domain")
	if idx == nil || idx.version != 1 {
		t.Fatalf("libvirt_domain's schema version is not 1 (the state was written by version 1)")
	}
	req := &tfprotov6.UpgradeResourceStateRequest{TypeName: "libvirt_domain", Version: 1, RawState: &tfprotov6.RawState{JSON: raw}}
	for name, upgrade := range map[string]func() (*tfprotov6.UpgradeResourceStateResponse, error){
		"framework": func() (*tfprotov6.UpgradeResourceStateResponse, error) {
			return framework.UpgradeResourceState(ctx, req)
		},
		"shortcut": func() (*tfprotov6.UpgradeResourceStateResponse, error) {
			return shortcutServer{ProviderServer: framework, schemas: schemas}.UpgradeResourceState(ctx, req)
		},
	} {
		resp, err := upgrade()
		if err != nil || len(resp.Diagnostics) > 0 || resp.UpgradedState == nil {
			t.Fatalf("%s: %v %v", name, err, resp.Diagnostics)
		}
		v, err := resp.UpgradedState.Unmarshal(idx.typ)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		at := func(steps ...any) tftypes.Value {
			p := tftypes.NewAttributePath()
			for _, s := range steps {
				switch s := s.(type) {
				case string:
					p = p.WithAttributeName(s)
				case int:
					p = p.WithElementKeyInt(s)
				}
			}
			got, _, err := tftypes.WalkAttributePath(v, p)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, p, err)
			}
			return got.(tftypes.Value)
		}
		for _, p := range [][]any{{"memory_kib"}, {"max_memory_kib"}, {"cpu", "numa_cell", 0, "memory_kib"}, {"cpu", "numa_cell", 1, "memory_kib"}} {
			if got := at(p...); !got.IsNull() {
				t.Errorf("%s: %v is %v, want null", name, p, got)
			}
		}
		for want, p := range map[int64][]any{256: {"memory_mib"}, 512: {"max_memory_mib"}} {
			if got := at(p...); !got.Equal(tftypes.NewValue(tftypes.Number, want)) {
				t.Errorf("%s: %v is %v, want %d", name, p, got, want)
			}
		}
		for i := range 2 {
			if got := at("cpu", "numa_cell", i, "memory_mib"); !got.Equal(tftypes.NewValue(tftypes.Number, 256)) {
				t.Errorf("%s: cell %d memory_mib is %v, want 256", name, i, got)
			}
		}
	}
}
