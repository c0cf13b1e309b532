package tfkit

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// The validator lists an attribute or block offers, by the type of its value (the
// framework's fwxschema interfaces, which are internal to it).
type (
	boolValidated    interface{ BoolValidators() []validator.Bool }
	int64Validated   interface{ Int64Validators() []validator.Int64 }
	float64Validated interface{ Float64Validators() []validator.Float64 }
	stringValidated  interface{ StringValidators() []validator.String }
	listValidated    interface{ ListValidators() []validator.List }
	setValidated     interface{ SetValidators() []validator.Set }
	mapValidated     interface{ MapValidators() []validator.Map }
	objectValidated  interface{ ObjectValidators() []validator.Object }
)

// validators runs the validators of a (an attribute or a block) on v, the framework's
// AttributeValidate<Type> / BlockValidate<Type>.
func (w *walk) validators(a any, v attr.Value, p path.Path, e path.Expression) diag.Diagnostics {
	var diags diag.Diagnostics
	wrongType := func(kind string) diag.Diagnostics {
		diags.AddAttributeError(p, "Invalid "+kind+" Attribute Validator Value Type",
			"An unexpected value type was encountered while attempting to perform "+kind+" attribute validation. "+
				"The value type must implement the basetypes."+kind+"Valuable interface. "+
				"Please report this to the provider developers.\n\n"+fmt.Sprintf("Incoming Value Type: %T", v))
		return diags
	}
	switch av := a.(type) {
	case boolValidated:
		vv, ok := v.(basetypes.BoolValuable)
		if !ok {
			return wrongType("Bool")
		}
		cv, d := vv.ToBoolValue(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.BoolRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.BoolValidators() {
			resp := &validator.BoolResponse{}
			x.ValidateBool(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	case float64Validated:
		vv, ok := v.(basetypes.Float64Valuable)
		if !ok {
			return wrongType("Float64")
		}
		cv, d := vv.ToFloat64Value(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.Float64Request{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.Float64Validators() {
			resp := &validator.Float64Response{}
			x.ValidateFloat64(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	case int64Validated:
		vv, ok := v.(basetypes.Int64Valuable)
		if !ok {
			return wrongType("Int64")
		}
		cv, d := vv.ToInt64Value(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.Int64Request{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.Int64Validators() {
			resp := &validator.Int64Response{}
			x.ValidateInt64(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	case listValidated:
		vv, ok := v.(basetypes.ListValuable)
		if !ok {
			return wrongType("List")
		}
		cv, d := vv.ToListValue(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.ListRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.ListValidators() {
			resp := &validator.ListResponse{}
			x.ValidateList(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	case mapValidated:
		vv, ok := v.(basetypes.MapValuable)
		if !ok {
			return wrongType("Map")
		}
		cv, d := vv.ToMapValue(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.MapRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.MapValidators() {
			resp := &validator.MapResponse{}
			x.ValidateMap(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	case objectValidated:
		vv, ok := v.(basetypes.ObjectValuable)
		if !ok {
			return wrongType("Object")
		}
		cv, d := vv.ToObjectValue(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.ObjectRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.ObjectValidators() {
			resp := &validator.ObjectResponse{}
			x.ValidateObject(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	case setValidated:
		vv, ok := v.(basetypes.SetValuable)
		if !ok {
			return wrongType("Set")
		}
		cv, d := vv.ToSetValue(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.SetRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.SetValidators() {
			resp := &validator.SetResponse{}
			x.ValidateSet(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	case stringValidated:
		vv, ok := v.(basetypes.StringValuable)
		if !ok {
			return wrongType("String")
		}
		cv, d := vv.ToStringValue(w.ctx)
		if diags.Append(d...); d.HasError() {
			return diags
		}
		req := validator.StringRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}
		for _, x := range av.StringValidators() {
			resp := &validator.StringResponse{}
			x.ValidateString(w.ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	}
	return diags
}
