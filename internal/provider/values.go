package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Small conversions between Terraform values and Go values that every resource uses.

// known reports whether a value is set and known (neither null nor unknown).
func known(v interface {
	IsNull() bool
	IsUnknown() bool
}) bool {
	return !v.IsNull() && !v.IsUnknown()
}

// optString is s, or null when it is empty.
func optString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// stringList is a list value of strings (empty, not null, for none).
func stringList(s []string) types.List {
	vals := make([]attr.Value, 0, len(s))
	for _, v := range s {
		vals = append(vals, types.StringValue(v))
	}
	return types.ListValueMust(types.StringType, vals)
}

// knownString is the value of a known, non-null string, else "".
func knownString(v types.String) string {
	if !known(v) {
		return ""
	}
	return v.ValueString()
}

// nullIfUnknown sets every unknown value among vs to null: for a plan stored as state
// when the object could not be read back.
func nullIfUnknown(vs ...*types.String) {
	for _, v := range vs {
		if v.IsUnknown() {
			*v = types.StringNull()
		}
	}
}
