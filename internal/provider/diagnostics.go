package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// diagError is an attribute error collected while resolving configuration.
type diagError struct {
	path    path.Path
	summary string
	detail  string
}

func unknownErr(p path.Path) diagError {
	return diagError{p, "Unknown provider configuration value",
		fmt.Sprintf("The provider cannot connect while %s is unknown (it depends on a value known only after apply). "+
			"Set it to a value known at plan time, e.g. a variable or a literal.", p)}
}

// appendErrs adds collected errors to diagnostics.
func appendErrs(d *diag.Diagnostics, errs []diagError) {
	for _, e := range errs {
		d.AddAttributeError(e.path, e.summary, e.detail)
	}
}

// clientFrom is the shared Configure of every resource and data source: quiet when the
// provider is not configured yet, a clear error when ProviderData is not our client.
func clientFrom(data any, d *diag.Diagnostics, kind string) *libvirt.Client {
	if data == nil {
		return nil
	}
	c, ok := data.(*libvirt.Client)
	if !ok {
		d.AddError("Unexpected "+kind+" Configure Type",
			fmt.Sprintf("Expected *libvirt.Client, got: %T. Please report this issue to the provider developers.", data))
		return nil
	}
	return c
}
