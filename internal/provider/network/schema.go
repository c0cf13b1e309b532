package network

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A libvirt virtual network: a bridge on the host with, depending on `mode`, NAT or routed " +
			"forwarding, DHCP and DNS served by libvirt's dnsmasq.\n\n" +
			"DHCP host entries (`dhcp.hosts`), DNS host entries (`dns.hosts`), DNS records (`dns.srv`, `dns.txt`), " +
			"`port_groups` and `forward.interfaces` change **in place**: they are written " +
			"with network-update to the persistent definition and, when the network runs, to the live network — dnsmasq " +
			"re-reads them, the network is not restarted and guests keep their links. Every other change **replaces** the " +
			"network (the plan says so).\n\n" +
			"**A network in use.** Replacing or destroying a network that running domains use cuts them off: libvirt " +
			"removes the bridge their interfaces are plugged into, and the new network's bridge does not take them back. " +
			"Those guests lose connectivity until each domain is restarted (or its interface detached and attached again) " +
			"after the new network is up. The plan warns when this would happen, naming the running domains; " +
			"the apply is not refused.\n\n" +
			"What libvirt fills in by itself (the bridge name when none is given, the bridge's MAC, the uuid, STP and " +
			"forward delay, NAT port ranges) never shows as a change.",
		Attributes: tfkit.WithAttributes(networkExtraAttributes(), map[string]schema.Attribute{
			"host": tfkit.HostAttribute(""),
			"id":   tfkit.KeptString("The network's UUID."),
			"name": tfkit.RequiredReplace("Network name, unique on the host; also the import id. Changing it replaces the network.",
				stringvalidator.RegexMatches(validators.ObjectNameRegexp, "must start with a letter or digit and hold only letters, digits, '_', '.', '+' and '-'")),
			"mode": schema.StringAttribute{
				MarkdownDescription: "How guests reach the outside: `nat` (default: masqueraded behind the host's address), `route` " +
					"(routed, no NAT — the LAN needs a route back), `open` (routed, libvirt adds no firewall rules), `isolated` " +
					"(guests reach only each other and the host), `bridge` (guests join the existing host bridge named by " +
					"`bridge`, or with a `forward` block get macvtap links in bridge mode on its host links), `private`, `vepa`, " +
					"`passthrough` (macvtap links of those modes on the `forward` block's host links) and `hostdev` (SR-IOV VFs " +
					"of `forward.pf`); the last five have no addresses, DHCP or DNS of libvirt's own. Changing it replaces the network.",
				Optional:      true,
				Computed:      true,
				Default:       stringdefault.StaticString(hostxml.ModeNAT),
				PlanModifiers: tfkit.ReplaceString,
				Validators:    []validator.String{stringvalidator.OneOf(hostxml.Modes...)},
			},
			"bridge": schema.StringAttribute{
				MarkdownDescription: "Bridge device name (at most 15 characters). For `mode = \"bridge\"`, the existing host bridge " +
					"to join (required); otherwise the bridge libvirt creates — libvirt picks a free `virbrN` when omitted, and " +
					"that name is reported here. Changing it replaces the network.",
				Optional: true,
				Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(),
					stringplanmodifier.RequiresReplaceIfConfigured()},
			},
			"mtu": schema.Int64Attribute{
				MarkdownDescription: "MTU of the bridge, in bytes (68-65535). Omitted: libvirt's default (the bridge's, usually 1500). " +
					"Changing it replaces the network.",
				Optional:      true,
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
				Validators:    []validator.Int64{int64validator.Between(68, 65535)},
			},
			"domain": tfkit.OptionalReplace("DNS domain of the network: dnsmasq answers `<hostname>.<domain>` for its DHCP clients and DNS " +
				"hosts. Changing it replaces the network."),
			"addresses": schema.ListAttribute{
				MarkdownDescription: "The host's addresses on the network, as CIDRs, IPv4 and IPv6 (at most one DHCP subnet per " +
					"family). In network form (`10.17.0.0/24`, `fd00:17::/64`) the host takes the subnet's first address " +
					"(`10.17.0.1`, `fd00:17::1`), which guests use as gateway and DNS server; in host form (`10.17.0.254/24`) " +
					"it takes that address. Write them canonically (lower case, no leading zeros). Changing them replaces the network.",
				ElementType:   types.StringType,
				Optional:      true,
				PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
			},
			"autostart": tfkit.OptionalBool("Start the network when libvirtd starts. Default `false`. Changes in place.", false),
			"active":    tfkit.OptionalBool("Whether the network runs. Default `true`. Changes in place (stopping it cuts its guests off).", true),
		}),
		Blocks: map[string]schema.Block{
			"dhcp": schema.SingleNestedBlock{
				MarkdownDescription: "DHCP served by dnsmasq. Without this block the network has no DHCP server. Adding or " +
					"removing the block, `enabled` or `ranges` replaces the network; `hosts` change in place.",
				PlanModifiers: tfkit.ReplacedOnPresence("dhcp"),
				Attributes: map[string]schema.Attribute{
					"enabled": enabledAttr("Serve DHCP. Default `true`; `false` is the same as no block."),
					"ranges": schema.ListNestedAttribute{
						MarkdownDescription: "Address ranges handed out, inclusive; each lies inside one subnet of `addresses`, " +
							"IPv4 or IPv6 (libvirt serves DHCP on one subnet per family). Default (when the network is made; " +
							"omitting ranges later keeps what the network has): one range on the first IPv4 " +
							"subnet, from the address after the host's to the one before the broadcast address " +
							"(`10.17.0.2`-`10.17.0.254` for `10.17.0.0/24`); IPv6 subnets get no default range (guests " +
							"still configure themselves from router advertisements). A change from some ranges to others applies " +
							"**in place** (network-update: dnsmasq is restarted, the network is not); adding the first range or " +
							"removing the last replaces the network.",
						Optional: true,
						Computed: true,
						PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplaceIf(rangesReplace,
							"Adding the first DHCP range or removing the last replaces the network.",
							"Adding the first DHCP range or removing the last replaces the network.")},
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"start": schema.StringAttribute{MarkdownDescription: "First address of the range.", Required: true},
							"end":   schema.StringAttribute{MarkdownDescription: "Last address of the range.", Required: true},
						}},
					},
					"hosts": schema.SetNestedAttribute{
						MarkdownDescription: "Fixed IPv4 addresses for MACs, applied live without restarting the network. " +
							"Omitted (null): this resource leaves host entries alone, so `libvirt_dhcp_reservation` and " +
							"`libvirt_cluster_machine` can manage them. Set (even to `[]`): this resource owns the whole " +
							"list and removes entries it does not name. Do not mix both ways on one network.",
						Optional: true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"mac":      schema.StringAttribute{MarkdownDescription: "MAC address, lower case, e.g. `52:54:00:12:34:56`.", Required: true},
							"ip":       schema.StringAttribute{MarkdownDescription: "IPv4 address inside the DHCP subnet (not the host's own).", Required: true},
							"hostname": tfkit.OptionalString("Host name dnsmasq gives with the lease and resolves on the network."),
						}},
					},
				},
			},
			"dns": schema.SingleNestedBlock{
				MarkdownDescription: "DNS served by dnsmasq on the host's addresses. Without this block libvirt's default applies " +
					"(DNS on, nothing extra). Adding or removing the block, `enabled` or `forwarders` replaces the network; " +
					"`hosts` change in place.",
				PlanModifiers: tfkit.ReplacedOnPresence("dns"),
				Attributes: tfkit.WithAttributes(dnsRecordAttributes(), map[string]schema.Attribute{
					"enabled": enabledAttr("Serve DNS. Default `true`. `false` turns dnsmasq's DNS off (DHCP still works)."),
					"hosts": schema.SetNestedAttribute{
						MarkdownDescription: "Extra names dnsmasq answers, applied live without restarting the network. " +
							"Each ip and each hostname appears once. Omitted (null): entries are left alone; set (even to `[]`): " +
							"this resource owns the whole list.",
						Optional: true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"ip":        schema.StringAttribute{MarkdownDescription: "IPv4 or IPv6 address.", Required: true},
							"hostnames": schema.ListAttribute{MarkdownDescription: "Names for that address.", Required: true, ElementType: types.StringType},
						}},
					},
					"forwarders": schema.ListNestedAttribute{
						MarkdownDescription: "Upstream servers: queries (for `domain` only, when given) go to `addr`; a " +
							"forwarder with `domain` and no `addr` makes that domain local-only. Changing them replaces the network.",
						Optional:      true,
						PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()},
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"addr":   tfkit.OptionalString("Upstream server address."),
							"domain": tfkit.OptionalString("Domain this forwarder serves."),
						}},
					},
				}),
			},
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

// enabledAttr is a block's `enabled` switch: default true; a change replaces the network.
func enabledAttr(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Default: booldefault.StaticBool(true),
		PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()}}
}

// rangesReplace replaces the network unless it had ranges and keeps some (those change
// with network-update).
func rangesReplace(_ context.Context, req planmodifier.ListRequest, resp *listplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !tfkit.AllKnown(req.PlanValue, req.StateValue) || len(req.PlanValue.Elements()) == 0 || len(req.StateValue.Elements()) == 0
}
