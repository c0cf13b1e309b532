package tfkit

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Decode reads a configuration, plan or state value into a model, as the framework's
// Get does (tfsdk.Config.Get, tfsdk.Plan.Get, tfsdk.State.Get), for the shapes models
// here use: attr.Value fields (types.String, types.List, timeouts.Value, ...), structs
// by their tfsdk tags (embedded structs promoted), pointers to structs (nil when null),
// and slices and string-keyed maps of those (nil when null).
//
// Why: the framework's reflection looks up every struct's tags anew on every Get and
// compiles a regular expression per field name on the way; for libvirt_domain's model,
// that was most of ValidateResourceConfig's own cost and a third of what a no-change
// plan of a domain using every family costs the provider (ADR 8). Here the tags are
// read once per type.
//
// What it does not handle (another Go type, an unknown or null value where the model
// cannot hold one, a missing tag) is left to the framework: get is then called, so
// errors and their diagnostics are exactly the framework's.
func Decode(ctx context.Context, raw tftypes.Value, typ attr.Type, target any, get func(any) diag.Diagnostics) diag.Diagnostics {
	v := reflect.ValueOf(target)
	if v.Kind() != reflect.Pointer || v.IsNil() || typ == nil {
		return get(target)
	}
	// Decode into a fresh value, so that a failure half way leaves target untouched for
	// the framework's own attempt.
	fresh := reflect.New(v.Elem().Type())
	if err := decodeInto(ctx, raw, typ, fresh.Elem()); err != nil {
		return get(target)
	}
	v.Elem().Set(fresh.Elem())
	return nil
}

var attrValueType = reflect.TypeFor[attr.Value]()

func decodeInto(ctx context.Context, raw tftypes.Value, typ attr.Type, dst reflect.Value) error {
	if dst.Type().Implements(attrValueType) {
		val, err := typ.ValueFromTerraform(ctx, raw)
		if err != nil {
			return err
		}
		rv := reflect.ValueOf(val)
		if !rv.Type().AssignableTo(dst.Type()) {
			return fmt.Errorf("%s cannot hold %s", dst.Type(), rv.Type())
		}
		dst.Set(rv)
		return nil
	}
	if !raw.IsKnown() {
		return fmt.Errorf("unknown value for %s", dst.Type())
	}
	switch dst.Kind() {
	case reflect.Pointer:
		if raw.IsNull() {
			dst.SetZero()
			return nil
		}
		elem := reflect.New(dst.Type().Elem())
		if err := decodeInto(ctx, raw, typ, elem.Elem()); err != nil {
			return err
		}
		dst.Set(elem)
		return nil
	case reflect.Slice:
		if raw.IsNull() {
			dst.SetZero()
			return nil
		}
		et, ok := typ.(attr.TypeWithElementType)
		if !ok {
			return fmt.Errorf("%T has no element type", typ)
		}
		var elems []tftypes.Value
		if err := raw.As(&elems); err != nil {
			return err
		}
		out := reflect.MakeSlice(dst.Type(), len(elems), len(elems))
		for i, e := range elems {
			if err := decodeInto(ctx, e, et.ElementType(), out.Index(i)); err != nil {
				return err
			}
		}
		dst.Set(out)
		return nil
	case reflect.Map:
		if raw.IsNull() {
			dst.SetZero()
			return nil
		}
		et, ok := typ.(attr.TypeWithElementType)
		if !ok || dst.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("%s is not a map Decode handles", dst.Type())
		}
		var elems map[string]tftypes.Value
		if err := raw.As(&elems); err != nil {
			return err
		}
		out := reflect.MakeMapWithSize(dst.Type(), len(elems))
		for k, e := range elems {
			ev := reflect.New(dst.Type().Elem()).Elem()
			if err := decodeInto(ctx, e, et.ElementType(), ev); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(dst.Type().Key()), ev)
		}
		dst.Set(out)
		return nil
	case reflect.Struct:
		if raw.IsNull() {
			return fmt.Errorf("null value for %s", dst.Type())
		}
		ot, ok := typ.(attr.TypeWithAttributeTypes)
		if !ok {
			return fmt.Errorf("%T has no attribute types", typ)
		}
		var attrs map[string]tftypes.Value
		if err := raw.As(&attrs); err != nil {
			return err
		}
		types := ot.AttributeTypes()
		fields := fieldsOf(dst.Type())
		if fields == nil || len(fields) != len(types) {
			return fmt.Errorf("%s does not match the object's %d attributes", dst.Type(), len(types))
		}
		for _, f := range fields {
			at, ok := types[f.name]
			if !ok {
				return fmt.Errorf("%s: no attribute %q", dst.Type(), f.name)
			}
			if err := decodeInto(ctx, attrs[f.name], at, dst.FieldByIndex(f.index)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s is not a shape Decode handles", dst.Type())
}

// modelField is one tagged field of a model struct, possibly inside an embedded one.
type modelField struct {
	index []int
	name  string
}

var fieldCache sync.Map // reflect.Type → []modelField (nil: not a model Decode handles)

// fieldsOf lists t's tagged fields the way the framework reads them: exported fields
// with a tfsdk tag, "-" skipped, untagged embedded structs promoted.
func fieldsOf(t reflect.Type) []modelField {
	if f, ok := fieldCache.Load(t); ok {
		fields, _ := f.([]modelField)
		return fields
	}
	fields, ok := collectFields(t, nil)
	if !ok {
		fields = nil
	}
	fieldCache.Store(t, fields)
	return fields
}

func collectFields(t reflect.Type, prefix []int) ([]modelField, bool) {
	var out []modelField
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("tfsdk")
		index := append(append([]int(nil), prefix...), i)
		switch {
		case tag == "-":
			continue
		case sf.Anonymous && !tagged && sf.Type.Kind() == reflect.Struct:
			inner, ok := collectFields(sf.Type, index)
			if !ok {
				return nil, false
			}
			out = append(out, inner...)
		case !sf.IsExported():
			continue
		case !tagged || tag == "" || strings.ContainsAny(tag, ", "):
			return nil, false // the framework refuses or reads it otherwise: its call
		default:
			out = append(out, modelField{index: index, name: tag})
		}
	}
	return out, true
}

// typed is what tfsdk's Config, Plan and State hold as their Schema: it gives the
// object type Decode walks.
type typed interface{ Type() attr.Type }

func typeOf(s typed) attr.Type {
	if s == nil {
		return nil
	}
	return s.Type()
}

// GetConfig is c.Get(ctx, target) through Decode.
func GetConfig(ctx context.Context, c tfsdk.Config, target any) diag.Diagnostics {
	return Decode(ctx, c.Raw, typeOf(c.Schema), target, func(t any) diag.Diagnostics { return c.Get(ctx, t) })
}

// GetPlan is p.Get(ctx, target) through Decode.
func GetPlan(ctx context.Context, p tfsdk.Plan, target any) diag.Diagnostics {
	return Decode(ctx, p.Raw, typeOf(p.Schema), target, func(t any) diag.Diagnostics { return p.Get(ctx, t) })
}

// GetState is s.Get(ctx, target) through Decode.
func GetState(ctx context.Context, s tfsdk.State, target any) diag.Diagnostics {
	return Decode(ctx, s.Raw, typeOf(s.Schema), target, func(t any) diag.Diagnostics { return s.Get(ctx, t) })
}
