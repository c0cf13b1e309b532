package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// specFromModel is the Spec a model asks for, without resolving volume paths. Unknown
// values read as empty, so that Classify sees them as changes.
func specFromModel(m *domainModel) domainxml.Spec {
	s := domainxml.Spec{
		Name:         m.Name.ValueString(),
		UUID:         m.UUID.ValueString(),
		Type:         m.Type.ValueString(),
		VCPU:         uint(m.VCPU.ValueInt64()),
		MaxVCPU:      uint(m.MaxVCPU.ValueInt64()),
		MemoryMiB:    uint64(m.MemoryMiB.ValueInt64()),
		MaxMemoryMiB: uint64(m.MaxMemoryMiB.ValueInt64()),
		Machine:      m.Machine.ValueString(),
		CPUMode:      m.CPUMode.ValueString(),
		CPUModel:     m.CPUModel.ValueString(),
		Firmware:     m.Firmware.ValueString(),
		QemuAgent:    m.QemuAgent.ValueBool(),
	}
	if m.Graphics != nil {
		s.Graphics = domainxml.Graphics{Type: m.Graphics.Type.ValueString(), Listen: m.Graphics.Listen.ValueString()}
	}
	for _, d := range m.Disks {
		s.Disks = append(s.Disks, domainxml.Disk{
			VolumeID:  d.VolumeID.ValueString(),
			Path:      d.Path.ValueString(),
			Device:    d.Device.ValueString(),
			Bus:       d.Bus.ValueString(),
			Target:    d.Target.ValueString(),
			Format:    d.Format.ValueString(),
			BootOrder: uint(d.BootOrder.ValueInt64()),
		})
	}
	if !m.CloudinitID.IsNull() {
		s.CloudInit = &domainxml.CloudInit{ID: m.CloudinitID.ValueString()}
	}
	if !m.IgnitionID.IsNull() {
		s.Ignition = &domainxml.Ignition{ID: m.IgnitionID.ValueString()}
	}
	for _, n := range m.Interfaces {
		s.Interfaces = append(s.Interfaces, domainxml.Interface{
			Network: n.Network.ValueString(),
			Bridge:  n.Bridge.ValueString(),
			MAC:     strings.ToLower(n.MAC.ValueString()),
			Model:   n.Model.ValueString(),
		})
	}
	return s
}

// resolve is specFromModel with every disk source resolved to a path and a format.
func (r *domainResource) resolve(ctx context.Context, m *domainModel) (domainxml.Spec, error) {
	s := specFromModel(m)
	for i := range s.Disks {
		d := &s.Disks[i]
		p, format, err := r.client.DiskSource(ctx, d.VolumeID, d.Path)
		if err != nil {
			return s, fmt.Errorf("disk %d: %w", i, err)
		}
		d.Path = p
		if d.Format == "" {
			d.Format = format
		}
	}
	// libvirt defines a domain on a network that does not exist (only its start fails):
	// refuse it before anything is made.
	for i, n := range s.Interfaces {
		if n.Network == "" {
			continue
		}
		if _, err := r.client.ReadNetworkDHCP(ctx, n.Network); errors.Is(err, libvirt.ErrNotFound) {
			return s, fmt.Errorf("network_interface %d: network %q does not exist on %s: create it (libvirt_network) or name an existing network",
				i, n.Network, r.client.URI())
		} else if err != nil {
			return s, fmt.Errorf("network_interface %d: %w", i, err)
		}
	}
	if s.CloudInit != nil {
		p, _, err := r.client.DiskSource(ctx, s.CloudInit.ID, "")
		if err != nil {
			return s, fmt.Errorf("cloudinit_id: %w", err)
		}
		s.CloudInit.Path = p
	}
	if s.Ignition != nil {
		p, _, err := r.client.DiskSource(ctx, s.Ignition.ID, "")
		if err != nil {
			return s, fmt.Errorf("ignition_id: %w", err)
		}
		s.Ignition.Path = p
	}
	return s, nil
}

// read builds the model from libvirt: the persistent definition for what the user
// controls, the live one for ports and the agent, one quick look for addresses. prior
// (state, or the plan after create/update) supplies what libvirt does not store.
func (r *domainResource) read(ctx context.Context, id string, prior *domainModel) (*domainModel, error) {
	st, err := r.client.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	p, err := domainxml.Parse(st.XML)
	if err != nil {
		return nil, err
	}
	var live *domainxml.Parsed
	if st.LiveXML != "" {
		if live, err = domainxml.Parse(st.LiveXML); err != nil {
			return nil, err
		}
	}
	m := fromSpec(p.Spec, prior)
	m.State = types.StringValue(st.State)
	m.Running = types.BoolValue(st.Active)
	m.Autostart = types.BoolValue(st.Autostart)
	m.ConsoleURL = types.StringValue("")
	if live != nil && live.GraphicsPort > 0 {
		m.ConsoleURL = types.StringValue(consoleURL(r.client.URI(), live.Spec.Graphics, live.GraphicsPort))
	}
	agent := st.Active && p.Spec.QemuAgent && live != nil && live.AgentConnected
	r.lookAddresses(ctx, id, m, st.Active, agent)
	return m, nil
}

func consoleURL(u *libvirt.URI, g domainxml.Graphics, port int) string {
	host := g.Listen
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if u != nil && u.Host != "" {
			host = u.Host
		}
	}
	return fmt.Sprintf("%s://%s", g.Type, net.JoinHostPort(host, fmt.Sprint(port)))
}

// fromSpec maps a parsed definition to the model, reconciled with prior so that what
// the user wrote stays as written (machine aliases, unset maxima, volume references).
func fromSpec(s domainxml.Spec, prior *domainModel) *domainModel {
	if prior == nil {
		prior = &domainModel{}
	}
	m := &domainModel{
		ID:           types.StringValue(s.UUID),
		Name:         types.StringValue(s.Name),
		UUID:         types.StringValue(s.UUID),
		Type:         types.StringValue(s.Type),
		VCPU:         types.Int64Value(int64(s.VCPU)),
		MemoryMiB:    types.Int64Value(int64(s.MemoryMiB)),
		MaxVCPU:      types.Int64Null(),
		MaxMemoryMiB: types.Int64Null(),
		Machine:      types.StringValue(s.Machine),
		CPUMode:      optString(s.CPUMode),
		CPUModel:     optString(s.CPUModel),
		Firmware:     types.StringValue(s.Firmware),
		QemuAgent:    types.BoolValue(s.QemuAgent),
		CloudinitID:  types.StringNull(),
		IgnitionID:   types.StringNull(),
		Graphics:     &graphicsModel{Type: types.StringValue(s.Graphics.Type), Listen: types.StringValue(s.Graphics.Listen)},
		Shutdown:     prior.Shutdown,
		UpdateMethod: prior.UpdateMethod,
		Timeouts:     prior.Timeouts,
	}
	if s.MaxVCPU != 0 || known(prior.MaxVCPU) {
		m.MaxVCPU = types.Int64Value(int64(s.EffectiveMaxVCPU()))
	}
	if s.MaxMemoryMiB != 0 || known(prior.MaxMemoryMiB) {
		m.MaxMemoryMiB = types.Int64Value(int64(s.EffectiveMaxMemoryMiB()))
	}
	if known(prior.UUID) && strings.EqualFold(prior.UUID.ValueString(), s.UUID) {
		m.UUID = prior.UUID // as the user wrote it (libvirt prints lower case)
	}
	if known(prior.Machine) && domainxml.SameMachine(prior.Machine.ValueString(), s.Machine) {
		m.Machine = prior.Machine
	}
	if s.Graphics.Type == domainxml.GraphicsNone {
		// Without a console there is nothing to listen on and libvirt stores no address:
		// keep what the configuration said, or (import) the schema's default, so that a
		// config that leaves listen out — a generated one too — plans clean.
		m.Graphics.Listen = types.StringValue(domainxml.DefaultListen)
		if prior.Graphics != nil && known(prior.Graphics.Listen) {
			m.Graphics.Listen = prior.Graphics.Listen
		}
	}
	if m.Shutdown == nil || m.Shutdown.Timeout.IsUnknown() {
		m.Shutdown = &shutdownModel{Timeout: types.StringValue(defaultShutdownTimeout)}
	}
	if !known(m.UpdateMethod) {
		m.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	}
	if m.Timeouts.IsUnknown() {
		m.Timeouts = prior.Timeouts
	}
	if s.CloudInit != nil {
		m.CloudinitID = types.StringValue(s.CloudInit.ID)
	}
	if s.Ignition != nil {
		m.IgnitionID = types.StringValue(s.Ignition.ID)
	}
	for _, d := range s.Disks {
		dm := diskModel{
			VolumeID:  optString(d.VolumeID),
			Path:      types.StringNull(),
			Device:    types.StringValue(d.Device),
			Bus:       types.StringValue(d.Bus),
			Target:    types.StringValue(d.Target),
			Format:    optString(d.Format),
			BootOrder: types.Int64Null(),
		}
		if d.VolumeID == "" {
			dm.Path = types.StringValue(d.Path)
		}
		if d.BootOrder > 0 {
			dm.BootOrder = types.Int64Value(int64(d.BootOrder))
		}
		m.Disks = append(m.Disks, dm)
	}
	for i, n := range s.Interfaces {
		nm := nicModel{
			Network:   optString(n.Network),
			Bridge:    optString(n.Bridge),
			MAC:       types.StringValue(n.MAC),
			Model:     types.StringValue(n.Model),
			Addresses: types.ListNull(types.StringType),
		}
		if pn := priorNIC(prior, i, n.MAC); pn != nil {
			nm.WaitForIP = pn.WaitForIP
			if known(pn.MAC) && strings.EqualFold(pn.MAC.ValueString(), n.MAC) {
				nm.MAC = pn.MAC // as the user wrote it (case)
			}
			if !pn.Addresses.IsUnknown() {
				nm.Addresses = pn.Addresses
			}
		}
		m.Interfaces = append(m.Interfaces, nm)
	}
	return m
}

// priorNIC is the prior interface at index i when it is the same NIC (same MAC, or no
// MAC known yet).
func priorNIC(prior *domainModel, i int, mac string) *nicModel {
	for j := range prior.Interfaces {
		if known(prior.Interfaces[j].MAC) && strings.EqualFold(prior.Interfaces[j].MAC.ValueString(), mac) {
			return &prior.Interfaces[j]
		}
	}
	if i < len(prior.Interfaces) && !known(prior.Interfaces[i].MAC) {
		return &prior.Interfaces[i]
	}
	return nil
}

// fillUnknowns makes a plan storable as state when the domain could not be read back.
func fillUnknowns(m *domainModel) {
	str := func(v *types.String) {
		if v.IsUnknown() {
			*v = types.StringNull()
		}
	}
	for _, v := range []*types.String{&m.ID, &m.UUID, &m.Type, &m.Machine, &m.CPUMode, &m.CPUModel, &m.State, &m.IPAddress, &m.ConsoleURL, &m.UpdateMethod} {
		str(v)
	}
	for i := range m.Disks {
		for _, v := range []*types.String{&m.Disks[i].Bus, &m.Disks[i].Target, &m.Disks[i].Format} {
			str(v)
		}
	}
	for i := range m.Interfaces {
		str(&m.Interfaces[i].MAC)
		if m.Interfaces[i].Addresses.IsUnknown() {
			m.Interfaces[i].Addresses = types.ListNull(types.StringType)
		}
	}
}

// sortAddresses orders addresses IPv4 first, then as text; duplicates dropped.
func sortAddresses(in []string) []string {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b string) int {
		a4, b4 := strings.Contains(a, "."), strings.Contains(b, ".")
		if a4 != b4 {
			if a4 {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}
