package clustermachine

import (
	"context"
	"regexp"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

var nonBlank = regexp.MustCompile(`\S`)

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	required := func(desc string) schema.StringAttribute {
		return tfkit.RequiredReplace(desc+" Changing it replaces the machine.", stringvalidator.RegexMatches(nonBlank, "must not be empty"))
	}
	computed := tfkit.KeptString
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Cluster API style machine: a qcow2 overlay on a base image, a NoCloud seed (`instance-id` = `uid`, " +
			"`local-hostname` = `name`, `user-data` = `user_data`), a DHCP reservation and a domain, all named by fixed rules " +
			"(the `cluster_machine_name` and `mac_from_name` functions give the same names). Create makes them in that order and " +
			"waits for the machine's DHCP lease; when a step fails, what this create made is removed again and the error names " +
			"the step. Pieces of a machine of the same namespace and name left on the host without a domain (e.g. after the " +
			"domain was removed outside Terraform) are removed by create, with a warning. `vcpu` / `memory_mib` growth within " +
			"the headroom written at create (2x) applies live; other sizing changes restart the machine gracefully (the plan's " +
			"`update_method` says which). `disk_gib` grows online; it cannot shrink.",
		Attributes: map[string]schema.Attribute{
			"host":      tfkit.HostAttribute(""),
			"id":        computed("The machine's `uid`."),
			"namespace": required("Cluster API namespace: the first part of the domain name."),
			"name":      required("Machine name: the second part of the domain name, and the guest's hostname (`local-hostname`)."),
			"uid": schema.StringAttribute{
				MarkdownDescription: "Machine UID (lower-case UUID): the domain UUID and the seed's `instance-id`. Default: a random " +
					"UUID chosen at create. Setting a different one replaces the machine.",
				Optional: true,
				Computed: true,
				Validators: []validator.String{
					stringvalidator.RegexMatches(validators.UUIDRegexp, "must be a UUID such as 2f0e3b1c-5d6a-4b8e-9f00-1a2b3c4d5e6f"),
					validators.LowerCase("uid"),
				},
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplaceIfConfigured()},
			},
			"network":     required("libvirt network the machine's NIC is on and its address is reserved in."),
			"base_pool":   required("Storage pool holding `image`."),
			"domain_pool": required("Storage pool for the machine's volumes (`<domain>.qcow2` and `cloudinit-<domain>.iso`)."),
			"image":       required("Name of the base volume in `base_pool` the root disk is a copy-on-write overlay of."),
			"vcpu": schema.Int64Attribute{
				MarkdownDescription: "Virtual CPUs. Default `1`. Growing it up to `max_vcpu` on a running machine is live; otherwise " +
					"the machine restarts.",
				Optional:   true,
				Computed:   true,
				Default:    int64default.StaticInt64(cmDefaultVCPU),
				Validators: []validator.Int64{int64validator.Between(1, 2048)},
			},
			"memory_mib": schema.Int64Attribute{
				MarkdownDescription: "Memory in MiB. Default `1024`. Changes up to `max_memory_mib` on a running machine are live " +
					"(balloon); otherwise the machine restarts.",
				Optional:   true,
				Computed:   true,
				Default:    int64default.StaticInt64(cmDefaultMemoryMiB),
				Validators: []validator.Int64{int64validator.AtLeast(16)},
			},
			"disk_gib": schema.Int64Attribute{
				MarkdownDescription: "Root disk size in GiB (at least the image's size). Default `20`. Growing it is done in place (online " +
					"through the running domain); shrinking is refused at plan time.",
				Optional:   true,
				Computed:   true,
				Default:    int64default.StaticInt64(cmDefaultDiskGiB),
				Validators: []validator.Int64{int64validator.Between(1, 65536)},
			},
			"user_data": tfkit.SecretReplace("Bootstrap data, written to the seed as `user-data`. Changing it replaces the machine."),
			"running":   tfkit.OptionalBool("Whether the machine runs. Default `true`. Autostart follows it.", true),
			"lease_timeout": schema.StringAttribute{
				MarkdownDescription: "How long create (and an update that starts the machine) waits for its DHCP lease, as a Go " +
					"duration. Default `5m`. On timeout the apply fails and the machine stays in state (tainted).",
				Optional:   true,
				Computed:   true,
				Default:    stringdefault.StaticString(cmDefaultLeaseTimeout),
				Validators: []validator.String{validators.Duration()},
			},
			"provider_id": computed("Cluster API provider id: `libvirt://<uid>`."),
			"domain_name": computed("The domain's name: `<namespace>-<name>-<hash>`, a DNS label."),
			"mac":         computed("The NIC's MAC address, derived from the domain name (prefix `52:54:00`)."),
			"ip":          computed("The address reserved for the machine in `network`."),
			"addresses": schema.ListAttribute{
				MarkdownDescription: "Addresses of the machine's DHCP leases in `network` (empty while it is stopped).",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"max_vcpu":       tfkit.ComputedInt("vCPU ceiling of the domain: `vcpu` x 2 when written; growth up to it is live."),
			"max_memory_mib": tfkit.ComputedInt("Memory ceiling of the domain in MiB: `memory_mib` x 2 when written; changes up to it are live."),
			"update_method":  tfkit.ComputedString("How the pending (in a plan) or last update reaches the domain: `none`, `live`, `restart` or `definition` (not running)."),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}
