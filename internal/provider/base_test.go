package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/clone"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/clustermachine"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/domain"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/host"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/network"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/secret"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/snapshot"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/storage"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// Every resource and data source names itself libvirt_<name>, takes the provider's client,
// stays quiet before the provider is configured and names what it got otherwise; its
// model decodes from a state of its schema and encodes back (its tfsdk tags, and those of
// the parts it embeds, withTimeouts and storedVolume, name each attribute and block once:
// a mismatch would otherwise show only when a daemon is there to read from).
func TestBase_metadataAndConfigure(t *testing.T) {
	ctx := context.Background()
	p := &libvirtProvider{}
	client, err := libvirt.NewClient(libvirt.Config{URI: "test:///default"})
	if err != nil {
		t.Fatal(err)
	}
	c := tfkit.NewHosts()
	c.AddHost(tfkit.DefaultHost, client, nil)
	seen := map[string]bool{}
	models := map[string]any{
		"libvirt_clone": &clone.Model{}, "libvirt_cloudinit_iso": &storage.CloudinitISOModel{}, "libvirt_cluster_machine": &clustermachine.Model{},
		"libvirt_dhcp_reservation": &network.DHCPReservationModel{}, "libvirt_domain": &domain.Model{}, "libvirt_domain_power": &domain.PowerModel{},
		"libvirt_ignition": &storage.IgnitionModel{}, "libvirt_network": &network.Model{}, "libvirt_pool": &storage.PoolModel{},
		"libvirt_snapshot": &snapshot.Model{}, "libvirt_snapshot_revert": &snapshot.RevertModel{}, "libvirt_volume": &storage.VolumeModel{},
		"libvirt_volume_export": &storage.VolumeExportModel{}, "libvirt_secret": &secret.Model{},
		"data.libvirt_host": &host.Model{}, "data.libvirt_cluster": &clustermachine.ClusterModel{}, "data.libvirt_domain": &domain.DataModel{},
		"data.libvirt_domains": &domain.ListModel{}, "data.libvirt_node_devices": &host.NodeDevicesModel{},
		"data.libvirt_domain_console": &domain.ConsoleModel{},
	}
	for _, newR := range p.Resources(ctx) {
		r := newR()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		if !strings.HasPrefix(md.TypeName, "libvirt_") || seen[md.TypeName] {
			t.Errorf("type name %q", md.TypeName)
		}
		seen[md.TypeName] = true
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		roundTrip(ctx, t, md.TypeName, tfsdk.State{Schema: s.Schema, Raw: nullAttributes(s.Schema.Type().TerraformType(ctx))}, models[md.TypeName])
		rc := r.(resource.ResourceWithConfigure)
		var resp resource.ConfigureResponse
		rc.Configure(ctx, resource.ConfigureRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%s: Configure without provider data: %v", md.TypeName, resp.Diagnostics)
		}
		rc.Configure(ctx, resource.ConfigureRequest{ProviderData: c}, &resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%s: Configure: %v", md.TypeName, resp.Diagnostics)
		}
		rc.Configure(ctx, resource.ConfigureRequest{ProviderData: "x"}, &resp)
		if !resp.Diagnostics.HasError() || resp.Diagnostics[0].Summary() != "Unexpected Resource Configure Type" ||
			!strings.Contains(resp.Diagnostics[0].Detail(), "got: string") {
			t.Errorf("%s: Configure with a string: %v", md.TypeName, resp.Diagnostics)
		}
	}
	for _, newD := range p.DataSources(ctx) {
		d := newD()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		if !strings.HasPrefix(md.TypeName, "libvirt_") || seen["data."+md.TypeName] {
			t.Errorf("data source type name %q", md.TypeName)
		}
		seen["data."+md.TypeName] = true
		var s datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &s)
		roundTrip(ctx, t, "data."+md.TypeName, tfsdk.State{Schema: s.Schema, Raw: nullAttributes(s.Schema.Type().TerraformType(ctx))}, models["data."+md.TypeName])
		dc := d.(datasource.DataSourceWithConfigure)
		var resp datasource.ConfigureResponse
		dc.Configure(ctx, datasource.ConfigureRequest{}, &resp)
		dc.Configure(ctx, datasource.ConfigureRequest{ProviderData: c}, &resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("data.%s: Configure: %v", md.TypeName, resp.Diagnostics)
		}
		dc.Configure(ctx, datasource.ConfigureRequest{ProviderData: 1}, &resp)
		if !resp.Diagnostics.HasError() || resp.Diagnostics[0].Summary() != "Unexpected Data Source Configure Type" ||
			!strings.Contains(resp.Diagnostics[0].Detail(), "got: int") {
			t.Errorf("data.%s: Configure with an int: %v", md.TypeName, resp.Diagnostics)
		}
	}
	if len(seen) != len(models) {
		t.Errorf("%d resources and data sources, want one for each of the %d models: %v", len(seen), len(models), seen)
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
