package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
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
		elementsOf(ctx, l, &got, &d)
		if len(got) != 1 || got[0] != "kept" {
			t.Errorf("%v: target changed to %v", l, got)
		}
	}
	var got []string
	elementsOf(ctx, types.ListValueMust(types.StringType, []attr.Value{types.StringValue("a"), types.StringValue("b")}), &got, &d)
	if len(got) != 2 || got[1] != "b" || d.HasError() {
		t.Errorf("elements %v, diagnostics %v", got, d)
	}

	var m networkDNSModel
	if priorObject(ctx, types.ObjectNull(networkDNSAttrTypes), &m, &d) || priorObject(ctx, types.ObjectUnknown(networkDNSAttrTypes), &m, &d) {
		t.Error("a null or unknown object read as a prior one")
	}
	o := types.ObjectValueMust(networkDNSAttrTypes, map[string]attr.Value{
		"enabled": types.BoolValue(true), "hosts": types.SetUnknown(networkDNSHostType), "forwarders": types.ListNull(networkForwarderType),
		"srv": types.SetNull(networkDNSAttrTypes["srv"].(types.SetType).ElemType), "txt": types.SetNull(networkDNSAttrTypes["txt"].(types.SetType).ElemType)})
	if !priorObject(ctx, o, &m, &d) || d.HasError() || !m.Enabled.ValueBool() || !m.Hosts.IsUnknown() {
		t.Errorf("prior %+v, diagnostics %v", m, d)
	}
}

// The blobs' content: what blobResource.Create stores.
func TestBlobContent(t *testing.T) {
	plan := &ignitionModel{Content: types.StringValue(`{"a":1}`)}
	if b, _ := plan.content(&ignitionModel{}); string(b) != `{"a":1}` {
		t.Errorf("content: %q", b)
	}
	plan = &ignitionModel{Content: types.StringNull()}
	if b, _ := plan.content(&ignitionModel{ContentWO: types.StringValue(`{"wo":1}`)}); string(b) != `{"wo":1}` {
		t.Errorf("content_wo: %q", b)
	}

	seed := &cloudinitISOModel{UserData: types.StringValue("#cloud-config\n"), MetaData: types.StringUnknown(),
		InstanceID: types.StringValue("web-1"), Hostname: types.StringValue("web")}
	config := &cloudinitISOModel{UserDataWO: types.StringNull(), MetaData: types.StringNull(),
		InstanceID: types.StringValue("web-1"), Hostname: types.StringValue("web")}
	img, err := seed.content(config)
	if err != nil {
		t.Fatal(err)
	}
	_, files, err := cloudinit.ReadISO(img)
	if err != nil || string(files[cloudinit.UserDataFile]) != "#cloud-config\n" {
		t.Fatalf("image files %v, %v", files, err)
	}
	if seed.MetaData.ValueString() != string(files[cloudinit.MetaDataFile]) || seed.InstanceID.ValueString() != "web-1" {
		t.Errorf("plan not completed from the meta-data written: %+v", seed)
	}
}
