package provider

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Every resource, data source and function the provider serves, and the optional
// interfaces of the framework each one implements: a method that goes missing, or is
// misspelt, is a compile error here rather than a silently skipped step.
var (
	_ resource.ResourceWithConfigure        = (*domainResource)(nil)
	_ resource.ResourceWithImportState      = (*domainResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*domainResource)(nil)
	_ resource.ResourceWithConfigValidators = (*domainResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*domainResource)(nil)
	_ resource.ResourceWithUpgradeState     = (*domainResource)(nil)

	_ resource.ResourceWithConfigure      = (*volumeResource)(nil)
	_ resource.ResourceWithImportState    = (*volumeResource)(nil)
	_ resource.ResourceWithValidateConfig = (*volumeResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*volumeResource)(nil)

	_ resource.ResourceWithConfigure      = (*cloudinitISOResource)(nil)
	_ resource.ResourceWithImportState    = (*cloudinitISOResource)(nil)
	_ resource.ResourceWithValidateConfig = (*cloudinitISOResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*cloudinitISOResource)(nil)

	_ resource.ResourceWithConfigure   = (*dhcpReservationResource)(nil)
	_ resource.ResourceWithImportState = (*dhcpReservationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*dhcpReservationResource)(nil)

	_ resource.ResourceWithConfigure      = (*networkResource)(nil)
	_ resource.ResourceWithImportState    = (*networkResource)(nil)
	_ resource.ResourceWithValidateConfig = (*networkResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*networkResource)(nil)

	_ resource.ResourceWithConfigure      = (*poolResource)(nil)
	_ resource.ResourceWithImportState    = (*poolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*poolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*poolResource)(nil)

	_ resource.ResourceWithConfigure   = (*clusterMachineResource)(nil)
	_ resource.ResourceWithImportState = (*clusterMachineResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*clusterMachineResource)(nil)

	_ resource.ResourceWithConfigure   = (*snapshotResource)(nil)
	_ resource.ResourceWithImportState = (*snapshotResource)(nil)

	_ resource.ResourceWithConfigure = (*snapshotRevertResource)(nil)

	_ resource.ResourceWithConfigure = (*domainPowerResource)(nil)

	_ resource.ResourceWithConfigure        = (*ignitionResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*ignitionResource)(nil)
	_ resource.ResourceWithImportState      = (*ignitionResource)(nil)
	_ resource.ResourceWithConfigValidators = (*ignitionResource)(nil)

	_ resource.ResourceWithConfigure   = (*cloneResource)(nil)
	_ resource.ResourceWithImportState = (*cloneResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*cloneResource)(nil)

	_ resource.ResourceWithConfigure = (*volumeExportResource)(nil)

	_ resource.ResourceWithModifyPlan     = (*secretResource)(nil)
	_ resource.ResourceWithValidateConfig = (*secretResource)(nil)

	_ datasource.DataSourceWithConfigure = (*hostDataSource)(nil)

	_ datasource.DataSourceWithConfigure = (*clusterDataSource)(nil)

	_ datasource.DataSourceWithConfigure        = (*domainDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*domainDataSource)(nil)

	_ datasource.DataSourceWithConfigure = (*domainsDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*nodeDevicesDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*domainConsoleDataSource)(nil)
)

func (p *libvirtProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		tfkit.NewResource[domainResource]("domain"),
		tfkit.NewResource[volumeResource]("volume"),
		tfkit.NewResource[cloudinitISOResource]("cloudinit_iso"),
		tfkit.NewResource[dhcpReservationResource]("dhcp_reservation"),
		tfkit.NewResource[secretResource]("secret"),
		tfkit.NewResource[networkResource]("network"),
		tfkit.NewResource[poolResource]("pool"),
		tfkit.NewResource[clusterMachineResource]("cluster_machine"),
		tfkit.NewResource[snapshotResource]("snapshot"),
		tfkit.NewResource[snapshotRevertResource]("snapshot_revert"),
		tfkit.NewResource[domainPowerResource]("domain_power"),
		tfkit.NewResource[ignitionResource]("ignition"),
		tfkit.NewResource[cloneResource]("clone"),
		tfkit.NewResource[volumeExportResource]("volume_export"),
	}
}

func (p *libvirtProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		tfkit.NewDataSource[hostDataSource]("host"),
		tfkit.NewDataSource[clusterDataSource]("cluster"),
		tfkit.NewDataSource[domainDataSource]("domain"),
		tfkit.NewDataSource[domainsDataSource]("domains"),
		tfkit.NewDataSource[nodeDevicesDataSource]("node_devices"),
		tfkit.NewDataSource[domainConsoleDataSource]("domain_console"),
	}
}

func (p *libvirtProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		NewClusterMachineNameFunction,
		NewMACFromNameFunction,
	}
}
