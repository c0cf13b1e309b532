package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Every model decodes from a state of its schema and encodes back: its tfsdk tags, and
// those of the parts it embeds (withTimeouts, storedVolume), name each attribute and
// block once. A mismatch would otherwise show only when a daemon is there to read from.
func TestModels_matchSchemas(t *testing.T) {
	ctx := t.Context()
	resources := map[string]any{
		"libvirt_clone": &cloneModel{}, "libvirt_cloudinit_iso": &cloudinitISOModel{}, "libvirt_cluster_machine": &clusterMachineModel{},
		"libvirt_dhcp_reservation": &dhcpReservationModel{}, "libvirt_domain": &domainModel{}, "libvirt_domain_power": &domainPowerModel{},
		"libvirt_ignition": &ignitionModel{}, "libvirt_network": &networkModel{}, "libvirt_pool": &poolModel{},
		"libvirt_snapshot": &snapshotModel{}, "libvirt_snapshot_revert": &snapshotRevertModel{}, "libvirt_volume": &volumeModel{},
		"libvirt_volume_export": &volumeExportModel{},
	}
	for _, f := range (&libvirtProvider{}).Resources(ctx) {
		var name resource.MetadataResponse
		var s resource.SchemaResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "libvirt"}, &name)
		f().Schema(ctx, resource.SchemaRequest{}, &s)
		roundTrip(ctx, t, name.TypeName, tfsdk.State{Schema: s.Schema, Raw: nullAttributes(s.Schema.Type().TerraformType(ctx))}, resources[name.TypeName])
	}
	dataSources := map[string]any{
		"libvirt_host": &hostModel{}, "libvirt_cluster": &clusterModel{}, "libvirt_domain": &domainDataModel{}, "libvirt_domains": &domainsModel{},
	}
	for _, f := range (&libvirtProvider{}).DataSources(ctx) {
		var name datasource.MetadataResponse
		var s datasource.SchemaResponse
		f().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "libvirt"}, &name)
		f().Schema(ctx, datasource.SchemaRequest{}, &s)
		roundTrip(ctx, t, "data "+name.TypeName, tfsdk.State{Schema: s.Schema, Raw: nullAttributes(s.Schema.Type().TerraformType(ctx))}, dataSources[name.TypeName])
	}
}

// nullAttributes is an object of type typ whose every attribute is null.
func nullAttributes(typ tftypes.Type) tftypes.Value {
	o, _ := typ.(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for k, at := range o.AttributeTypes {
		vals[k] = tftypes.NewValue(at, nil)
	}
	return tftypes.NewValue(o, vals)
}

func roundTrip(ctx context.Context, t *testing.T, what string, st tfsdk.State, model any) {
	t.Helper()
	if model == nil {
		t.Errorf("%s: no model listed for it", what)
		return
	}
	if d := st.Get(ctx, model); d.HasError() {
		t.Errorf("%s: decoding %T: %v", what, model, d)
		return
	}
	if d := st.Set(ctx, model); d.HasError() {
		t.Errorf("%s: encoding %T: %v", what, model, d)
	}
}
