package provider

import (
	"context"
	"slices"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/network"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/storage"

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

	_ resource.ResourceWithConfigure = (*domainPowerResource)(nil)

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
		clone.Resources(),
		clustermachine.Resources(),
		network.Resources(),
		secret.Resources(),
		snapshot.Resources(),
		storage.Resources(),
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
