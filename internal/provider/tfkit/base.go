// Package tfkit holds what the resources and data sources of the provider share: the
// CRUD skeletons (crud.go, refresh.go, action.go, datasource.go), their base (base.go),
// plan and import deadlines, diagnostics, schema attribute constructors and value
// conversions. Object packages import it; it imports none of them (ADR 4).
package tfkit

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// ResourceBase is embedded by every resource: the client it talks to, its type name and
// the Metadata and Configure every resource has alike.
//
// The framework makes a resource anew for every request and configures it before the
// request's method runs, so Client is the client of the host that request is for (the
// object's `host`, hosts.go): Create, Read, Update, Delete and ModifyPlan talk to their
// object's host without asking. Hosts is every host, for what spans them (a domain
// moving from one host to another, a list across hosts).
type ResourceBase struct {
	typeName string // without the provider's prefix: "volume" is libvirt_volume
	Client   *libvirt.Client
	Hosts    *Hosts
}

func (b *ResourceBase) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.typeName
}

// Configure takes the client of the request's host: nothing while the provider is not
// configured yet (Terraform calls it before), an error when ProviderData is not the
// provider's hosts or the host is not one of them (clientFor).
func (b *ResourceBase) Configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.Hosts, b.Client = clientFor(ctx, req.ProviderData, &resp.Diagnostics, "Resource")
}

// DataSourceBase is ResourceBase for data sources.
type DataSourceBase struct {
	typeName string // without the provider's prefix: "host" is libvirt_host
	Client   *libvirt.Client
	Hosts    *Hosts
}

func (b *DataSourceBase) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.typeName
}

// Configure is ResourceBase.Configure for data sources.
func (b *DataSourceBase) Configure(ctx context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.Hosts, b.Client = clientFor(ctx, req.ProviderData, &resp.Diagnostics, "Data Source")
}

func (b *ResourceBase) setTypeName(name string)   { b.typeName = name }
func (b *DataSourceBase) setTypeName(name string) { b.typeName = name }

// typeNamed is what NewResource and NewDataSource call on what they make.
type typeNamed interface{ setTypeName(string) }

var (
	_ typeNamed = (*ResourceBase)(nil)
	_ typeNamed = (*DataSourceBase)(nil)
)

// NewResource is the constructor of resource R (which embeds ResourceBase), the type
// libvirt_<typeName>: the provider lists one for each of its resources (registry.go).
func NewResource[R any, P interface {
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

// NewDataSource is NewResource for data sources (which embed DataSourceBase).
func NewDataSource[D any, P interface {
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
