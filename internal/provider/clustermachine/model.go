package clustermachine

import (
	"context"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// machinePartsOf names the parts of the machine a model describes; the domain name and
// MAC in state win over the derived ones (an imported machine's).
func machinePartsOf(m *Model) workflow.MachineParts {
	p := workflow.NewMachineParts(m.Namespace.ValueString(), m.Name.ValueString(), m.UID.ValueString(), m.Network.ValueString(), m.DomainPool.ValueString())
	if tfkit.Known(m.DomainName) && m.DomainName.ValueString() != "" {
		p.Domain = m.DomainName.ValueString()
	}
	if tfkit.Known(m.MAC) && m.MAC.ValueString() != "" {
		p.MAC = m.MAC.ValueString()
	}
	return p
}

// machineRequest is the machine a plan asks for.
func machineRequest(ctx context.Context, m *Model) workflow.MachineRequest {
	return workflow.MachineRequest{
		Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString(), UID: m.UID.ValueString(),
		Network: m.Network.ValueString(), BasePool: m.BasePool.ValueString(), Image: m.Image.ValueString(),
		DomainPool: m.DomainPool.ValueString(), VCPU: uint(m.VCPU.ValueInt64()), MemoryMiB: uint64(m.MemoryMiB.ValueInt64()),
		DiskGiB: uint64(m.DiskGiB.ValueInt64()), UserData: m.UserData.ValueString(), Running: m.Running.ValueBool(),
		Log: machineLog(ctx),
	}
}

func leaseTimeout(m *Model) time.Duration {
	s := cmDefaultLeaseTimeout
	if tfkit.Known(m.LeaseTimeout) {
		s = m.LeaseTimeout.ValueString()
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 5 * time.Minute
	}
	return d
}

// fillMachineComputed sets computed values that only depend on inputs.
func fillMachineComputed(m *Model) {
	p := machinePartsOf(m)
	if !tfkit.Known(m.ID) {
		m.ID = m.UID
	}
	m.ProviderID = types.StringValue(capi.ProviderID(m.UID.ValueString()))
	m.DomainName = types.StringValue(p.Domain)
	m.MAC = types.StringValue(p.MAC)
	if !tfkit.Known(m.MaxVCPU) {
		m.MaxVCPU = types.Int64Value(m.VCPU.ValueInt64() * cmHeadroom)
	}
	if !tfkit.Known(m.MaxMemoryMiB) {
		m.MaxMemoryMiB = types.Int64Value(m.MemoryMiB.ValueInt64() * cmHeadroom)
	}
	if !tfkit.Known(m.UpdateMethod) {
		m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	}
}

// read builds the model from the host (workflow.ReadMachine: the domain, the root
// volume, the reservation, one look at the leases; it never waits). prior supplies what
// the host does not keep; an imported machine (prior without namespace) is filled from
// the domain's metadata and its seed.
func (r *Resource) read(ctx context.Context, id string, prior *Model) (*Model, error) {
	var place *workflow.MachinePlace
	if tfkit.Known(prior.Namespace) && prior.Namespace.ValueString() != "" {
		place = &workflow.MachinePlace{Network: prior.Network.ValueString(), Pool: prior.DomainPool.ValueString()}
	}
	st, err := workflow.ReadMachine(ctx, r.Client, id, place, machineLog(ctx))
	if err != nil {
		return nil, err
	}
	m := *prior
	if meta := st.Meta; meta != nil {
		m.Namespace, m.Name = types.StringValue(meta.Namespace), types.StringValue(meta.Name)
		m.Network, m.BasePool = types.StringValue(meta.Network), types.StringValue(meta.BasePool)
		m.DomainPool, m.Image = types.StringValue(meta.DomainPool), types.StringValue(meta.Image)
		m.LeaseTimeout = types.StringValue(cmDefaultLeaseTimeout)
		m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
		m.UserData = types.StringPointerValue(st.UserData)
	}
	m.UID, m.ID = types.StringValue(st.UID), types.StringValue(st.UID)
	m.ProviderID = types.StringValue(capi.ProviderID(st.UID))
	m.DomainName = types.StringValue(st.Domain)
	m.MAC = types.StringValue(st.MAC)
	m.VCPU = types.Int64Value(int64(st.Spec.VCPU))
	m.MaxVCPU = types.Int64Value(int64(st.Spec.EffectiveMaxVCPU()))
	m.MemoryMiB = types.Int64Value(int64(domainxml.MiBOf(st.Spec.MemoryKiB)))
	m.MaxMemoryMiB = types.Int64Value(int64(domainxml.MiBOf(st.Spec.EffectiveMaxMemoryKiB())))
	m.Running = types.BoolValue(st.Active)
	if !tfkit.Known(m.UpdateMethod) {
		m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	}
	if !tfkit.Known(m.LeaseTimeout) {
		m.LeaseTimeout = types.StringValue(cmDefaultLeaseTimeout)
	}
	if st.HasDisk {
		m.DiskGiB = types.Int64Value(int64(st.DiskBytes >> 30))
	}
	m.IP = types.StringValue(st.IP)
	switch {
	case !st.Active:
		m.Addresses = tfkit.StringList(nil)
	case len(st.Addresses) == 0 && tfkit.Known(prior.Addresses):
		m.Addresses = prior.Addresses // a lease may be renewing: keep the last known
	default:
		m.Addresses = tfkit.StringList(st.Addresses)
	}
	return &m, nil
}
