package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
)

func (r *poolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = resourceSchema(ctx, "A libvirt storage pool: a directory (`dir`), an LVM volume group (`logical`) or a mounted network "+
		"share (`netfs`) that holds volumes. On create the pool is defined, built and started: build makes the "+
		"directory of a `dir` pool and the mount point of a `netfs` pool, and creates the volume group of a `logical` "+
		"pool on `source.devices` — never overwriting a device that carries any signature; devices that hold the volume "+
		"group already are used as they are.\n\n"+
		"Destroy stops (for `netfs`: unmounts) and undefines the pool, and removes the directory of a `dir` pool and "+
		"the mount point of a `netfs` pool (libvirt removes them only when empty). A `logical` pool's volume group is "+
		"left on the host (remove it with `vgremove` when it is no longer wanted). A pool "+
		"that still holds volumes is not destroyed unless `force_destroy = true`, which deletes its volumes first.\n\n"+
		"Every change but `autostart` and `force_destroy` replaces the pool.", allTimeouts, map[string]schema.Attribute{
		"id": idAttribute("The pool's UUID."),
		"name": requiredReplace("Pool name, unique on the host; also the import id. Changing it replaces the pool.", stringvalidator.RegexMatches(objectNameRegexp,
			"must start with a letter or digit and hold only letters, digits, '_', '.', '+' and '-'")),
		"type": requiredReplace("`dir`, `logical` or `netfs`. Changing it replaces the pool.", stringvalidator.OneOf(hostxml.PoolTypes...)),
		"target_path": defaultedString("Where the volumes appear on the host: the directory of a `dir` pool (required), the mount " +
			"point of a `netfs` pool (required), `/dev/<volume group>` for a `logical` pool (always that; computed " +
			"when omitted). Changing it replaces the pool."),
		"autostart": optionalBool("Start the pool when libvirtd starts. Default `false`. Changes in place.", false),
		"active": computedBool("Whether the pool is running, as libvirt reports it. A pool that stopped (a host " +
			"rebooted without `autostart`, a `netfs` share that did not mount) stays in state with `active = false`, " +
			"and its volumes stay in state too: libvirt cannot see into a stopped pool, so their refresh fails, naming " +
			"the pool, until it runs again (`virsh pool-start <name>`)."),
		"force_destroy": optionalBool("Let destroy delete the volumes the pool still holds (all of them, also those no "+
			"configuration manages). Default `false`: destroying a pool that holds volumes fails, naming how many. "+
			"Only stored in state; changes in place.", false),
		"capacity_bytes":   computedInt("Size of the pool's storage, in bytes, as libvirt reports it after a refresh."),
		"allocation_bytes": computedInt("Bytes in use, after a refresh. Changes as volumes are written; never causes a diff."),
		"available_bytes":  computedInt("Bytes free, after a refresh. Changes as volumes are written; never causes a diff."),
	})
	resp.Schema.Blocks["source"] = poolSourceBlock()
}

// poolSourceBlock is the pool's `source` block: where its storage comes from.
func poolSourceBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "Where the storage comes from: `devices` (and optionally `name`) for `logical`, `host`, " +
			"`dir` (and optionally `format`) for `netfs`; none for `dir`. Changing it replaces the pool.",
		PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(presenceChanged,
			"Adding or removing the source block replaces the pool.", "Adding or removing the `source` block replaces the pool.")},
		Attributes: map[string]schema.Attribute{
			"devices": schema.ListAttribute{
				MarkdownDescription: "`logical`: block devices (physical volumes) of the volume group, e.g. `[\"/dev/sdb\"]`.",
				ElementType:         types.StringType,
				Optional:            true,
				PlanModifiers:       []planmodifier.List{listplanmodifier.RequiresReplace()},
			},
			"name":   defaultedString("`logical`: the volume group's name. Default: the pool's name."),
			"host":   optionalReplace("`netfs`: the file server's host name or address."),
			"dir":    optionalReplace("`netfs`: the exported directory on the server, e.g. `/exports/vms`."),
			"format": defaultedString("`netfs`: `auto` (default), `nfs`, `glusterfs` or `cifs`. `logical`: `lvm2` (the only one)."),
		},
	}
}
