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

func (b *resourceBase) setTypeName(name string)   { b.typeName = name }
func (b *dataSourceBase) setTypeName(name string) { b.typeName = name }

// newResource is the constructor of resource R (which embeds resourceBase), the type
// libvirt_<typeName>: the provider lists one for each of its resources (registry.go).
func newResource[R any, P interface {
	*R
	resource.Resource
	setTypeName(string)
}](typeName string) func() resource.Resource {
	return func() resource.Resource {
		r := P(new(R))
		r.setTypeName(typeName)
		return r
	}
}

// newDataSource is newResource for data sources (which embed dataSourceBase).
func newDataSource[D any, P interface {
	*D
	datasource.DataSource
	setTypeName(string)
}](typeName string) func() datasource.DataSource {
	return func() datasource.DataSource {
		d := P(new(D))
		d.setTypeName(typeName)
		return d
	}
}
