package provider

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/domain"
)

// RefreshDomainForTest runs the resource's refresh (Read) path against a domain, as a
// plan does, and returns the ip_address it found. Acceptance tests time it. It goes
// through domain.ReadIPAddress (the package's exported face), so it stays here with the
// acceptance tests.
func RefreshDomainForTest(ctx context.Context, c *libvirt.Client, id string) (string, error) {
	return domain.ReadIPAddress(ctx, c, id)
}
