package domain

import (
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainDescribeModel: title, description and tags (domainxml's describe family) and the
// lifecycle actions (its lifecycle family). Unset, each keeps what the domain has.
type domainDescribeModel struct {
	Title       types.String `tfsdk:"title"`
	Description types.String `tfsdk:"description"`
	Tags        types.Map    `tfsdk:"tags"`
}

var domainDescribe = family{
	attributes: map[string]schema.Attribute{
		"title": keptValue("A short title for the domain (libvirt's `<title>`, shown by `virsh list --title`); one line. "+
			"Default: what the domain has (none for a domain made here); `\"\"` removes it. A change is made on the running "+
			"domain and its definition at once: never a restart.",
			stringvalidator.RegexMatches(oneLine, "must be a single line (libvirt refuses a title with a newline)")),
		"description": keptValue("A free-form description (libvirt's `<description>`). Default: what the domain has; `\"\"` " +
			"removes it. A change is made on the running domain and its definition at once: never a restart."),
		"tags": schema.MapAttribute{
			MarkdownDescription: "Labels of your own, kept in the provider's `<metadata>` record of the domain and listed by " +
				"the `libvirt_domains` data source. Default: what the domain has; `{}` removes them. A change rewrites the " +
				"definition only: never a restart. Other applications' metadata (virt-install's libosinfo entry, another " +
				"tool's record) is kept beside it on every update; an import writes it into `extra_xml` as one `<metadata>` " +
				"fragment, so that a domain made from the imported configuration has it too.",
			ElementType: types.StringType, Optional: true, Computed: true,
			Validators:    []validator.Map{mapvalidator.KeysAre(stringvalidator.LengthBetween(1, 128))},
			PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.Describe = domainxml.Describe{Title: knownPtr(m.Title), Description: knownPtr(m.Description)}
		if tfkit.Known(m.Tags) {
			s.Describe.Tags = map[string]string{}
			for k, v := range m.Tags.Elements() {
				if sv, ok := v.(types.String); ok {
					s.Describe.Tags[k] = sv.ValueString()
				}
			}
		}
	},
	fromSpec: func(s domainxml.Spec, _, m *Model) {
		d := s.Describe
		m.Title, m.Description = types.StringValue(deref(d.Title)), types.StringValue(deref(d.Description))
		m.Tags = stringMap(d.Tags)
	},
	fillUnknowns: func(m *Model) {
		for _, v := range []*types.String{&m.Title, &m.Description} {
			if v.IsUnknown() {
				*v = types.StringValue("")
			}
		}
		if m.Tags.IsUnknown() {
			m.Tags = stringMap(nil)
		}
	},
}

// oneLine: a title is one line.
var oneLine = regexp.MustCompile(`^[^\n\r]*$`)

func joinBackticked(s []string) string { return strings.Join(s, "`, `") }

// keptValue is an optional string that keeps the domain's value when not set (an
// update changes it in place).
func keptValue(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Validators: validators,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
}

// knownPtr is a pointer to v's value when known, else nil (keep what the domain has).
func knownPtr(v types.String) *string {
	if !tfkit.Known(v) {
		return nil
	}
	s := v.ValueString()
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// stringMap is a map value of strings (empty, not null, for none).
func stringMap(m map[string]string) types.Map {
	vals := make(map[string]attr.Value, len(m))
	for k, v := range m {
		vals[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, vals)
}
