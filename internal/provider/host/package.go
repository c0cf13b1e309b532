// Package host holds the data sources that describe the libvirt host: libvirt_host and
// libvirt_node_devices.
package host

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var (
	_ datasource.DataSourceWithConfigure = (*DataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*NodeDevicesDataSource)(nil)
)

// DataSources are libvirt_host and libvirt_node_devices, for the provider's registry.
func DataSources() []func() datasource.DataSource {
	return []func() datasource.DataSource{
		tfkit.NewDataSource[DataSource]("host"),
		tfkit.NewDataSource[NodeDevicesDataSource]("node_devices"),
	}
}
