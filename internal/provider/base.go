package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// resourceBase is embedded by every resource: the client it talks to, its type name and
// the Metadata and Configure every resource has alike.
type resourceBase struct {
	typeName string // without the provider's prefix: "volume" is libvirt_volume
	client   *libvirt.Client
}

func (b *resourceBase) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.typeName
}

// Configure takes the provider's client: nothing while the provider is not configured yet
// (Terraform calls it before), an error when ProviderData is not a client (clientFrom).
func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.client = clientFrom(req.ProviderData, &resp.Diagnostics, "Resource")
}

// dataSourceBase is resourceBase for data sources.
type dataSourceBase struct {
	typeName string // without the provider's prefix: "host" is libvirt_host
	client   *libvirt.Client
}

func (b *dataSourceBase) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.typeName
}

// Configure is resourceBase.Configure for data sources.
func (b *dataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.client = clientFrom(req.ProviderData, &resp.Diagnostics, "Data Source")
}
