package domain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// DataSource is the data source libvirt_domain.
type DataSource struct {
	tfkit.DataSourceBase
}

// DataModel is data.libvirt_domain.
type DataModel struct {
	tfkit.DataTimeouts
	tfkit.OnHost
	ID           types.String         `tfsdk:"id"`
	Name         types.String         `tfsdk:"name"`
	UUID         types.String         `tfsdk:"uuid"`
	Type         types.String         `tfsdk:"type"`
	State        types.String         `tfsdk:"state"`
	Running      types.Bool           `tfsdk:"running"`
	Autostart    types.Bool           `tfsdk:"autostart"`
	VCPU         types.Int64          `tfsdk:"vcpu"`
	MaxVCPU      types.Int64          `tfsdk:"max_vcpu"`
	MemoryMiB    types.Int64          `tfsdk:"memory_mib"`
	MaxMemoryMiB types.Int64          `tfsdk:"max_memory_mib"`
	MemoryKiB    types.Int64          `tfsdk:"memory_kib"`
	MaxMemoryKiB types.Int64          `tfsdk:"max_memory_kib"`
	Firmware     types.String         `tfsdk:"firmware"`
	IPAddress    types.String         `tfsdk:"ip_address"`
	ConsoleURL   types.String         `tfsdk:"console_url"`
	Interfaces   []domainDataNICModel `tfsdk:"network_interface"`
}

type domainDataNICModel struct {
	MAC       types.String `tfsdk:"mac"`
	Network   types.String `tfsdk:"network"`
	Bridge    types.String `tfsdk:"bridge"`
	Model     types.String `tfsdk:"model"`
	Addresses types.List   `tfsdk:"addresses"`
}

func (d *DataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = tfkit.DataSchema(ctx, "An existing libvirt domain, by name or UUID: its state, sizes, addresses and console. Addresses come "+
		"from one quick look at DHCP leases and the guest agent (one-second deadline); reading never waits for a guest.", map[string]schema.Attribute{
		"id":             tfkit.DataString("The domain's UUID."),
		"name":           tfkit.DataKey("Domain name. Exactly one of `name` and `uuid`."),
		"uuid":           tfkit.DataKey("Domain UUID. Exactly one of `name` and `uuid`."),
		"type":           tfkit.DataString("`kvm` or `qemu`."),
		"state":          tfkit.DataString("`running`, `paused`, `shutoff`, ..."),
		"running":        tfkit.DataBool("Whether the domain runs (a QEMU process exists)."),
		"autostart":      tfkit.DataBool("Whether libvirtd starts it at boot."),
		"vcpu":           tfkit.DataInt("Current vCPU count (persistent definition)."),
		"max_vcpu":       tfkit.DataInt("Maximum vCPU count (hot-add ceiling)."),
		"memory_mib":     tfkit.DataInt("Current memory in MiB (persistent definition), rounded down to a whole MiB: `memory_kib` is exact."),
		"max_memory_mib": tfkit.DataInt("Maximum memory in MiB, rounded down to a whole MiB: `max_memory_kib` is exact."),
		"memory_kib":     tfkit.DataInt("Current memory in KiB (persistent definition), exactly as libvirt counts it."),
		"max_memory_kib": tfkit.DataInt("Maximum memory in KiB, exactly."),
		"firmware":       tfkit.DataString("`bios` or `uefi`."),
		"ip_address":     tfkit.DataString("First IPv4 address that is not loopback or link-local (empty when none is known)."),
		"console_url":    tfkit.DataString("`vnc://host:port` or `spice://host:port` of the running domain (empty otherwise)."),
		"network_interface": schema.ListNestedAttribute{
			MarkdownDescription: "The domain's network interfaces on libvirt networks or bridges.",
			Computed:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"mac":       tfkit.DataString("MAC address."),
				"network":   tfkit.DataString("libvirt network (empty for a bridge)."),
				"bridge":    tfkit.DataString("Host bridge (empty for a network)."),
				"model":     tfkit.DataString("NIC model."),
				"addresses": tfkit.DataStrings("IP addresses (IPv4 first)."),
			}},
		},
	})
}

func (d *DataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("name"), path.MatchRoot("uuid"))}
}

func (d *DataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	tfkit.Lookup(ctx, req, resp, time.Minute,
		func(m *DataModel) string { return "libvirt domain " + tfkit.NameOr(m.Name, m.UUID.ValueString()) },
		func(ctx context.Context, m *DataModel, _ *diag.Diagnostics) (*DataModel, error) {
			id := m.Name.ValueString()
			if id == "" {
				id = m.UUID.ValueString()
			}
			got, err := (&Resource{ResourceBase: tfkit.ResourceBase{Client: d.Client}}).read(ctx, id, nil, 0)
			if errors.Is(err, libvirt.ErrNotFound) {
				return nil, fmt.Errorf("no domain named or with UUID %s exists on %s", id, d.Client.URI())
			}
			if err != nil {
				return nil, err
			}
			m.ID, m.Name, m.UUID, m.Type = got.ID, got.Name, got.UUID, got.Type
			m.State, m.Running, m.Autostart = got.State, got.Running, got.Autostart
			m.VCPU, m.Firmware, m.MaxVCPU = got.VCPU, got.Firmware, got.MaxVCPU
			if m.MaxVCPU.IsNull() {
				m.MaxVCPU = got.VCPU
			}
			mem := kibOf(got.MemoryMiB, got.MemoryKiB)
			maxMem := max(kibOf(got.MaxMemoryMiB, got.MaxMemoryKiB), mem)
			m.MemoryKiB, m.MaxMemoryKiB = types.Int64Value(int64(mem)), types.Int64Value(int64(maxMem))
			m.MemoryMiB = types.Int64Value(int64(domainxml.MiBOf(mem)))
			m.MaxMemoryMiB = types.Int64Value(int64(domainxml.MiBOf(maxMem)))
			m.IPAddress, m.ConsoleURL = got.IPAddress, got.ConsoleURL
			m.Interfaces = []domainDataNICModel{}
			for _, n := range got.Interfaces {
				m.Interfaces = append(m.Interfaces, domainDataNICModel{
					MAC: n.MAC, Network: stringOrEmpty(n.Network), Bridge: stringOrEmpty(n.Bridge), Model: n.Model, Addresses: n.Addresses,
				})
			}
			return m, nil
		})
}

func stringOrEmpty(s types.String) types.String {
	if s.IsNull() {
		return types.StringValue("")
	}
	return s
}
