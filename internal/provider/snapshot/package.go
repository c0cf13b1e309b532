// Package snapshot holds libvirt_snapshot and the action libvirt_snapshot_revert.
package snapshot

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var (
	_ resource.ResourceWithConfigure   = (*Resource)(nil)
	_ resource.ResourceWithImportState = (*Resource)(nil)

	_ resource.ResourceWithConfigure = (*RevertResource)(nil)
)

// Resources are libvirt_snapshot and libvirt_snapshot_revert, for the provider's registry.
func Resources() []func() resource.Resource {
	return []func() resource.Resource{
		tfkit.NewResource[Resource]("snapshot"),
		tfkit.NewResource[RevertResource]("snapshot_revert"),
	}
}
