package tfkit

// Values of nested attributes: object types, lists and objects from a prior state, and
// whether a model or a set of values is known yet.

import (
	"context"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// NestedType is the object type of a list or set of nested objects.
func NestedType(t attr.Type) types.ObjectType {
	var e attr.Type
	switch c := t.(type) {
	case types.ListType:
		e = c.ElemType
	case types.SetType:
		e = c.ElemType
	}
	o, _ := e.(types.ObjectType)
	return o
}

// ModelKnown reports whether no framework value inside the model structs vs (pointers,
// slices and structs of them) is unknown.
func ModelKnown(vs ...any) bool {
	for _, v := range vs {
		if !valueKnown(reflect.ValueOf(v)) {
			return false
		}
	}
	return true
}

func valueKnown(v reflect.Value) bool {
	if v.IsValid() && v.CanInterface() {
		if a, ok := v.Interface().(attr.Value); ok {
			return AllKnown(a)
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || valueKnown(v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			if !valueKnown(v.Index(i)) {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !valueKnown(v.Field(i)) {
				return false
			}
		}
	}
	return true
}

// WithTypes adds the types of attrs to types.
func WithTypes(attrs map[string]schema.Attribute, types map[string]attr.Type) map[string]attr.Type {
	for k, a := range attrs {
		types[k] = a.GetType()
	}
	return types
}

// known reports whether no value (nor anything nested in it) is unknown.
func AllKnown(vs ...attr.Value) bool {
	for _, v := range vs {
		if v == nil {
			continue
		}
		if v.IsUnknown() {
			return false
		}
		switch t := v.(type) {
		case basetypes.ListValue:
			if !AllKnown(t.Elements()...) {
				return false
			}
		case basetypes.SetValue:
			if !AllKnown(t.Elements()...) {
				return false
			}
		case basetypes.ObjectValue:
			for _, a := range t.Attributes() {
				if !AllKnown(a) {
					return false
				}
			}
		}
	}
	return true
}

// ElementsOf reads the elements of a list or set c into target; a null or unknown c
// leaves target as it is.
func ElementsOf(ctx context.Context, c interface {
	attr.Value
	ElementsAs(context.Context, any, bool) diag.Diagnostics
}, target any, d *diag.Diagnostics) {
	if !c.IsNull() && !c.IsUnknown() {
		d.Append(c.ElementsAs(ctx, target, false)...)
	}
}

// PriorObject reads a prior model's object o into target, unknown parts as empty; false
// (target untouched) when o is null or unknown.
func PriorObject(ctx context.Context, o types.Object, target any, d *diag.Diagnostics) bool {
	if o.IsNull() || o.IsUnknown() {
		return false
	}
	d.Append(o.As(ctx, target, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})...)
	return true
}

func NonNilValues(vs []attr.Value) []attr.Value {
	if vs == nil {
		return []attr.Value{}
	}
	return vs
}

// ListOrNull is a list of vs, or null when vs is empty and prior was null (or unknown).
func ListOrNull(t attr.Type, vs []attr.Value, prior types.List) types.List {
	if len(vs) == 0 && (prior.IsNull() || prior.IsUnknown()) {
		return types.ListNull(t)
	}
	return types.ListValueMust(t, NonNilValues(vs))
}

// SameElements reports whether a and b hold the same elements, in any order.
func SameElements[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[T]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
		if count[x] < 0 {
			return false
		}
	}
	return true
}
