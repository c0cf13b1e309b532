package libvirt

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt/rpc"
)

// rollbackBudget bounds the removal of a half-made object after a failed create. The
// rollback must outlive the caller's context (a Ctrl-C or a timeout may be what failed
// the create, and the object should not be left behind for that), but not by much: a
// wedged daemon must not hold the apply, or its Ctrl-C, forever. A variable so that
// tests can shorten it.
var rollbackBudget = rpc.SettleBudget

// rollbackContext is ctx without its cancellation, on rollbackBudget.
func rollbackContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), rollbackBudget)
}
