package tfkit

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// walk is one validation's state: the framework's fwserver AttributeValidate,
// BlockValidate and their nested-object steps, in the same order, with the same messages.
type walk struct {
	ctx    context.Context
	config tfsdk.Config
	caps   validator.ValidateSchemaClientCapabilities
}

// value is the framework's ValueAtPath for a value already in hand: the attribute type's
// value of tv, and the value's or type's own validation.
func (w *walk) value(t attr.Type, tv tftypes.Value, p path.Path) (attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	v, err := t.ValueFromTerraform(w.ctx, tv)
	if err != nil {
		diags.AddAttributeError(p, "Configuration Read Error",
			"An unexpected error was encountered trying to convert an attribute value from the configuration. "+
				"This is always an error in the provider. Please report the following to the provider developer:\n\nError: "+err.Error())
		return nil, diags
	}
	if va, ok := v.(xattr.ValidateableAttribute); ok {
		resp := xattr.ValidateAttributeResponse{}
		va.ValidateAttribute(w.ctx, xattr.ValidateAttributeRequest{Path: p}, &resp)
		diags.Append(resp.Diagnostics...)
	} else if tv2, ok := t.(xattr.TypeWithValidate); ok { //nolint:staticcheck // the framework still calls it
		diags.Append(tv2.Validate(w.ctx, tv, p)...)
	}
	if diags.HasError() {
		return nil, diags
	}
	return v, diags
}

func (w *walk) attribute(n *vnode, tv tftypes.Value, p path.Path, e path.Expression) diag.Diagnostics {
	var diags diag.Diagnostics
	a := n.attr
	switch {
	case !a.IsRequired() && !a.IsOptional() && !a.IsComputed():
		diags.AddAttributeError(p, "Invalid Attribute Definition",
			"Attribute missing Required, Optional, or Computed definition. This is always a problem with the provider and should be reported to the provider developer.")
		return diags
	case a.IsWriteOnly() && a.IsRequired() && a.IsOptional():
		diags.AddAttributeError(p, "Invalid Attribute Definition",
			"WriteOnly Attributes must be set with only one of Required or Optional. This is always a problem with the provider and should be reported to the provider developer.")
		return diags
	case a.IsWriteOnly() && a.IsComputed():
		diags.AddAttributeError(p, "Invalid Attribute Definition",
			"WriteOnly Attributes cannot be set with Computed. This is always a problem with the provider and should be reported to the provider developer.")
		return diags
	}
	v, d := w.value(n.typ, tv, p)
	diags.Append(d...)
	if d.HasError() {
		return diags
	}
	isNull, isUnknown := v.IsNull(), v.IsUnknown()
	if dv, ok := v.(basetypes.DynamicValuable); ok && !isNull && !isUnknown {
		dyn, d := dv.ToDynamicValue(w.ctx)
		diags.Append(d...)
		if d.HasError() {
			return diags
		}
		isNull = isNull || dyn.IsUnderlyingValueNull()
		isUnknown = isUnknown || dyn.IsUnderlyingValueUnknown()
	}
	if a.IsComputed() && !a.IsOptional() && !isNull {
		diags.AddAttributeError(p, "Invalid Configuration for Read-Only Attribute",
			"Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.\n\n"+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable and read-only attributes that are supported.")
	}
	if a.IsRequired() && isNull {
		diags.AddAttributeError(p, "Missing Configuration for Required Attribute",
			fmt.Sprintf("Must set a configuration value for the %s attribute as the provider has marked it as required.\n\n", p.String())+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable attributes that are required.")
	}
	if !w.caps.WriteOnlyAttributesAllowed && a.IsWriteOnly() && !isNull {
		diags.AddAttributeError(p, "WriteOnly Attribute Not Allowed",
			fmt.Sprintf("The resource contains a non-null value for WriteOnly attribute %s. Write-only attributes are only supported in Terraform 1.11 and later.", p.String()))
	}
	diags.Append(w.validators(a, v, p, e)...)
	if n.nest != notNested {
		nd, _ := w.nestedAttribute(n, v, tv, p, e, diags.HasError())
		diags.Append(nd...)
	}
	if msg := a.GetDeprecationMessage(); msg != "" && !isNull && !isUnknown {
		diags.AddAttributeWarning(p, "Attribute Deprecated", msg)
	}
	return diags
}

// nestedAttribute is AttributeValidateNestedAttributes: each object of a nested attribute
// (none when it is null or unknown). Like the framework, it stops before the objects when
// the attribute itself has an error (erred): stopped says so.
func (w *walk) nestedAttribute(n *vnode, v attr.Value, tv tftypes.Value, p path.Path, e path.Expression, erred bool) (diags diag.Diagnostics, stopped bool) {
	if n.nest == nestedSingle {
		o, d := w.object(v, p)
		diags.Append(d...)
		if erred || d.HasError() {
			return diags, true
		}
		if o.IsNull() || o.IsUnknown() {
			return diags, false
		}
		diags.Append(w.nestedObject(&n.object, o, tv, p, e)...) // Append drops repeats, as the framework's does
		return diags, false
	}
	return w.elements(n, v, tv, p, e, erred)
}

func (w *walk) block(n *vnode, tv tftypes.Value, p path.Path, e path.Expression) diag.Diagnostics {
	v, diags := w.value(n.typ, tv, p)
	if diags.HasError() {
		return diags
	}
	diags.Append(w.validators(n.block, v, p, e)...)
	if n.nest == nestedSingle {
		o, d := w.object(v, p)
		diags.Append(d...)
		if diags.HasError() {
			return diags
		}
		diags.Append(w.nestedObject(&n.object, o, tv, p, e)...)
	} else {
		d, stopped := w.elements(n, v, tv, p, e, diags.HasError())
		diags.Append(d...)
		if stopped {
			return diags
		}
	}
	if msg := n.block.GetDeprecationMessage(); msg != "" && !v.IsNull() && !v.IsUnknown() {
		diags.AddAttributeWarning(p, "Block Deprecated", msg)
	}
	return diags
}

// elements walks the objects of a list, set or map of them, each at its own path; none
// when erred (stopped).
func (w *walk) elements(n *vnode, v attr.Value, tv tftypes.Value, p path.Path, e path.Expression, erred bool) (diags diag.Diagnostics, stopped bool) {
	var tfElems []tftypes.Value
	var tfMap map[string]tftypes.Value
	if !tv.IsNull() && tv.IsKnown() {
		if n.nest == nestedMap {
			_ = tv.As(&tfMap)
		} else {
			_ = tv.As(&tfElems)
		}
	}
	at := func(i int) tftypes.Value {
		if i < len(tfElems) {
			return tfElems[i]
		}
		return tftypes.Value{}
	}
	switch n.nest {
	case nestedList:
		lv, ok := v.(basetypes.ListValuable)
		if !ok {
			return append(diags, wrongValueType(p, v)...), true
		}
		l, d := lv.ToListValue(w.ctx)
		if diags.Append(d...); erred || d.HasError() {
			return diags, true
		}
		for i, ev := range l.Elements() {
			diags.Append(w.nestedElement(&n.object, ev, at(i), p.AtListIndex(i), e.AtListIndex(i))...)
		}
	case nestedSet:
		sv, ok := v.(basetypes.SetValuable)
		if !ok {
			return append(diags, wrongValueType(p, v)...), true
		}
		s, d := sv.ToSetValue(w.ctx)
		if diags.Append(d...); erred || d.HasError() {
			return diags, true
		}
		for i, ev := range s.Elements() {
			diags.Append(w.nestedElement(&n.object, ev, at(i), p.AtSetValue(ev), e.AtSetValue(ev))...)
		}
	case nestedMap:
		mv, ok := v.(basetypes.MapValuable)
		if !ok {
			return append(diags, wrongValueType(p, v)...), true
		}
		m, d := mv.ToMapValue(w.ctx)
		if diags.Append(d...); erred || d.HasError() {
			return diags, true
		}
		for k, ev := range m.Elements() {
			et := tftypes.Value{}
			if tfMap != nil {
				et = tfMap[k]
			}
			diags.Append(w.nestedElement(&n.object, ev, et, p.AtMapKey(k), e.AtMapKey(k))...)
		}
	}
	return diags, false
}

// nestedElement is one element's object: read as an object, then walked.
func (w *walk) nestedElement(o *objectNode, ev attr.Value, tv tftypes.Value, p path.Path, e path.Expression) diag.Diagnostics {
	if len(o.validators) == 0 {
		return w.nestedObject(o, nil, tv, p, e)
	}
	obj, diags := w.object(ev, p)
	if diags.HasError() {
		return diags
	}
	diags.Append(w.nestedObject(o, obj, tv, p, e)...)
	return diags
}

// nestedObject is NestedAttributeObjectValidate / NestedBlockObjectValidate: the object's
// validators, then its attributes and blocks, their values read from tv.
func (w *walk) nestedObject(o *objectNode, obj attr.Value, tv tftypes.Value, p path.Path, e path.Expression) diag.Diagnostics {
	var diags diag.Diagnostics
	if len(o.validators) > 0 {
		ov, ok := obj.(basetypes.ObjectValue)
		if !ok {
			diags.AddAttributeError(p, "Attribute Validation Walk Error", fmt.Sprintf("Unknown attribute value type (%T) at path: %s", obj, p))
			return diags
		}
		req := validator.ObjectRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: ov, Path: p, PathExpression: e}
		for _, ov := range o.validators {
			resp := &validator.ObjectResponse{}
			ov.ValidateObject(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	}
	for _, c := range o.attrs {
		diags.Append(w.attribute(c, child(tv, c.name), p.AtName(c.name), e.AtName(c.name))...)
	}
	for _, c := range o.blocks {
		diags.Append(w.block(c, child(tv, c.name), p.AtName(c.name), e.AtName(c.name))...)
	}
	return diags
}

// object is v as the framework's ObjectValue.
func (w *walk) object(v attr.Value, p path.Path) (basetypes.ObjectValue, diag.Diagnostics) {
	ov, ok := v.(basetypes.ObjectValuable)
	if !ok {
		return basetypes.ObjectValue{}, wrongValueType(p, v)
	}
	return ov.ToObjectValue(w.ctx)
}

// wrongValueType is the framework's error for a value whose Go type does not fit its
// nesting (a provider bug: a custom type that is not the kind its schema says).
func wrongValueType(p path.Path, v attr.Value) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.AddAttributeError(p, "Attribute Validation Error Invalid Value Type", fmt.Sprintf("unknown value type (%T) at path: %s", v, p))
	return diags
}
