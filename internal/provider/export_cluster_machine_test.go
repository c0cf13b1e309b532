package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/clustermachine"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// RefreshClusterMachineForTest runs the refresh (Read) path of libvirt_cluster_machine
// as a plan does, for a machine in state with these inputs, and returns the ip and
// addresses it found. Acceptance tests time it. It goes through the resource's Read
// (the package's exported face), so it stays here with the acceptance tests.
func RefreshClusterMachineForTest(ctx context.Context, c *libvirt.Client, uid, namespace, name, network, pool string) (string, []string, error) {
	r := &clustermachine.Resource{ResourceBase: tfkit.ResourceBase{Client: c}}
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	state := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)}
	for attr, v := range map[string]string{"id": uid, "uid": uid, "namespace": namespace, "name": name, "network": network, "domain_pool": pool} {
		if d := state.SetAttribute(ctx, path.Root(attr), v); d.HasError() {
			return "", nil, fmt.Errorf("state %s: %v", attr, d)
		}
	}
	resp := &resource.ReadResponse{State: state}
	r.Read(ctx, resource.ReadRequest{State: state}, resp)
	if resp.Diagnostics.HasError() {
		return "", nil, fmt.Errorf("read: %v", resp.Diagnostics)
	}
	if resp.State.Raw.IsNull() {
		return "", nil, errors.New("read removed the machine from state")
	}
	var ip types.String
	var addrs []string
	if d := resp.State.GetAttribute(ctx, path.Root("ip"), &ip); d.HasError() {
		return "", nil, fmt.Errorf("ip: %v", d)
	}
	if d := resp.State.GetAttribute(ctx, path.Root("addresses"), &addrs); d.HasError() {
		return "", nil, fmt.Errorf("addresses: %v", d)
	}
	return ip.ValueString(), addrs, nil
}
