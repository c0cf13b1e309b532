package tfkit

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// OnHost is embedded by the model of everything that lives on a host: its `host`.
type OnHost struct {
	Host types.String `tfsdk:"host"`
}

// HostOf is the name of the host the model's object is on (DefaultHost when null).
func (o OnHost) HostOf() string { return HostName(o.Host) }

func (o *OnHost) hostField() *types.String { return &o.Host }

// CarryHost sets the `host` of to (a model read back from libvirt, which cannot know
// which of the provider's hosts it was read from) to from's (the plan's or the prior
// state's, as written). Models without a host are left alone.
func CarryHost(from, to any) {
	f, ok1 := from.(interface{ hostField() *types.String })
	t, ok2 := to.(interface{ hostField() *types.String })
	if ok1 && ok2 && f != nil && t != nil {
		*t.hostField() = *f.hostField()
	}
}

const hostDescription = "Name of the provider's host this object lives on: one of the provider's `hosts`, or `default` " +
	"(the provider's own `uri`), which null means too. "

const hostReplaces = "If the host changes, Terraform will destroy and recreate the resource (null and `default` are the same host)."

var hostValidators = []validator.String{
	stringvalidator.RegexMatches(HostNamePattern, "must be a host name: one of the provider's `hosts`, or `default`"),
}

// HostAttribute is `host` of a resource: changing it replaces the object (moves is the
// sentence that says what a change does when that is not all, e.g. a domain's migration).
// Null and "default" are the same host: writing one for the other changes nothing.
func HostAttribute(moves string) schema.StringAttribute {
	if moves == "" {
		moves = "Changing it replaces the object (made on the new host, then removed from the old)."
	}
	return schema.StringAttribute{
		MarkdownDescription: hostDescription + moves,
		Optional:            true,
		Validators:          hostValidators,
		PlanModifiers: []planmodifier.String{
			stringplanmodifier.RequiresReplaceIf(HostChanged, hostReplaces, hostReplaces),
		},
	}
}

// HostChanged is true when a plan puts an existing object on another host, or on a host
// not known yet.
func HostChanged(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = req.PlanValue.IsUnknown() || HostName(req.StateValue) != HostName(req.PlanValue)
}

// DataSourceHostAttribute is `host` of a data source: the host it reads.
func DataSourceHostAttribute() dsschema.StringAttribute {
	return dsschema.StringAttribute{
		MarkdownDescription: "Name of the provider's host to read: one of the provider's `hosts`, or `default` (the provider's own " +
			"`uri`), which null means too.",
		Optional:   true,
		Validators: hostValidators,
	}
}
