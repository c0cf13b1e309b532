package clustermachine

import (
	"context"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

type ClusterDataSource struct {
	tfkit.DataSourceBase
}

type ClusterModel struct {
	tfkit.DataTimeouts
	tfkit.OnHost
	ID         types.String `tfsdk:"id"`
	Network    types.String `tfsdk:"network"`
	BasePool   types.String `tfsdk:"base_pool"`
	DomainPool types.String `tfsdk:"domain_pool"`
	Ready      types.Bool   `tfsdk:"ready"`
	Reason     types.String `tfsdk:"reason"`
	Message    types.String `tfsdk:"message"`
}

func (d *ClusterDataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	name := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}}
	}
	resp.Schema = tfkit.DataSchema(ctx, "Checks that the infrastructure a cluster's `libvirt_cluster_machine`s need is there: the network and "+
		"both storage pools exist and are active. It never fails on a missing or inactive object — it reports it, the way a "+
		"Cluster API infrastructure provider sets a condition — so configurations can gate on `ready` (e.g. in a `check` "+
		"block or a `precondition`). A connection failure is an error.", map[string]schema.Attribute{
		"id":          tfkit.DataString("`<network>/<base_pool>/<domain_pool>`."),
		"network":     name("Network the machines attach to."),
		"base_pool":   name("Storage pool holding the base images."),
		"domain_pool": name("Storage pool for the machines' disks and seed ISOs (may equal `base_pool`)."),
		"ready":       tfkit.DataBool("True when the network and both pools exist and are active."),
		"reason":      tfkit.DataString("Empty when ready; else `InfrastructureMissing` (something does not exist — wins when both apply) or `InfrastructureInactive` (something is defined but not running)."),
		"message":     tfkit.DataString("Names every missing or inactive object and how to start it."),
	})
}

func (d *ClusterDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	tfkit.Lookup(ctx, req, resp, time.Minute, func(*ClusterModel) string { return "cluster infrastructure on " + d.Client.URI().String() },
		func(ctx context.Context, m *ClusterModel, _ *diag.Diagnostics) (*ClusterModel, error) {
			r, err := workflow.CheckInfrastructure(ctx, d.Client, m.Network.ValueString(), m.BasePool.ValueString(), m.DomainPool.ValueString())
			if err != nil {
				return nil, err
			}
			m.ID = types.StringValue(m.Network.ValueString() + "/" + m.BasePool.ValueString() + "/" + m.DomainPool.ValueString())
			m.Ready, m.Reason, m.Message = types.BoolValue(r.Ready), types.StringValue(r.Reason), types.StringValue(r.Message)
			return m, nil
		})
}
