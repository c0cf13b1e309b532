package libvirt

import (
	"testing"
	"time"
)

// Test-only: shorter budgets for the acceptance tests that wait them out.

// SetBlockJobAbortBudget sets how long endBlockJob tries, until the test ends.
func SetBlockJobAbortBudget(t testing.TB, d time.Duration) {
	old := blockJobAbortBudget
	blockJobAbortBudget = d
	t.Cleanup(func() { blockJobAbortBudget = old })
}

// SetRollbackBudget sets how long a create's rollback may take, until the test ends.
func SetRollbackBudget(t testing.TB, d time.Duration) {
	old := rollbackBudget
	rollbackBudget = d
	t.Cleanup(func() { rollbackBudget = old })
}
