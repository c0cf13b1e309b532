package tfkit

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The null rule of each conversion, in both directions.
func TestValues_nullRules(t *testing.T) {
	seven, zero := uint64(7), 0
	for name, c := range map[string]struct{ got, want types.Int64 }{
		"Int64OrNull zero":  {Int64OrNull(uint(0)), types.Int64Null()},
		"Int64OrNull value": {Int64OrNull(uint64(7)), types.Int64Value(7)},
		"Int64FromPtr nil":  {Int64FromPtr[int](nil), types.Int64Null()},
		"Int64FromPtr zero": {Int64FromPtr(&zero), types.Int64Value(0)},
		"Int64FromPtr":      {Int64FromPtr(&seven), types.Int64Value(7)},
	} {
		if !c.got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", name, c.got, c.want)
		}
	}
	for name, c := range map[string]struct{ got, want uint }{
		"UintOf null":     {UintOf(types.Int64Null()), 0},
		"UintOf unknown":  {UintOf(types.Int64Unknown()), 0},
		"UintOf negative": {UintOf(types.Int64Value(-1)), 0},
		"UintOf":          {UintOf(types.Int64Value(9)), 9},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", name, c.got, c.want)
		}
	}
	if !StringOrNull("").IsNull() || StringOrNull("a").ValueString() != "a" {
		t.Error("StringOrNull: empty is null, else the value")
	}
	if StringOf(types.StringUnknown()) != "" || StringOf(types.StringValue("a")) != "a" {
		t.Error("StringOf: null or unknown is empty, else the value")
	}
	if NameOr(types.StringUnknown(), "id") != "id" || NameOr(types.StringValue(""), "id") != "id" || NameOr(types.StringValue("n"), "id") != "n" {
		t.Error("NameOr: the name when known and not empty, else the id")
	}
}
