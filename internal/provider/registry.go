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

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/domain"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Every resource, data source and function the provider serves, by package: each
// package lists its own and asserts the optional interfaces of the framework they
// implement (its package.go).
func (p *libvirtProvider) Resources(_ context.Context) []func() resource.Resource {
	return slices.Concat(
		domain.Resources(),
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
		domain.DataSources(),
		clustermachine.DataSources(),
		host.DataSources(),
	)
}

func (p *libvirtProvider) Functions(_ context.Context) []func() function.Function {
	return clustermachine.Functions()
}
