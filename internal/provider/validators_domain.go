package provider

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// durationValidator accepts a Go duration that is not negative ("30s", "5m", "1h30m").
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "must be a Go duration such as 30s, 5m or 1h30m"
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d < 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			"\""+req.ConfigValue.ValueString()+"\" is not a duration: use a Go duration such as 30s, 5m or 1h30m.")
	}
}

// ipValidator accepts an IPv4 or IPv6 address.
type ipValidator struct{}

func (ipValidator) Description(context.Context) string {
	return "must be an IP address such as 127.0.0.1 or ::1"
}

func (v ipValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (ipValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if net.ParseIP(req.ConfigValue.ValueString()) == nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid IP address",
			"\""+req.ConfigValue.ValueString()+"\" is not an IP address: use e.g. 127.0.0.1, 0.0.0.0 or ::1.")
	}
}

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
