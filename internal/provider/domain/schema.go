package domain

import (
	"context"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs, blocks := withFamilies(domainCoreAttributes(), map[string]schema.Block{
		"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
	})
	maps.Copy(attrs, migrateAttributes()) // host, migrate, migration
	resp.Schema = schema.Schema{
		// 1: v3's groups (groups.go); state of version 0 (v2) is upgraded by upgrade.go.
		Version: 1,
		MarkdownDescription: "A libvirt domain (virtual machine). Defaults are what users expect of a cloud VM: virtio disks and NICs, " +
			"a serial console, the QEMU guest-agent channel and VNC on 127.0.0.1. `vcpu` and `memory_mib` changes within the " +
			"`max_vcpu` / `max_memory_mib` headroom of a running domain apply live, without a restart, as do disk `iotune`, a cdrom's " +
			"source, a NIC's `link_state` and `bandwidth`, vCPU and emulator pins added or changed, disks, NICs and hostdevs added at the end or removed, and virtiofs shares " +
			"removed (hot-plug); other changes rewrite " +
			"the definition and, when the domain runs, restart it gracefully. The plan says which in `update_method` (and a warning " +
			"names a restart). Values libvirt fills in or rewrites (MACs, machine type expansion, CPU model, device addresses, " +
			"vnet names, loader and nvram paths) never show as drift. A refresh never waits for addresses: it takes one quick " +
			"look at DHCP leases (and the guest agent, with a one-second deadline) and keeps the last known addresses otherwise.",
		Attributes: attrs,
		Blocks:     blocks,
	}
}

// domainCoreAttributes are libvirt_domain's own attributes; each family adds its own
// (family.go).
func domainCoreAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			MarkdownDescription: "The domain's UUID.",
			Computed:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"name": tfkit.DomainNameAttribute("Domain name, unique on the host. Changing it replaces the domain."),
		"uuid": schema.StringAttribute{
			MarkdownDescription: "Domain UUID. Default: chosen by libvirt. Setting a different one replaces the domain.",
			Optional:            true,
			Computed:            true,
			Validators:          []validator.String{stringvalidator.RegexMatches(validators.UUIDRegexp, "must be a UUID such as 2f0e3b1c-5d6a-4b8e-9f00-1a2b3c4d5e6f")},
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown(), uuidReplace{}},
		},
		"type": schema.StringAttribute{
			MarkdownDescription: "Domain type: `kvm` (hardware virtualisation), `qemu` (software emulation) or `test` (libvirt's test " +
				"driver, `test:///default`: nothing runs). Default: `kvm` when the host's capabilities offer it, else `qemu`, else " +
				"`test` (see the `libvirt_host` data source).",
			Optional:      true,
			Computed:      true,
			Validators:    []validator.String{stringvalidator.OneOf("kvm", "qemu", "test")},
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"autostart": tfkit.OptionalBool("Start the domain when libvirtd starts. Default `false`.", false),
		"running": tfkit.OptionalBool("Whether the domain should be running. Default `true`. A domain stopped outside Terraform shows "+
			"as a change back to `true`.", true),
		"shutdown": schema.SingleNestedAttribute{
			MarkdownDescription: "How the domain is stopped (on destroy, `running = false` and restarts): a graceful shutdown request " +
				"(guest agent or ACPI power button), then a forced power-off after `timeout`. Default `{ timeout = \"1m\" }`.",
			Optional: true,
			Computed: true,
			Default: objectdefault.StaticValue(types.ObjectValueMust(shutdownAttrTypes, map[string]attr.Value{
				"timeout": types.StringValue(defaultShutdownTimeout)})),
			Attributes: map[string]schema.Attribute{
				"timeout": schema.StringAttribute{
					MarkdownDescription: "Go duration to wait for the guest to stop before forcing it off, e.g. `30s`. `0s` forces at once. Default `1m`.",
					Optional:            true,
					Computed:            true,
					Default:             stringdefault.StaticString(defaultShutdownTimeout),
					Validators:          []validator.String{validators.Duration()},
				},
			},
		},
		"state":       tfkit.ComputedString("The domain's state as libvirt reports it: `running`, `paused`, `shutoff`, `crashed`, ..."),
		"console_url": tfkit.ComputedString("URL of the graphical console of the running domain, e.g. `vnc://127.0.0.1:5900` (empty when not running or no graphics)."),
		"update_method": tfkit.ComputedString("How the last update was applied, and in a plan how the pending one will be: `none` (nothing in the " +
			"domain changes), `live` (vcpu/memory within headroom, applied live and persistently, no restart), `restart` " +
			"(definition rewritten, running domain restarted gracefully), `definition` (definition rewritten only: the domain is not " +
			"running, or `restart_on_update = false` left the restart to you) or `migrate` (the domain moves to its new `host`, see " +
			"`migrate`; the rest of the change then applies there)."),
		"restart_on_update": tfkit.OptionalBool("Whether a change that the running domain cannot take live restarts it (gracefully, see "+
			"`shutdown`). `false`: such a change only rewrites the definition; the domain keeps running as it is, `update_method` "+
			"says `definition`, and `pending_restart` is true until the domain is next stopped and started. Default `true`.", true),
		"pending_restart": tfkit.ComputedBool("True while the running domain still runs an older definition because `restart_on_update = " +
			"false` left a restart to you; false again once it has been stopped and started (by Terraform or outside it)."),
	}
}

// uuidReplace replaces the domain when the configuration names a UUID other than its own.
type uuidReplace struct{}

func (uuidReplace) Description(context.Context) string {
	return "a different uuid replaces the domain"
}

func (v uuidReplace) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (uuidReplace) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() ||
		req.StateValue.IsNull() || req.StateValue.IsUnknown() {
		return
	}
	// UUIDs compare without regard to case: libvirt prints them in lower case.
	if !strings.EqualFold(req.ConfigValue.ValueString(), req.StateValue.ValueString()) {
		resp.RequiresReplace = true
	}
}
