package provider

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// RefreshDomainForTest runs the resource's refresh (Read) path against a domain, as a
// plan does, and returns the ip_address it found. Acceptance tests time it.
func RefreshDomainForTest(ctx context.Context, c *libvirt.Client, id string) (string, error) {
	r := &domainResource{resourceBase: resourceBase{client: c}}
	m, err := r.read(ctx, id, nil, 0)
	if err != nil {
		return "", err
	}
	return m.IPAddress.ValueString(), nil
}
