// Package network holds libvirt_network and libvirt_dhcp_reservation.
package network

import (
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

var (
	_ resource.ResourceWithConfigure      = (*Resource)(nil)
	_ resource.ResourceWithImportState    = (*Resource)(nil)
	_ resource.ResourceWithValidateConfig = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan     = (*Resource)(nil)

	_ resource.ResourceWithConfigure   = (*DHCPReservationResource)(nil)
	_ resource.ResourceWithImportState = (*DHCPReservationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*DHCPReservationResource)(nil)
)

// Resources are libvirt_network and libvirt_dhcp_reservation, for the provider's registry.
func Resources() []func() resource.Resource {
	return []func() resource.Resource{
		tfkit.NewResource[Resource]("network"),
		tfkit.NewResource[DHCPReservationResource]("dhcp_reservation"),
	}
}
