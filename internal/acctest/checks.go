package acctest

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// The checks acceptance steps make, written as (address, attribute path, wanted value)
// so that a test says what it expects and not how terraform-plugin-testing spells it.

// Plan checks every acceptance step makes: what the plan does before the apply, and
// that the plan after the apply (and its refresh) is empty — no drift on anything
// libvirt fills in.

// Plans checks pre before the apply, and an empty plan after it.
func Plans(pre ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: pre, PostApplyPostRefresh: []plancheck.PlanCheck{NoChange()}}
}

// Updates is Plans for an in-place update of res, reaching the domain as method (its
// update_method: none, live, restart or definition; "" to leave it unchecked).
func Updates(res, method string, more ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	pre := []plancheck.PlanCheck{Planned(res, Update)}
	if method != "" {
		pre = append(pre, PlanIs(res, "update_method", method))
	}
	return Plans(append(pre, more...)...)
}

// Does is Plans for the planned action on res, and more checks before the apply.
func Does(res string, action Action, more ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return Plans(append([]plancheck.PlanCheck{Planned(res, action)}, more...)...)
}

// Action is what a plan does to a resource.
type Action = plancheck.ResourceActionType

// The actions tests expect.
const (
	Create              = plancheck.ResourceActionCreate
	Update              = plancheck.ResourceActionUpdate
	Replace             = plancheck.ResourceActionReplace
	DestroyBeforeCreate = plancheck.ResourceActionDestroyBeforeCreate
	Noop                = plancheck.ResourceActionNoop
)

// Planned checks that the plan does action to res.
func Planned(res string, action Action) plancheck.PlanCheck {
	return plancheck.ExpectResourceAction(res, action)
}

// Before is plan checks before the apply only: of a plan-only step, or of a step whose
// apply is not followed by an empty plan.
func Before(pre ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: pre}
}

// NoChange checks that the plan changes nothing.
func NoChange() plancheck.PlanCheck { return plancheck.ExpectEmptyPlan() }

// PlanIs checks that the plan gives the attribute at path (see Path) of res the value
// want (see Value).
func PlanIs(res, path string, want any) plancheck.PlanCheck {
	return plancheck.ExpectKnownValue(res, Path(path), Value(want))
}

// PlanUnknown checks that the plan leaves the attribute at path of res to the apply.
func PlanUnknown(res, path string) plancheck.PlanCheck {
	return plancheck.ExpectUnknownValue(res, Path(path))
}

// StateIs checks that, in state, the attribute at path (see Path) of res has the value
// want (see Value).
func StateIs(res, path string, want any) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(res, Path(path), Value(want))
}

// State is StateIs for several attributes of res, given as path, want pairs.
func State(res string, pathsAndWants ...any) []statecheck.StateCheck {
	if len(pathsAndWants)%2 != 0 {
		panic(fmt.Sprintf("acctest.State(%s): an attribute path without a value", res))
	}
	checks := make([]statecheck.StateCheck, 0, len(pathsAndWants)/2)
	for i := 0; i < len(pathsAndWants); i += 2 {
		p, ok := pathsAndWants[i].(string)
		if !ok {
			panic(fmt.Sprintf("acctest.State(%s): %v is not an attribute path", res, pathsAndWants[i]))
		}
		checks = append(checks, StateIs(res, p, pathsAndWants[i+1]))
	}
	return checks
}

// Same checks that the attribute at path of res has the value of the one at otherPath of
// other.
func Same(res, path, other, otherPath string) statecheck.StateCheck {
	return statecheck.CompareValuePairs(res, Path(path), other, Path(otherPath), compare.ValuesSame())
}

// OutputIs checks that the output name has the value want (see Value).
func OutputIs(name string, want any) statecheck.StateCheck {
	return statecheck.ExpectKnownOutputValue(name, Value(want))
}

// Path is the path of an attribute: names joined by "." ("dhcp.ranges"), a number for
// a list element ("disk.0.path").
func Path(p string) tfjsonpath.Path {
	parts := strings.Split(p, ".")
	at := tfjsonpath.New(parts[0])
	for _, k := range parts[1:] {
		if i, err := strconv.Atoi(k); err == nil {
			at = at.AtSliceIndex(i)
		} else {
			at = at.AtMapKey(k)
		}
	}
	return at
}

// NotNull is any value but null.
var NotNull = knownvalue.NotNull()

// ListSize is a list of n elements.
func ListSize(n int) knownvalue.Check { return knownvalue.ListSizeExact(n) }

// Partial is an object with at least the attributes of want (each a Value).
func Partial(want map[string]any) knownvalue.Check {
	checks := make(map[string]knownvalue.Check, len(want))
	for k, v := range want {
		checks[k] = Value(v)
	}
	return knownvalue.ObjectPartial(checks)
}

// Value is the check of a value: a string, an int or int64, a bool, a *regexp.Regexp (a
// string that matches it), nil (null), a slice (a list of exactly those elements, each a
// Value), a map[string]any (an object of exactly those attributes, each a Value), a
// map[int]any (a list with at least those elements at those indexes), or a
// knownvalue.Check as it is.
func Value(want any) knownvalue.Check {
	switch w := want.(type) {
	case nil:
		return knownvalue.Null()
	case string:
		return knownvalue.StringExact(w)
	case int:
		return knownvalue.Int64Exact(int64(w))
	case int64:
		return knownvalue.Int64Exact(w)
	case bool:
		return knownvalue.Bool(w)
	case *regexp.Regexp:
		return knownvalue.StringRegexp(w)
	case knownvalue.Check:
		return w
	case map[string]any:
		checks := make(map[string]knownvalue.Check, len(w))
		for k, v := range w {
			checks[k] = Value(v)
		}
		return knownvalue.ObjectExact(checks)
	case map[int]any:
		checks := make(map[int]knownvalue.Check, len(w))
		for i, v := range w {
			checks[i] = Value(v)
		}
		return knownvalue.ListPartial(checks)
	}
	if v := reflect.ValueOf(want); v.Kind() == reflect.Slice {
		checks := make([]knownvalue.Check, 0, v.Len())
		for i := range v.Len() {
			checks = append(checks, Value(v.Index(i).Interface()))
		}
		return knownvalue.ListExact(checks)
	}
	panic(fmt.Sprintf("acctest.Value: %T is not a value to check", want))
}
