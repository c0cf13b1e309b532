package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// domainNICsModel: the `network_interface` blocks and the address they report
// (ip_address; filled by lookAddresses and waitForIPs in addresses.go).
type domainNICsModel struct {
	Interfaces []nicModel   `tfsdk:"network_interface"`
	IPAddress  types.String `tfsdk:"ip_address"`
}

type nicModel struct {
	Network   types.String `tfsdk:"network"`
	Bridge    types.String `tfsdk:"bridge"`
	MAC       types.String `tfsdk:"mac"`
	Model     types.String `tfsdk:"model"`
	WaitForIP *waitModel   `tfsdk:"wait_for_ip"`
	Addresses types.List   `tfsdk:"addresses"`
	nicOptionsModel
}

type waitModel struct {
	Timeout types.String `tfsdk:"timeout"`
	Source  types.String `tfsdk:"source"`
}

var domainNICs = family{
	attributes: map[string]schema.Attribute{
		"ip_address": tfkit.ComputedString("The first IPv4 address of the domain's interfaces that is not loopback or link-local (empty when none is known)."),
	},
	blocks: map[string]schema.Block{
		"network_interface": schema.ListNestedBlock{
			MarkdownDescription: "Network interfaces, in order. Each is on exactly one of a libvirt `network`, a host `bridge` or a host link (`direct`). " +
				"On a running domain, interfaces added at the end or removed are hot-plugged (live, no restart; a removal waits up to 30 s " +
				"for the guest to let the NIC go), and `link_state` and `bandwidth` change live; other changes, and reordering, restart the domain.",
			NestedObject: schema.NestedBlockObject{
				Attributes: tfkit.WithAttributes(nicOptionAttributes(), map[string]schema.Attribute{
					"network": tfkit.OptionalString("Name of a libvirt network."), // exactly one source: validateNICOptions
					"bridge":  tfkit.OptionalString("Name of a bridge on the host."),
					"mac": schema.StringAttribute{
						MarkdownDescription: "MAC address, e.g. `52:54:00:12:34:56`. Default: chosen by libvirt and kept.",
						Optional:            true,
						Computed:            true,
						Validators:          []validator.String{stringvalidator.RegexMatches(validators.MACRegexp, "must be a MAC address such as 52:54:00:12:34:56")},
					},
					"model": schema.StringAttribute{
						MarkdownDescription: "NIC model: `virtio` (default), `e1000`, `e1000e`, `rtl8139`, ...",
						Optional:            true,
						Computed:            true,
						Default:             stringdefault.StaticString(domainxml.DefaultNIC),
					},
					"addresses": schema.ListAttribute{
						MarkdownDescription: "IP addresses of this interface (IPv4 first; loopback and link-local left out), from DHCP leases and the guest agent.",
						Computed:            true,
						ElementType:         types.StringType,
					},
				}),
				Blocks: map[string]schema.Block{
					"wait_for_ip": schema.SingleNestedBlock{
						MarkdownDescription: "Make create and update wait until this interface has an address (never a refresh).",
						Attributes: map[string]schema.Attribute{
							"timeout": tfkit.OptionalString("Go duration to wait, e.g. `2m`. Default `5m`. On timeout the apply fails naming the domain, "+
								"the MAC and the source; the domain stays in state.", validators.Duration()),
							"source": tfkit.OptionalString("Where to look: `lease` (the libvirt network's DHCP leases), `agent` (the QEMU guest agent) or `any` (default).", stringvalidator.OneOf("lease", "agent", "any")),
						},
					},
				},
			},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		for _, n := range m.Interfaces {
			nic := domainxml.Interface{Network: n.Network.ValueString(), Bridge: n.Bridge.ValueString(),
				MAC: strings.ToLower(n.MAC.ValueString()), Model: n.Model.ValueString()}
			nicOptionsSpec(n.nicOptionsModel, &nic)
			s.Interfaces = append(s.Interfaces, nic)
		}
	},
	// libvirt defines a domain on a network that does not exist (only its start fails):
	// refuse it before anything is made.
	resolve: func(ctx context.Context, c *libvirt.Client, s *domainxml.Spec) error {
		for i, n := range s.Interfaces {
			if n.Network == "" {
				continue
			}
			if _, err := c.ReadNetworkDHCP(ctx, n.Network); errors.Is(err, libvirt.ErrNotFound) {
				return fmt.Errorf("network_interface %d: network %q does not exist on %s: create it (libvirt_network) or name an existing network",
					i, n.Network, c.URI())
			} else if err != nil {
				return fmt.Errorf("network_interface %d: %w", i, err)
			}
		}
		return checkNICReferences(ctx, c, s.Interfaces, func(int) bool { return true })
	},
	// wait_for_ip, the MAC's case and the last known addresses come from the prior NIC.
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.Interfaces = nil
		for i, n := range s.Interfaces {
			nm := nicModel{Network: tfkit.StringOrNull(n.Network), Bridge: tfkit.StringOrNull(n.Bridge), MAC: types.StringValue(n.MAC),
				Model: types.StringValue(n.Model), Addresses: types.ListNull(types.StringType)}
			pn := priorNIC(prior, i, n.MAC)
			nm.nicOptionsModel = nicOptionsModelOf(n, pn)
			if pn != nil {
				nm.WaitForIP = pn.WaitForIP
				if tfkit.Known(pn.MAC) && strings.EqualFold(pn.MAC.ValueString(), n.MAC) {
					nm.MAC = pn.MAC // as the user wrote it (case)
				}
				if !pn.Addresses.IsUnknown() {
					nm.Addresses = pn.Addresses
				}
			}
			m.Interfaces = append(m.Interfaces, nm)
		}
	},
	validate: validateNICOptions,
	fillUnknowns: func(m *Model) {
		tfkit.NullIfUnknown(&m.IPAddress)
		for i := range m.Interfaces {
			tfkit.NullIfUnknown(&m.Interfaces[i].MAC)
			fillNICOptionUnknowns(&m.Interfaces[i])
			if m.Interfaces[i].Addresses.IsUnknown() {
				m.Interfaces[i].Addresses = types.ListNull(types.StringType)
			}
		}
	},
}

// priorNIC is the prior interface at index i when it is the same NIC (same MAC, or no
// MAC known yet).
func priorNIC(prior *Model, i int, mac string) *nicModel {
	for j := range prior.Interfaces {
		if tfkit.Known(prior.Interfaces[j].MAC) && strings.EqualFold(prior.Interfaces[j].MAC.ValueString(), mac) {
			return &prior.Interfaces[j]
		}
	}
	if i < len(prior.Interfaces) && !tfkit.Known(prior.Interfaces[i].MAC) {
		return &prior.Interfaces[i]
	}
	return nil
}
