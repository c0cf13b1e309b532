// Package validators holds the provider's string validators: one type, String, that
// skips null and unknown values and reports what a check finds wrong, and the checks
// the schemas use (names, addresses, URLs, documents). Each check keeps the message
// users get today; the catalogue of bad inputs in the acceptance tests asserts them.
package validators

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Check says what is wrong with value, the configured value of the attribute at at: the
// detail of the error, "" when nothing is.
type Check func(at path.Path, value string) string

// String is a validator.String made of a description and a check.
type String struct {
	description string
	summary     func(at path.Path) string
	check       Check
}

var _ validator.String = String{}

// New is a validator whose errors are headed summary, e.g. "Invalid duration".
func New(description, summary string, check Check) String {
	return String{description: description, summary: func(path.Path) string { return summary }, check: check}
}

// NewIn is a validator whose errors are headed "<what> in <attribute>", e.g. "Invalid
// YAML in user_data": for checks that serve several attributes.
func NewIn(description, what string, check Check) String {
	return String{description: description, summary: func(at path.Path) string { return what + " in " + at.String() }, check: check}
}

func (v String) Description(context.Context) string { return v.description }

func (v String) MarkdownDescription(context.Context) string { return v.description }

// ValidateString checks a known value; null and unknown ones pass (an unknown one is
// checked once it is known, at apply).
func (v String) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if detail := v.check(req.Path, req.ConfigValue.ValueString()); detail != "" {
		resp.Diagnostics.AddAttributeError(req.Path, v.summary(req.Path), detail)
	}
}
