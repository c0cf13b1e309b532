package provider

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

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

// ipv4Validator accepts a dotted IPv4 address.
type ipv4Validator struct{}

func (ipv4Validator) Description(context.Context) string {
	return "must be an IPv4 address, e.g. 192.168.122.10"
}
func (v ipv4Validator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (v ipv4Validator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	a, err := netip.ParseAddr(req.ConfigValue.ValueString())
	if err != nil || !a.Is4() {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid IPv4 address", fmt.Sprintf("%q %s.", req.ConfigValue.ValueString(), v.Description(ctx)))
	}
}

// lowerCaseValidator rejects upper case, so that the value in state (as libvirt stores
// it) always equals the configuration and never shows as a diff.
type lowerCaseValidator struct{ what string }

func (v lowerCaseValidator) Description(context.Context) string {
	return "must be written in lower case"
}
func (v lowerCaseValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (v lowerCaseValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	if s != strings.ToLower(s) {
		resp.Diagnostics.AddAttributeError(req.Path, "Upper-case "+v.what,
			fmt.Sprintf("%q: write the %s in lower case (%q); libvirt stores it so.", s, v.what, strings.ToLower(s)))
	}
}
