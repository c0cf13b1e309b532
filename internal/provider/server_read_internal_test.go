package provider

import (
	"bytes"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The same value hashes the same however its maps and sets were ordered on the wire, and
// any change of a value changes the sum.
func TestValueSum(t *testing.T) {
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	obj := func(tags map[string]tftypes.Value, set []tftypes.Value) tftypes.Value {
		typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
			"tags": tftypes.Map{ElementType: tftypes.String}, "hyperv": tftypes.Set{ElementType: tftypes.String}}}
		return tftypes.NewValue(typ, map[string]tftypes.Value{
			"tags":   tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, tags),
			"hyperv": tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, set),
		})
	}
	a := obj(map[string]tftypes.Value{"a": str("1"), "b": str("2")}, []tftypes.Value{str("relaxed"), str("vapic")})
	b := obj(map[string]tftypes.Value{"b": str("2"), "a": str("1")}, []tftypes.Value{str("vapic"), str("relaxed")})
	c := obj(map[string]tftypes.Value{"a": str("1"), "b": str("3")}, []tftypes.Value{str("relaxed"), str("vapic")})
	if !bytes.Equal(valueSum(a), valueSum(b)) {
		t.Error("the same value in another order hashes differently")
	}
	if bytes.Equal(valueSum(a), valueSum(c)) {
		t.Error("a changed map value hashes the same")
	}
}
