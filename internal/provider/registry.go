package provider

import (
	"context"
	"slices"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/clone"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/clustermachine"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/host"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/secret"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/snapshot"

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

	_ resource.ResourceWithConfigure = (*domainPowerResource)(nil)

	_ resource.ResourceWithConfigure        = (*ignitionResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*ignitionResource)(nil)
	_ resource.ResourceWithImportState      = (*ignitionResource)(nil)
	_ resource.ResourceWithConfigValidators = (*ignitionResource)(nil)

	_ resource.ResourceWithConfigure = (*volumeExportResource)(nil)

	_ datasource.DataSourceWithConfigure        = (*domainDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*domainDataSource)(nil)

	_ datasource.DataSourceWithConfigure = (*domainsDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*domainConsoleDataSource)(nil)
)

func (p *libvirtProvider) Resources(_ context.Context) []func() resource.Resource {
	return slices.Concat(
		[]func() resource.Resource{ // the domain's, in this package until it moves
			tfkit.NewResource[domainResource]("domain"),
			tfkit.NewResource[domainPowerResource]("domain_power"),
		},
		[]func() resource.Resource{
			tfkit.NewResource[volumeResource]("volume"),
			tfkit.NewResource[cloudinitISOResource]("cloudinit_iso"),
			tfkit.NewResource[dhcpReservationResource]("dhcp_reservation"),
			tfkit.NewResource[networkResource]("network"),
			tfkit.NewResource[poolResource]("pool"),
			tfkit.NewResource[ignitionResource]("ignition"),
			tfkit.NewResource[volumeExportResource]("volume_export"),
		},
		clone.Resources(),
		clustermachine.Resources(),
		secret.Resources(),
		snapshot.Resources(),
	)
}

func (p *libvirtProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return slices.Concat(
		[]func() datasource.DataSource{ // the domain's, in this package until it moves
			tfkit.NewDataSource[domainDataSource]("domain"),
			tfkit.NewDataSource[domainsDataSource]("domains"),
			tfkit.NewDataSource[domainConsoleDataSource]("domain_console"),
		},
		clustermachine.DataSources(),
		host.DataSources(),
	)
}

func (p *libvirtProvider) Functions(_ context.Context) []func() function.Function {
	return clustermachine.Functions()
}
