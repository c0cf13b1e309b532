package tfkit

// Plan modifiers that object schemas share.

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
)

// PresenceChanged replaces the resource when a block is added or removed (changes inside
// it are decided by its attributes).
func PresenceChanged(_ context.Context, req planmodifier.ObjectRequest, resp *objectplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = req.StateValue.IsNull() != req.PlanValue.IsNull()
}

// ReplacedOnPresence replaces the network when block is added or removed.
func ReplacedOnPresence(block string) []planmodifier.Object {
	return []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(PresenceChanged,
		"Adding or removing the "+block+" block replaces the network.", "Adding or removing the `"+block+"` block replaces the network.")}
}
