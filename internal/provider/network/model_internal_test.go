package network

import (
	"context"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestHostSet(t *testing.T) {
	host := types.ObjectValueMust(networkDNSHostType.AttrTypes, map[string]attr.Value{
		"ip": types.StringValue("10.0.0.2"), "hostnames": types.ListValueMust(types.StringType, []attr.Value{types.StringValue("a")})})
	managed := types.SetValueMust(networkDNSHostType, []attr.Value{})
	unmanaged := types.SetNull(networkDNSHostType)
	for _, c := range []struct {
		name       string
		hosts      []attr.Value
		hadPrior   bool
		priorHosts types.Set
		want       types.Set
	}{
		{"managed, entries", []attr.Value{host}, true, managed, types.SetValueMust(networkDNSHostType, []attr.Value{host})},
		{"managed, none: known empty", nil, true, managed, managed},
		{"not managed: null whatever is there", []attr.Value{host}, true, unmanaged, unmanaged},
		{"import, entries", []attr.Value{host}, false, unmanaged, types.SetValueMust(networkDNSHostType, []attr.Value{host})},
		{"import, none", nil, false, unmanaged, unmanaged},
	} {
		if got := hostSet(networkDNSHostType, c.hosts, c.hadPrior, c.priorHosts); !got.Equal(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestElementsOfAndPriorObject(t *testing.T) {
	ctx := context.Background()
	var d diag.Diagnostics
	for _, l := range []types.List{types.ListNull(types.StringType), types.ListUnknown(types.StringType)} {
		got := []string{"kept"}
		tfkit.ElementsOf(ctx, l, &got, &d)
		if len(got) != 1 || got[0] != "kept" {
			t.Errorf("%v: target changed to %v", l, got)
		}
	}
	var got []string
	tfkit.ElementsOf(ctx, types.ListValueMust(types.StringType, []attr.Value{types.StringValue("a"), types.StringValue("b")}), &got, &d)
	if len(got) != 2 || got[1] != "b" || d.HasError() {
		t.Errorf("elements %v, diagnostics %v", got, d)
	}

	var m networkDNSModel
	if tfkit.PriorObject(ctx, types.ObjectNull(networkDNSAttrTypes), &m, &d) || tfkit.PriorObject(ctx, types.ObjectUnknown(networkDNSAttrTypes), &m, &d) {
		t.Error("a null or unknown object read as a prior one")
	}
	o := types.ObjectValueMust(networkDNSAttrTypes, map[string]attr.Value{
		"enabled": types.BoolValue(true), "hosts": types.SetUnknown(networkDNSHostType), "forwarders": types.ListNull(networkForwarderType),
		"srv": types.SetNull(networkDNSAttrTypes["srv"].(types.SetType).ElemType), "txt": types.SetNull(networkDNSAttrTypes["txt"].(types.SetType).ElemType)})
	if !tfkit.PriorObject(ctx, o, &m, &d) || d.HasError() || !m.Enabled.ValueBool() || !m.Hosts.IsUnknown() {
		t.Errorf("prior %+v, diagnostics %v", m, d)
	}
}
