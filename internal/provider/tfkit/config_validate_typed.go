package tfkit

import (
	"context"
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
	switch av := a.(type) {
	case boolValidated:
		return runTyped(w, v, p, "Bool", basetypes.BoolValuable.ToBoolValue, av.BoolValidators(), func(x validator.Bool, cv basetypes.BoolValue) diag.Diagnostics {
			resp := &validator.BoolResponse{}
			x.ValidateBool(w.ctx, validator.BoolRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case float64Validated:
		return runTyped(w, v, p, "Float64", basetypes.Float64Valuable.ToFloat64Value, av.Float64Validators(), func(x validator.Float64, cv basetypes.Float64Value) diag.Diagnostics {
			resp := &validator.Float64Response{}
			x.ValidateFloat64(w.ctx, validator.Float64Request{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case int64Validated:
		return runTyped(w, v, p, "Int64", basetypes.Int64Valuable.ToInt64Value, av.Int64Validators(), func(x validator.Int64, cv basetypes.Int64Value) diag.Diagnostics {
			resp := &validator.Int64Response{}
			x.ValidateInt64(w.ctx, validator.Int64Request{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case listValidated:
		return runTyped(w, v, p, "List", basetypes.ListValuable.ToListValue, av.ListValidators(), func(x validator.List, cv basetypes.ListValue) diag.Diagnostics {
			resp := &validator.ListResponse{}
			x.ValidateList(w.ctx, validator.ListRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case mapValidated:
		return runTyped(w, v, p, "Map", basetypes.MapValuable.ToMapValue, av.MapValidators(), func(x validator.Map, cv basetypes.MapValue) diag.Diagnostics {
			resp := &validator.MapResponse{}
			x.ValidateMap(w.ctx, validator.MapRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case objectValidated:
		return runTyped(w, v, p, "Object", basetypes.ObjectValuable.ToObjectValue, av.ObjectValidators(), func(x validator.Object, cv basetypes.ObjectValue) diag.Diagnostics {
			resp := &validator.ObjectResponse{}
			x.ValidateObject(w.ctx, validator.ObjectRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case setValidated:
		return runTyped(w, v, p, "Set", basetypes.SetValuable.ToSetValue, av.SetValidators(), func(x validator.Set, cv basetypes.SetValue) diag.Diagnostics {
			resp := &validator.SetResponse{}
			x.ValidateSet(w.ctx, validator.SetRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	case stringValidated:
		return runTyped(w, v, p, "String", basetypes.StringValuable.ToStringValue, av.StringValidators(), func(x validator.String, cv basetypes.StringValue) diag.Diagnostics {
			resp := &validator.StringResponse{}
			x.ValidateString(w.ctx, validator.StringRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, resp)
			return resp.Diagnostics
		})
	}
	return nil
}

// runTyped is one kind's validation: v read as that kind's value (VV, converted by to),
// then each validator run on it, each with a response of its own.
func runTyped[VV any, CV any, X any](w *walk, v attr.Value, p path.Path, kind string, to func(VV, context.Context) (CV, diag.Diagnostics),
	validators []X, run func(X, CV) diag.Diagnostics) diag.Diagnostics {
	var diags diag.Diagnostics
	vv, ok := v.(VV)
	if !ok {
		diags.AddAttributeError(p, "Invalid "+kind+" Attribute Validator Value Type",
			"An unexpected value type was encountered while attempting to perform "+kind+" attribute validation. "+
				"The value type must implement the basetypes."+kind+"Valuable interface. "+
				"Please report this to the provider developers.\n\n"+fmt.Sprintf("Incoming Value Type: %T", v))
		return diags
	}
	cv, d := to(vv, w.ctx)
	if diags.Append(d...); d.HasError() {
		return diags
	}
	for _, x := range validators {
		diags.Append(run(x, cv)...)
	}
	return diags
}
