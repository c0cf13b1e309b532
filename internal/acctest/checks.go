package acctest

import (
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// Plan checks every acceptance step makes: what the plan does before the apply, and
// that the plan after the apply (and its refresh) is empty — no drift on anything
// libvirt fills in.

// Plans checks pre before the apply, and an empty plan after it.
func Plans(pre ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: pre, PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
}

// Updates is Plans for an in-place update of res, reaching the domain as method (its
// update_method: none, live, restart or definition; "" to leave it unchecked).
func Updates(res, method string, more ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	pre := []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate)}
	if method != "" {
		pre = append(pre, plancheck.ExpectKnownValue(res, tfjsonpath.New("update_method"), knownvalue.StringExact(method)))
	}
	return Plans(append(pre, more...)...)
}

// Does is Plans for one planned action on res.
func Does(res string, action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return Plans(plancheck.ExpectResourceAction(res, action))
}
