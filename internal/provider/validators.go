package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// uriValidator rejects a malformed libvirt URI at plan time, with the parser's message
// saying which form is expected.
type uriValidator struct{}

func (uriValidator) Description(context.Context) string {
	return "must be a libvirt URI such as qemu:///system or qemu+ssh://user@host/system"
}

func (v uriValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (uriValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := libvirt.ParseURI(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid libvirt URI", err.Error())
	}
}
