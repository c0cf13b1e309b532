package clone

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A clone of an existing domain: a new domain with the source's definition (CPU, machine, firmware, " +
			"devices, networks), a new UUID, new MACs (derived from the clone's name, never the source's), its own disks " +
			"`<name>-<target>.qcow2` and, for a UEFI source, its own nvram varstore (a copy of the source's when it has one, " +
			"else a fresh one from the firmware's template). Cdroms of the source, its cloud-init seed included, and an " +
			"Ignition config are not carried over: give the clone a seed of its own with `cloudinit_id`. So that the clone " +
			"and its source can run side by side, libvirt picks the clone's graphics ports, vsock CID and channel and " +
			"graphics socket paths anew; a character device listening on a TCP port becomes a pty; the unix sockets a serial " +
			"port or console listens on and the files it writes get the clone's name in front of their file names. Host " +
			"devices (hostdevs, a passed-through TPM) are copied as they are: only one of the two can run with them at a time.\n\n" +
			"**How the disks are copied.** A *running* (or paused) source is cloned without stopping or pausing it: each disk " +
			"is copied with libvirt's block copy (QEMU's mirror), cancelled once it has caught up, which leaves a " +
			"point-in-time, crash-consistent copy (as if the power had been pulled at that instant; quiesce applications " +
			"first when that matters). Only the varstore of a running UEFI source is copied with the source paused, for the " +
			"few milliseconds of the copy; it is always resumed, also when the copy fails.\n\n" +
			"- `mode = \"full\"`: each disk is a standalone qcow2 copy with the whole backing chain flattened into it.\n" +
			"- `mode = \"linked\"`: each disk is a qcow2 overlay. For a **shut-off** source the overlay sits directly on the " +
			"source's disk, which then is the clone's backing file: keep the source shut off (a template) while linked clones " +
			"exist, since writes to it would change what the clones read. For a **running** source the overlay sits on the " +
			"source disk's own backing file (e.g. the base image it was made from) and holds a copy of the source's top " +
			"image, so the source can keep writing; a running source's disk without a backing file is copied whole. " +
			"`disks[*].backing` shows what each disk sits on.\n\n" +
			"Delete removes only the clone's domain, its disks and its varstore; the source and its disks are never touched. " +
			"A create that fails removes whatever it made. `vcpu` and `memory_mib` stay within the source's ceilings " +
			"(`max_vcpu` / `max_memory_mib`, kept by the clone for hot-add); growing them on a running clone applies live, " +
			"fewer vCPUs replace the clone. Import by the clone's name or UUID: the mode, pool and source are read back from " +
			"the record libvirt_clone keeps in the domain's `<metadata>`.",
		Attributes: map[string]schema.Attribute{
			"host":             tfkit.HostAttribute(""),
			"id":               tfkit.IDAttribute("The clone's UUID (new, never the source's)."),
			"source_domain_id": tfkit.RequiredReplace("The domain to clone: its UUID (e.g. `libvirt_domain.x.id`) or its name. It may be running. Changing it replaces the clone.", stringvalidator.LengthAtLeast(1)),
			"name":             tfkit.DomainNameAttribute("The clone's domain name, unique on the host; its disks are named `<name>-<target>.qcow2`. Changing it replaces the clone."),
			"mode":             tfkit.RequiredReplace("`linked` (qcow2 overlays: fast, small, tied to the source's images) or `full` (standalone copies, backing chains flattened). Changing it replaces the clone.", stringvalidator.OneOf(domainxml.CloneLinked, domainxml.CloneFull)),
			"pool": schema.StringAttribute{
				MarkdownDescription: "Storage pool for the clone's disks. Default: the pool of the source's first disk. Changing it replaces the clone.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"vcpu": tfkit.DefaultedInt("Number of vCPUs. Default: the source's current count. At most the source's maximum (its `max_vcpu`, "+
				"which the clone keeps as its own hot-add ceiling); more is an error at plan time. Growing it on a running clone "+
				"hot-adds vCPUs live (and in the definition); fewer vCPUs replace the clone.", int64validator.Between(1, 4096)),
			"memory_mib": tfkit.DefaultedInt("Memory in MiB (the current allocation). Default: the source's. At most the source's maximum "+
				"(its `max_memory_mib`, kept by the clone); more is an error at plan time. A change on a running clone is applied "+
				"live through the balloon and to the definition.", int64validator.AtLeast(16)),
			"running": tfkit.OptionalBool("Whether the clone runs. Default `true`: started after it is made. Changing it starts the clone, or shuts it down (ACPI, then forced off after 30 s).", true),
			"cloudinit_id": tfkit.OptionalReplace("A cloud-init seed of the clone's own (e.g. `libvirt_cloudinit_iso.x.id`: a volume key or `<pool>/<name>`), "+
				"attached as a read-only SATA cdrom as `libvirt_domain` does. The source's seed is never shared. Changing it replaces the clone.", stringvalidator.LengthAtLeast(1)),
			"disks": schema.ListNestedAttribute{
				MarkdownDescription: "The clone's own disks (deleted with it), in the source's order.",
				Computed:            true,
				PlanModifiers:       []planmodifier.List{listplanmodifier.UseStateForUnknown()},
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"target":    tfkit.ComputedString("Device name, as on the source (`vda`, ...)."),
						"volume_id": tfkit.ComputedString("The volume key (for dir pools, its path)."),
						"path":      tfkit.ComputedString("The file on the host."),
						"pool":      tfkit.ComputedString("The pool holding it."),
						"name":      tfkit.ComputedString("The volume name, `<name>-<target>.qcow2`."),
						"backing":   tfkit.ComputedString("The backing file it is an overlay on; empty for a standalone copy."),
					},
				},
			},
			"macs": schema.ListAttribute{
				MarkdownDescription: "The clone's MAC addresses, one per network interface of the source, in order: `52:54:00` and three bytes derived from the clone's name and the interface's index.",
				Computed:            true,
				ElementType:         types.StringType,
				PlanModifiers:       []planmodifier.List{listplanmodifier.UseStateForUnknown()},
			},
			"nvram": tfkit.KeptString("Path of the clone's own UEFI varstore (`<dir of the source's>/<name>_VARS.fd`); empty for a BIOS source."),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, tfkit.AllTimeouts),
		},
	}
}
