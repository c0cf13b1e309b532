package domain

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// ConsoleDataSource is the data source libvirt_domain_console.
type ConsoleDataSource struct {
	tfkit.DataSourceBase
}

// ConsoleModel is data.libvirt_domain_console.
type ConsoleModel struct {
	tfkit.DataTimeouts
	tfkit.OnHost
	ID       types.String `tfsdk:"id"`
	DomainID types.String `tfsdk:"domain_id"`
	Lines    types.Int64  `tfsdk:"lines"`
	WaitSec  types.Int64  `tfsdk:"wait_sec"`
	Output   types.String `tfsdk:"output"`
}

const (
	defaultConsoleLines   = 50
	defaultConsoleWaitSec = 2
)

func (d *ConsoleDataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = tfkit.DataSchema(ctx, "The recent output of a running domain's console (its first serial console, a pty by default), read "+
		"through libvirt's console stream. libvirt keeps no history of a pty console, so \"recent\" means what the guest writes "+
		"while the data source reads: the stream is read for `wait_sec` seconds and the last `lines` lines of it are returned "+
		"(control characters and carriage returns dropped). A quiet guest gives an empty `output`; for a full boot log use a "+
		"`log_file` on `libvirt_domain`'s `devices.serial`. A stopped domain is an error, as is a console another client (`virsh console`) holds. It never "+
		"writes to the console.", map[string]schema.Attribute{
		"id": tfkit.DataString("The domain id as given."),
		"domain_id": schema.StringAttribute{MarkdownDescription: "UUID or name of a running domain (e.g. `libvirt_domain.x.id`).", Required: true,
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
		"lines": schema.Int64Attribute{MarkdownDescription: "How many of the last lines to return, 1 to 1000. Default `50`.", Optional: true,
			Validators: []validator.Int64{int64validator.Between(1, 1000)}},
		"wait_sec": schema.Int64Attribute{MarkdownDescription: "How long to read the console, in seconds, 1 to 60. Default `2`.", Optional: true,
			Validators: []validator.Int64{int64validator.Between(1, 60)}},
		"output": tfkit.DataString("The lines read, joined by newlines."),
	})
}

func (d *ConsoleDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	tfkit.Lookup(ctx, req, resp, 2*time.Minute, func(m *ConsoleModel) string { return "the console of domain " + m.DomainID.ValueString() },
		func(ctx context.Context, m *ConsoleModel, _ *diag.Diagnostics) (*ConsoleModel, error) {
			lines, wait := int64(defaultConsoleLines), int64(defaultConsoleWaitSec)
			if tfkit.Known(m.Lines) {
				lines = m.Lines.ValueInt64()
			}
			if tfkit.Known(m.WaitSec) {
				wait = m.WaitSec.ValueInt64()
			}
			got, err := d.Client.ConsoleSnapshot(ctx, m.DomainID.ValueString(), int(lines), time.Duration(wait)*time.Second)
			if err != nil {
				return nil, err
			}
			m.ID = m.DomainID
			m.Output = types.StringValue(strings.Join(got, "\n"))
			return m, nil
		})
}
