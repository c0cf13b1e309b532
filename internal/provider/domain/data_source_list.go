package domain

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// ListDataSource is the data source libvirt_domains.
type ListDataSource struct {
	tfkit.DataSourceBase
}

// ListModel is data.libvirt_domains.
type ListModel struct {
	tfkit.DataTimeouts
	ID         types.String   `tfsdk:"id"`
	NamePrefix types.String   `tfsdk:"name_prefix"`
	States     []string       `tfsdk:"states"`
	Domains    []domainsEntry `tfsdk:"domains"`
	Names      types.List     `tfsdk:"names"`
}

type domainsEntry struct {
	Name       string    `tfsdk:"name"`
	UUID       string    `tfsdk:"uuid"`
	State      string    `tfsdk:"state"`
	Persistent bool      `tfsdk:"persistent"`
	Autostart  bool      `tfsdk:"autostart"`
	Tags       types.Map `tfsdk:"tags"`
}

var domainStates = []string{"running", "blocked", "paused", "shutdown", "shutoff", "crashed", "pmsuspended", "nostate"}

func (d *ListDataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = tfkit.DataSchema(ctx, "Every domain on the host, optionally filtered by name prefix and state, sorted by name. Made for "+
		"adopting a whole host: feed it to `import { for_each = ... }` blocks and let "+
		"`terraform plan -generate-config-out=generated.tf` write the `libvirt_domain` configuration.", map[string]schema.Attribute{
		"id": tfkit.DataString("The connection URI and the filters."),
		"name_prefix": schema.StringAttribute{
			MarkdownDescription: "Only domains whose name starts with this.",
			Optional:            true,
		},
		"states": schema.ListAttribute{
			MarkdownDescription: "Only domains in one of these states: " + strings.Join(domainStates, ", ") + ". Default: all.",
			Optional:            true,
			ElementType:         types.StringType,
			Validators:          []validator.List{listvalidator.ValueStringsAre(stringvalidator.OneOf(domainStates...))},
		},
		"names": schema.ListAttribute{
			MarkdownDescription: "The names of the matching domains (handy for `toset()` in `for_each`).",
			Computed:            true,
			ElementType:         types.StringType,
		},
		"domains": schema.ListNestedAttribute{
			MarkdownDescription: "The matching domains.",
			Computed:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name":       tfkit.DataString("Domain name."),
				"uuid":       tfkit.DataString("Domain UUID (the `libvirt_domain` id and import id)."),
				"state":      tfkit.DataString("State as virsh prints it, e.g. `running`, `shutoff`."),
				"persistent": tfkit.DataBool("False for transient domains (they cannot be imported as `libvirt_domain`)."),
				"autostart":  tfkit.DataBool("Whether libvirt starts it with the host."),
				"tags": schema.MapAttribute{MarkdownDescription: "The `tags` of a `libvirt_domain` (kept in the provider's " +
					"`<metadata>` record of the definition); empty for other domains.", Computed: true, ElementType: types.StringType},
			}},
		},
	})
}

func (d *ListDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	tfkit.Lookup(ctx, req, resp, time.Minute,
		func(*ListModel) string { return "the domains of " + d.Client.URI().String() },
		func(ctx context.Context, m *ListModel, _ *diag.Diagnostics) (*ListModel, error) {
			all, err := d.Client.ListDomains(ctx)
			if err != nil {
				return nil, err
			}
			records, err := d.Client.DomainMetadata(ctx, domainxml.MetadataNS)
			if err != nil {
				return nil, err
			}
			prefix := m.NamePrefix.ValueString()
			want := map[string]bool{}
			for _, s := range m.States {
				want[s] = true
			}
			m.Domains = []domainsEntry{}
			var names []attr.Value
			for _, dom := range all {
				if !strings.HasPrefix(dom.Name, prefix) || (len(want) > 0 && !want[dom.State]) {
					continue
				}
				m.Domains = append(m.Domains, domainsEntry{Name: dom.Name, UUID: dom.UUID, State: dom.State, Persistent: dom.Persistent, Autostart: dom.Autostart,
					Tags: stringMap(domainxml.RecordTags(records[dom.UUID]))})
				names = append(names, types.StringValue(dom.Name))
			}
			m.Names = types.ListValueMust(types.StringType, append([]attr.Value{}, names...))
			m.ID = types.StringValue(d.Client.URI().String() + "?prefix=" + prefix + "&states=" + strings.Join(m.States, ","))
			return m, nil
		})
}
