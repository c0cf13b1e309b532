package tfkit

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Encode is Decode's way back: a model as the Terraform value of type typ, as the
// framework's Set does (tfsdk.Plan.Set, tfsdk.State.Set), for the same shapes Decode
// reads. tft is typ's Terraform type when the caller has it at hand (the Raw value it
// replaces), else nil.
//
// Why: the framework's Set reflects over the model anew on every call, compiles a
// regular expression per field name, and builds every nested object's Terraform type
// from its framework type; for libvirt_domain that was most of ModifyPlan's and of a
// Create's own CPU (ADR 8). Here the tags are read once per type (fieldsOf) and the
// Terraform types come from the value being replaced.
//
// It fails (and the callers below leave the work to the framework, whose diagnostics
// are then exactly its own) on anything it does not handle: another Go type, a value
// whose type is not the schema's, a value type with its own validation.
func Encode(ctx context.Context, typ attr.Type, tft tftypes.Type, src any) (out tftypes.Value, err error) {
	defer func() {
		if r := recover(); r != nil { // a value the framework's types cannot convert: its turn
			out, err = tftypes.Value{}, fmt.Errorf("encode: %v", r)
		}
	}()
	if typ == nil {
		return tftypes.Value{}, errors.New("no schema type")
	}
	if tft == nil {
		tft = typ.TerraformType(ctx)
	}
	v := reflect.ValueOf(src)
	if !v.IsValid() {
		return tftypes.Value{}, errors.New("nothing to encode")
	}
	return encodeFrom(ctx, typ, tft, v)
}

func encodeFrom(ctx context.Context, typ attr.Type, tft tftypes.Type, src reflect.Value) (tftypes.Value, error) {
	if _, dynamic := typ.(basetypes.DynamicTypable); dynamic {
		// A dynamic value's Terraform type is its content's, not the schema's.
		return tftypes.Value{}, errors.New("a dynamic type")
	}
	if src.Type().Implements(attrValueType) {
		if src.Kind() == reflect.Interface || src.Kind() == reflect.Pointer {
			if src.IsNil() {
				return tftypes.Value{}, fmt.Errorf("nil %s", src.Type())
			}
		}
		val, _ := src.Interface().(attr.Value)
		if _, own := val.(xattr.ValidateableAttribute); own {
			return tftypes.Value{}, fmt.Errorf("%s validates itself", src.Type())
		}
		//nolint:staticcheck // the framework still honours the deprecated interface: so must this
		if _, own := typ.(xattr.TypeWithValidate); own && !checksOnlyNumbers(typ) {
			return tftypes.Value{}, fmt.Errorf("%T validates itself", typ)
		}
		// The framework's own check first (FromAttributeValue): a value of another type
		// may not even convert (a zero types.List panics).
		if vt := val.Type(ctx); !typ.Equal(vt) && !vt.TerraformType(ctx).Equal(tft) {
			return tftypes.Value{}, fmt.Errorf("%s holds %s where the schema has %s", src.Type(), vt, typ)
		}
		tv, err := val.ToTerraformValue(ctx)
		if err != nil {
			return tftypes.Value{}, err
		}
		if !tv.Type().Equal(tft) {
			return tftypes.Value{}, fmt.Errorf("%s holds %s where the schema has %s", src.Type(), tv.Type(), tft)
		}
		return tv, nil
	}
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return tftypes.NewValue(tft, nil), nil
		}
		return encodeFrom(ctx, typ, tft, src.Elem())
	case reflect.Slice:
		return encodeSlice(ctx, typ, tft, src)
	case reflect.Map:
		return encodeMap(ctx, typ, tft, src)
	case reflect.Struct:
		return encodeStruct(ctx, typ, tft, src)
	}
	return tftypes.Value{}, fmt.Errorf("%s is not a shape Encode handles", src.Type())
}

func encodeSlice(ctx context.Context, typ attr.Type, tft tftypes.Type, src reflect.Value) (tftypes.Value, error) {
	if src.IsNil() {
		return tftypes.NewValue(tft, nil), nil
	}
	et, ok := typ.(attr.TypeWithElementType)
	if !ok {
		return tftypes.Value{}, fmt.Errorf("%T has no element type", typ)
	}
	var tfElem tftypes.Type
	switch t := tft.(type) {
	case tftypes.List:
		tfElem = t.ElementType
	case tftypes.Set:
		tfElem = t.ElementType
	default:
		return tftypes.Value{}, fmt.Errorf("a slice cannot be %s", tft)
	}
	elems := make([]tftypes.Value, src.Len())
	for i := range elems {
		e, err := encodeFrom(ctx, et.ElementType(), tfElem, src.Index(i))
		if err != nil {
			return tftypes.Value{}, err
		}
		elems[i] = e
	}
	return newValue(tft, elems)
}

func encodeMap(ctx context.Context, typ attr.Type, tft tftypes.Type, src reflect.Value) (tftypes.Value, error) {
	if src.IsNil() {
		return tftypes.NewValue(tft, nil), nil
	}
	et, ok := typ.(attr.TypeWithElementType)
	mt, isMap := tft.(tftypes.Map)
	if !ok || !isMap || src.Type().Key().Kind() != reflect.String {
		return tftypes.Value{}, fmt.Errorf("%s is not a map Encode handles", src.Type())
	}
	elems := make(map[string]tftypes.Value, src.Len())
	iter := src.MapRange()
	for iter.Next() {
		e, err := encodeFrom(ctx, et.ElementType(), mt.ElementType, iter.Value())
		if err != nil {
			return tftypes.Value{}, err
		}
		elems[iter.Key().String()] = e
	}
	return newValue(tft, elems)
}

func encodeStruct(ctx context.Context, typ attr.Type, tft tftypes.Type, src reflect.Value) (tftypes.Value, error) {
	ot, ok := typ.(attr.TypeWithAttributeTypes)
	obj, isObject := tft.(tftypes.Object)
	if !ok || !isObject {
		return tftypes.Value{}, fmt.Errorf("%s is not an object Encode handles", src.Type())
	}
	types := ot.AttributeTypes()
	fields := fieldsOf(src.Type())
	if fields == nil || len(fields) != len(types) || len(fields) != len(obj.AttributeTypes) {
		return tftypes.Value{}, fmt.Errorf("%s does not match the object's %d attributes", src.Type(), len(types))
	}
	attrs := make(map[string]tftypes.Value, len(fields))
	for _, f := range fields {
		at, ok := types[f.name]
		tfAt, tfOK := obj.AttributeTypes[f.name]
		if !ok || !tfOK {
			return tftypes.Value{}, fmt.Errorf("%s: no attribute %q", src.Type(), f.name)
		}
		v, err := encodeFrom(ctx, at, tfAt, src.FieldByIndex(f.index))
		if err != nil {
			return tftypes.Value{}, err
		}
		attrs[f.name] = v
	}
	return newValue(tft, attrs)
}

// checksOnlyNumbers: the framework's own Int64Type and Float64Type check that a number
// is one, and its List / Set / Map types check their elements the same way. Their values
// (Int64Value from Go's int64, Float64Value from float64, collections of those, as the
// framework's constructors require) always pass; this provider has no value type of its
// own that could hold anything else.
func checksOnlyNumbers(t attr.Type) bool {
	switch t.(type) {
	case basetypes.Int64Type, basetypes.Float64Type, basetypes.ListType, basetypes.SetType, basetypes.MapType:
		return true
	}
	return false
}

// newValue is tftypes.NewValue without its panic: a value that does not fit its type
// is an error here (and the framework's turn), never a crash. Every part was built
// with the type its parent's type names, so it fits; the recover is the guard.
func newValue(t tftypes.Type, v any) (out tftypes.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", t, r)
		}
	}()
	return tftypes.NewValue(t, v), nil
}

// rawType is the Terraform type of the value being replaced, nil when it has none yet.
func rawType(v tftypes.Value) tftypes.Type {
	if v.Type() == nil {
		return nil
	}
	return v.Type()
}

// SetPlan is p.Set(ctx, val) through Encode.
func SetPlan(ctx context.Context, p *tfsdk.Plan, val any) diag.Diagnostics {
	if tv, err := Encode(ctx, typeOf(p.Schema), rawType(p.Raw), val); err == nil {
		p.Raw = tv
		return nil
	}
	return p.Set(ctx, val)
}

// SetState is s.Set(ctx, val) through Encode.
func SetState(ctx context.Context, s *tfsdk.State, val any) diag.Diagnostics {
	if tv, err := Encode(ctx, typeOf(s.Schema), rawType(s.Raw), val); err == nil {
		s.Raw = tv
		return nil
	}
	return s.Set(ctx, val)
}
