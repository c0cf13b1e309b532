package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Every resource and data source names itself libvirt_<name>, takes the provider's client,
// stays quiet before the provider is configured and names what it got otherwise.
func TestBase_metadataAndConfigure(t *testing.T) {
	ctx := context.Background()
	p := &libvirtProvider{}
	c, err := libvirt.NewClient(libvirt.Config{URI: "test:///default"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, newR := range p.Resources(ctx) {
		r := newR()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		if !strings.HasPrefix(md.TypeName, "libvirt_") || seen[md.TypeName] {
			t.Errorf("type name %q", md.TypeName)
		}
		seen[md.TypeName] = true
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
	if len(seen) != 17 {
		t.Errorf("%d resources and data sources, want 17: %v", len(seen), seen)
	}
}
