// Package clustermachine holds libvirt_cluster_machine, the data source libvirt_cluster
// and the provider functions cluster_machine_name and mac_from_name.
package clustermachine

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var (
	_ resource.ResourceWithConfigure   = (*Resource)(nil)
	_ resource.ResourceWithImportState = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan  = (*Resource)(nil)

	_ datasource.DataSourceWithConfigure = (*ClusterDataSource)(nil)
)

// Resources is libvirt_cluster_machine, for the provider's registry.
func Resources() []func() resource.Resource {
	return []func() resource.Resource{tfkit.NewResource[Resource]("cluster_machine")}
}

// DataSources is libvirt_cluster, for the provider's registry.
func DataSources() []func() datasource.DataSource {
	return []func() datasource.DataSource{tfkit.NewDataSource[ClusterDataSource]("cluster")}
}

// Functions are cluster_machine_name and mac_from_name, for the provider's registry.
func Functions() []func() function.Function {
	return []func() function.Function{NewNameFunction, NewMACFromNameFunction}
}
