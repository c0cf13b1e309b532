package provider

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// RefreshClusterMachineForTest runs the refresh (Read) path of libvirt_cluster_machine
// as a plan does, for a machine in state with these inputs, and returns the ip and
// addresses it found. Acceptance tests time it.
func RefreshClusterMachineForTest(ctx context.Context, c *libvirt.Client, uid, namespace, name, network, pool string) (string, []string, error) {
	r := &clusterMachineResource{ResourceBase: tfkit.ResourceBase{Client: c}}
	prior := &clusterMachineModel{
		ID: types.StringValue(uid), UID: types.StringValue(uid),
		Namespace: types.StringValue(namespace), Name: types.StringValue(name),
		Network: types.StringValue(network), DomainPool: types.StringValue(pool),
		Addresses: types.ListNull(types.StringType),
	}
	m, err := r.read(ctx, uid, prior)
	if err != nil {
		return "", nil, err
	}
	var addrs []string
	for _, v := range m.Addresses.Elements() {
		if s, ok := v.(types.String); ok {
			addrs = append(addrs, s.ValueString())
		}
	}
	return m.IP.ValueString(), addrs, nil
}
