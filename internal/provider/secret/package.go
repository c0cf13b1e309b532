// Package secret holds libvirt_secret.
package secret

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var (
	_ resource.ResourceWithModifyPlan     = (*Resource)(nil)
	_ resource.ResourceWithValidateConfig = (*Resource)(nil)
)

// Resources is libvirt_secret, for the provider's registry.
func Resources() []func() resource.Resource {
	return []func() resource.Resource{tfkit.NewResource[Resource]("secret")}
}
