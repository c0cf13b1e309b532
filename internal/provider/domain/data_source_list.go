package domain

import (
	"context"
	"fmt"
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
	tfkit.OnHost
	ID         types.String   `tfsdk:"id"`
	AllHosts   types.Bool     `tfsdk:"all_hosts"`
	NamePrefix types.String   `tfsdk:"name_prefix"`
	States     []string       `tfsdk:"states"`
	Domains    []domainsEntry `tfsdk:"domains"`
	Names      types.List     `tfsdk:"names"`
}

type domainsEntry struct {
	Host       string    `tfsdk:"host"`
	ImportID   string    `tfsdk:"import_id"`
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
		"id": tfkit.DataString("The hosts listed and the filters."),
		"all_hosts": schema.BoolAttribute{
			MarkdownDescription: "List the domains of every host of the provider (its own, `default`, and each of its `hosts`) " +
				"instead of the one `host` names. Default `false`.",
			Optional: true,
		},
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
				"host":       tfkit.DataString("Name of the provider's host the domain is on (`default`: the provider's own `uri`)."),
				"import_id":  tfkit.DataString("The `libvirt_domain` import id: `<host>/<uuid>`, or the uuid on the host `default`."),
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
		func(m *ListModel) string { return "the domains of " + strings.Join(d.listed(m), ", ") },
		func(ctx context.Context, m *ListModel, _ *diag.Diagnostics) (*ListModel, error) {
			prefix := m.NamePrefix.ValueString()
			want := map[string]bool{}
			for _, s := range m.States {
				want[s] = true
			}
			m.Domains = []domainsEntry{}
			var names []attr.Value
			for _, host := range d.listed(m) {
				entries, err := d.listHost(ctx, host, prefix, want)
				if err != nil {
					return nil, fmt.Errorf("host %q: %w", host, err)
				}
				for _, e := range entries {
					m.Domains = append(m.Domains, e)
					names = append(names, types.StringValue(e.Name))
				}
			}
			m.Names = types.ListValueMust(types.StringType, append([]attr.Value{}, names...))
			m.ID = types.StringValue(strings.Join(d.listed(m), ",") + "?prefix=" + prefix + "&states=" + strings.Join(m.States, ","))
			return m, nil
		})
}

// listed are the hosts m lists, in name order.
func (d *ListDataSource) listed(m *ListModel) []string {
	if m.AllHosts.ValueBool() && d.Hosts != nil {
		return d.Hosts.Names()
	}
	return []string{m.HostOf()}
}

// listHost is one host's matching domains, sorted by name (as libvirt lists them).
func (d *ListDataSource) listHost(ctx context.Context, host, prefix string, want map[string]bool) ([]domainsEntry, error) {
	c := d.Client
	if d.Hosts != nil {
		var err error
		if c, err = d.Hosts.Client(host); err != nil {
			return nil, err
		}
	}
	all, err := c.ListDomains(ctx)
	if err != nil {
		return nil, err
	}
	records, err := c.DomainMetadata(ctx, domainxml.MetadataNS)
	if err != nil {
		return nil, err
	}
	var out []domainsEntry
	for _, dom := range all {
		if !strings.HasPrefix(dom.Name, prefix) || (len(want) > 0 && !want[dom.State]) {
			continue
		}
		importID := dom.UUID
		if host != tfkit.DefaultHost {
			importID = host + "/" + dom.UUID
		}
		out = append(out, domainsEntry{Host: host, ImportID: importID, Name: dom.Name, UUID: dom.UUID, State: dom.State,
			Persistent: dom.Persistent, Autostart: dom.Autostart, Tags: stringMap(domainxml.RecordTags(records[dom.UUID]))})
	}
	return out, nil
}
