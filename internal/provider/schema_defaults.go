package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Optional attributes with a default, as schemas repeat them (optionalBool is in
// schema_attrs.go).

// defaultString is an optional string that is def when not set (an update changes it in
// place).
func defaultString(desc, def string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Default: stringdefault.StaticString(def), Validators: validators}
}

// defaultReplace is defaultString for a string whose change replaces the object.
func defaultReplace(desc, def string, validators ...validator.String) schema.StringAttribute {
	a := defaultString(desc, def, validators...)
	a.PlanModifiers = replaceString
	return a
}

// boolReplace is optionalBool for a bool whose change replaces the object. Every default
// is false today; the call sites still say so.
func boolReplace(desc string, def bool) schema.BoolAttribute {
	a := optionalBool(desc, def)
	a.PlanModifiers = []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
	return a
}

// addedBoolReplace is boolReplace (default false) for an attribute added to a resource
// that states already hold: there the attribute is null, and its default false — what
// the object always was — is stored in place instead of replacing the object (a snapshot
// or an export taken again only because the provider was upgraded).
func addedBoolReplace(desc string) schema.BoolAttribute {
	a := optionalBool(desc, false)
	a.PlanModifiers = []planmodifier.Bool{boolplanmodifier.RequiresReplaceIf(
		func(_ context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
			resp.RequiresReplace = !(req.StateValue.IsNull() && !req.PlanValue.ValueBool())
		},
		"If the value of this attribute changes, Terraform will destroy and recreate the resource.",
		"If the value of this attribute changes, Terraform will destroy and recreate the resource.")}
	return a
}
