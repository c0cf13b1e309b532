package domain

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
)

// uuidReplace replaces the domain when the configuration names a UUID other than its own.
type uuidReplace struct{}

func (uuidReplace) Description(context.Context) string {
	return "a different uuid replaces the domain"
}

func (v uuidReplace) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (uuidReplace) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() ||
		req.StateValue.IsNull() || req.StateValue.IsUnknown() {
		return
	}
	// UUIDs compare without regard to case: libvirt prints them in lower case.
	if !strings.EqualFold(req.ConfigValue.ValueString(), req.StateValue.ValueString()) {
		resp.RequiresReplace = true
	}
}
