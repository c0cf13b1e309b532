package host

import (
	"context"
	"maps"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

type DataSource struct {
	tfkit.DataSourceBase
}

type Model struct {
	tfkit.DataTimeouts
	tfkit.OnHost
	hostSizeModel
	ID                types.String `tfsdk:"id"`
	URI               types.String `tfsdk:"uri"`
	Hostname          types.String `tfsdk:"hostname"`
	Arch              types.String `tfsdk:"arch"`
	HypervisorType    types.String `tfsdk:"hypervisor_type"`
	LibvirtVersion    types.String `tfsdk:"libvirt_version"`
	HypervisorVersion types.String `tfsdk:"hypervisor_version"`
	DomainTypes       []string     `tfsdk:"domain_types"`
	DefaultDomainType types.String `tfsdk:"default_domain_type"`
	FirmwareTypes     []string     `tfsdk:"firmware_types"`
	Firmware          []string     `tfsdk:"firmware"`
}

func (d *DataSource) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"id":                  tfkit.DataString("The connection URI of the host read (`host`)."),
		"uri":                 tfkit.DataString("The libvirt URI the provider is connected to."),
		"hostname":            tfkit.DataString("The host's name as libvirt reports it."),
		"arch":                tfkit.DataString("The host CPU architecture, e.g. `x86_64`."),
		"hypervisor_type":     tfkit.DataString("The hypervisor driver, e.g. `QEMU`."),
		"libvirt_version":     tfkit.DataString("Version of the libvirt daemon, e.g. `9.0.0`."),
		"hypervisor_version":  tfkit.DataString("Version of the hypervisor, e.g. `7.2.0` for QEMU."),
		"domain_types":        tfkit.DataStrings("Domain types offered for hvm guests of the host architecture, e.g. `[\"kvm\", \"qemu\"]`."),
		"default_domain_type": tfkit.DataString("What `libvirt_domain.type` defaults to here: `kvm` when offered, else `qemu` (software emulation)."),
		"firmware_types":      tfkit.DataStrings("Firmware auto-selection values offered for the default domain type, e.g. `[\"bios\", \"efi\"]`."),
		"firmware":            tfkit.DataStrings("Firmware loader images the host offers (paths on the host)."),
	}
	maps.Copy(attrs, hostSizeAttributes())
	resp.Schema = tfkit.DataSchema(ctx, "What the libvirt host offers: architecture, domain types, versions and firmware, memory, "+
		"CPUs, NUMA cells and huge pages. Use it to choose `type` or `firmware` for domains, or to check in a `precondition` "+
		"that a domain fits before anything is made.", attrs)
}

func (d *DataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	uri := d.Client.URI().String()
	tfkit.Lookup(ctx, req, resp, time.Minute,
		func(*Model) string { return "libvirt host " + uri },
		func(ctx context.Context, m *Model, _ *diag.Diagnostics) (*Model, error) {
			info, err := d.Client.HostInfo(ctx)
			if err != nil {
				return nil, err
			}
			mem, err := d.Client.HostMemory(ctx) // not cached: free memory changes
			if err != nil {
				return nil, err
			}
			m.fromHostInfo(uri, info)
			m.fromHost(info, mem)
			return m, nil
		})
}

func (m *Model) fromHostInfo(uri string, info *libvirt.HostInfo) {
	m.ID = types.StringValue(uri)
	m.URI = types.StringValue(uri)
	m.Hostname = types.StringValue(info.Hostname)
	m.Arch = types.StringValue(info.Arch)
	m.HypervisorType = types.StringValue(info.HypervisorType)
	m.LibvirtVersion = types.StringValue(info.LibvirtVersion)
	m.HypervisorVersion = types.StringValue(info.HypervisorVersion)
	m.DomainTypes = nonNil(info.DomainTypes)
	m.DefaultDomainType = types.StringValue(info.DefaultDomainType)
	m.FirmwareTypes = nonNil(info.FirmwareTypes)
	m.Firmware = nonNil(info.FirmwarePaths)
}

// nonNil makes an empty list known-empty rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
