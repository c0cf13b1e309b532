// Package domain holds libvirt_domain, the action libvirt_domain_power and the data
// sources libvirt_domain, libvirt_domains and libvirt_domain_console.
package domain

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// The optional interfaces of the framework each one implements: a method that goes
// missing, or is misspelt, is a compile error here rather than a silently skipped step.
var (
	_ resource.ResourceWithConfigure        = (*Resource)(nil)
	_ resource.ResourceWithImportState      = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan       = (*Resource)(nil)
	_ resource.ResourceWithConfigValidators = (*Resource)(nil)
	_ resource.ResourceWithValidateConfig   = (*Resource)(nil)
	_ resource.ResourceWithUpgradeState     = (*Resource)(nil)

	_ resource.ResourceWithConfigure = (*PowerResource)(nil)

	_ datasource.DataSourceWithConfigure        = (*DataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*DataSource)(nil)

	_ datasource.DataSourceWithConfigure = (*ListDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*ConsoleDataSource)(nil)
)

// Resources are libvirt_domain and libvirt_domain_power, for the provider's registry.
func Resources() []func() resource.Resource {
	return []func() resource.Resource{
		tfkit.NewResource[Resource]("domain"),
		tfkit.NewResource[PowerResource]("domain_power"),
	}
}

// DataSources are libvirt_domain, libvirt_domains and libvirt_domain_console, for the
// provider's registry.
func DataSources() []func() datasource.DataSource {
	return []func() datasource.DataSource{
		tfkit.NewDataSource[DataSource]("domain"),
		tfkit.NewDataSource[ListDataSource]("domains"),
		tfkit.NewDataSource[ConsoleDataSource]("domain_console"),
	}
}
