// Package storage holds what lives in storage pools: libvirt_pool, libvirt_volume, the
// action libvirt_volume_export, and the two blobs stored as volumes, libvirt_cloudinit_iso
// and libvirt_ignition.
package storage

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*PoolResource)(nil)
	_ resource.ResourceWithImportState    = (*PoolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*PoolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*PoolResource)(nil)

	_ resource.ResourceWithConfigure      = (*VolumeResource)(nil)
	_ resource.ResourceWithImportState    = (*VolumeResource)(nil)
	_ resource.ResourceWithValidateConfig = (*VolumeResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*VolumeResource)(nil)

	_ resource.ResourceWithConfigure = (*VolumeExportResource)(nil)

	_ resource.ResourceWithConfigure      = (*CloudinitISOResource)(nil)
	_ resource.ResourceWithImportState    = (*CloudinitISOResource)(nil)
	_ resource.ResourceWithValidateConfig = (*CloudinitISOResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*CloudinitISOResource)(nil)

	_ resource.ResourceWithConfigure        = (*IgnitionResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*IgnitionResource)(nil)
	_ resource.ResourceWithImportState      = (*IgnitionResource)(nil)
	_ resource.ResourceWithConfigValidators = (*IgnitionResource)(nil)
)

// Resources are libvirt_pool, libvirt_volume, libvirt_volume_export,
// libvirt_cloudinit_iso and libvirt_ignition, for the provider's registry.
func Resources() []func() resource.Resource {
	return []func() resource.Resource{
		tfkit.NewResource[PoolResource]("pool"),
		tfkit.NewResource[VolumeResource]("volume"),
		tfkit.NewResource[VolumeExportResource]("volume_export"),
		tfkit.NewResource[CloudinitISOResource]("cloudinit_iso"),
		tfkit.NewResource[IgnitionResource]("ignition"),
	}
}
