// Package clone holds libvirt_clone: a domain made from another's disks, driven by
// internal/workflow (the domain package is not needed).
package clone

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var (
	_ resource.ResourceWithConfigure   = (*Resource)(nil)
	_ resource.ResourceWithImportState = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan  = (*Resource)(nil)
)

// Resources is libvirt_clone, for the provider's registry.
func Resources() []func() resource.Resource {
	return []func() resource.Resource{tfkit.NewResource[Resource]("clone")}
}
