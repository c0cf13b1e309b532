package provider

import (
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
func boolReplace(desc string, def bool) schema.BoolAttribute { //nolint:unparam // see above
	a := optionalBool(desc, def)
	a.PlanModifiers = []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
	return a
}
