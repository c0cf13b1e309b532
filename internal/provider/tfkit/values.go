package tfkit

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Small conversions between Terraform values and Go values that every resource uses.

// Known reports whether a value is set and known (neither null nor unknown).
func Known(v interface {
	IsNull() bool
	IsUnknown() bool
}) bool {
	return !v.IsNull() && !v.IsUnknown()
}

// StringOrNull is s, or null when it is empty.
func StringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// StringList is a list value of strings (empty, not null, for none).
func StringList(s []string) types.List {
	vals := make([]attr.Value, 0, len(s))
	for _, v := range s {
		vals = append(vals, types.StringValue(v))
	}
	return types.ListValueMust(types.StringType, vals)
}

// StringOf is the value of a known, non-null string, else "".
func StringOf(v types.String) string {
	if !Known(v) {
		return ""
	}
	return v.ValueString()
}

// NullIfUnknown sets every unknown value among vs to null: for a plan stored as state
// when the object could not be read back.
func NullIfUnknown(vs ...*types.String) {
	for _, v := range vs {
		if v.IsUnknown() {
			*v = types.StringNull()
		}
	}
}

// NameOr is the value of n, or id when n is null, unknown or empty: what names an object
// in a message before its name is known.
func NameOr(n types.String, id string) string {
	if !Known(n) || n.ValueString() == "" {
		return id
	}
	return n.ValueString()
}

// UintOf is the value of v as a uint: 0 when v is null, unknown or negative.
func UintOf(v types.Int64) uint {
	if !Known(v) || v.ValueInt64() < 0 {
		return 0
	}
	return uint(v.ValueInt64())
}

// Integer is what the Int64 conversions take from libvirt's and the XML packages' types.
type Integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// Int64OrNull is v, or null when v is 0.
func Int64OrNull[T Integer](v T) types.Int64 {
	if v == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(v))
}

// Int64FromPtr is *p, or null when p is nil.
func Int64FromPtr[T Integer](p *T) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}
