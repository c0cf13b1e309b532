package provider

import "time"

// SetPlanAndImportTimeoutsForTest shortens the default bounds of plan-time checks and
// imports (deadlines.go) and returns a function that restores them. Acceptance tests run
// the provider in the test process, so this reaches the provider under test.
func SetPlanAndImportTimeoutsForTest(plan, imp time.Duration) (restore func()) {
	oldPlan, oldImport := planTimeout, importTimeout
	planTimeout, importTimeout = plan, imp
	return func() { planTimeout, importTimeout = oldPlan, oldImport }
}
