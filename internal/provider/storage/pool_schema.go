package storage

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

func (r *PoolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = tfkit.ResourceSchema(ctx, "A libvirt storage pool: a directory (`dir`), an LVM volume group (`logical`), a mounted network "+
		"share (`netfs`), a Ceph RBD pool (`rbd`), an iSCSI target (`iscsi` through the host's initiator, `iscsi-direct` through "+
		"libvirt's own), a ZFS pool (`zfs`), a partitioned disk (`disk`), a SCSI host adapter's LUNs (`scsi`), multipath "+
		"devices (`mpath`) or a Gluster volume (`gluster`) that holds volumes. On create the pool is defined, built and started "+
		"(with `active = false`: only defined): build makes the "+
		"directory of a `dir` pool and the mount point of a `netfs` pool, creates the volume group of a `logical` "+
		"pool on `source.devices` and the partition table of a `disk` pool — never overwriting a device that carries any "+
		"signature; devices that hold the volume group (the table) already are used as they are. A `zfs` pool with "+
		"`source.devices` gets its zpool made on them; the other types have nothing to build.\n\n"+
		"Destroy stops (for `netfs`: unmounts) and undefines the pool, and removes the directory of a `dir` pool and "+
		"the mount point of a `netfs` pool (libvirt removes them only when empty). A `logical` pool's volume group is "+
		"left on the host (remove it with `vgremove` when it is no longer wanted); the storage of the other types (images, "+
		"LUNs, partitions, datasets) is never touched by destroy unless `force_destroy` deletes the volumes of a running pool. A pool "+
		"that still holds volumes is not destroyed unless `force_destroy = true`, which deletes its volumes first.\n\n"+
		"**Thin provisioning on LVM.** libvirt 9 makes thick LVs (a `libvirt_volume` without `allocation_bytes`) and, with "+
		"`allocation_bytes = 0`, sparse LVs (`lvcreate --virtualsize`, snapshot-backed); it cannot make LVs in an LVM thin "+
		"pool. A volume group that holds a thin pool works as a `logical` pool: the thin pool itself is hidden, thin LVs "+
		"made by `lvcreate --thin` show as volumes (import them, attach them to domains, delete them).\n\n"+
		"Every change but `autostart`, `active` and `force_destroy` replaces the pool.", tfkit.AllTimeouts, map[string]schema.Attribute{
		"id": tfkit.IDAttribute("The pool's UUID."),
		"name": tfkit.RequiredReplace("Pool name, unique on the host; also the import id. Changing it replaces the pool.", stringvalidator.RegexMatches(validators.ObjectNameRegexp,
			"must start with a letter or digit and hold only letters, digits, '_', '.', '+' and '-'")),
		"type": tfkit.RequiredReplace("`dir`, `logical`, `netfs`, `rbd`, `iscsi`, `iscsi-direct`, `zfs`, `disk`, `scsi`, `mpath` or `gluster`. "+
			"Changing it replaces the pool.", stringvalidator.OneOf(hostxml.PoolTypes...)),
		"target_path": tfkit.DefaultedString("Where the volumes appear on the host: the directory of a `dir` pool (required), the mount " +
			"point of a `netfs` pool (required), `/dev/<volume group>` for a `logical` pool and `/dev/zvol/<zpool>` for a " +
			"`zfs` pool (always that; computed when omitted); where the devices appear for `iscsi` and `scsi` (default " +
			"`/dev/disk/by-path`), `mpath` (default `/dev/mapper`) and `disk` (default `/dev`); none for `rbd`, " +
			"`iscsi-direct` and `gluster`. Changing it replaces the pool."),
		"autostart": tfkit.OptionalBool("Start the pool when libvirtd starts. Default `false`. Changes in place.", false),
		"active": schema.BoolAttribute{
			MarkdownDescription: "Whether the pool runs. Not set: it is started on create (as always) and afterwards " +
				"reports what libvirt says — a pool that stopped (a host rebooted without `autostart`, a `netfs` share that " +
				"did not mount) stays in state with `active = false`, and its volumes stay in state too: libvirt cannot see " +
				"into a stopped pool, so their refresh fails, naming the pool, until it runs again (`virsh pool-start " +
				"<name>`). `false`: the pool is only defined — not built, not started, so no server is contacted and no " +
				"device is written (for a pool whose server is not reachable yet; destroy then only undefines it). `true`: " +
				"started when found stopped. Changes in place (start or stop; stopping never touches the storage).",
			Optional: true,
			Computed: true,
		},
		"force_destroy": tfkit.OptionalBool("Let destroy delete the volumes the pool still holds (all of them, also those no "+
			"configuration manages). Default `false`: destroying a pool that holds volumes fails, naming how many. "+
			"Only stored in state; changes in place.", false),
		"capacity_bytes":   tfkit.ComputedInt("Size of the pool's storage, in bytes, as libvirt reports it after a refresh."),
		"allocation_bytes": tfkit.ComputedInt("Bytes in use, after a refresh. Changes as volumes are written; never causes a diff."),
		"available_bytes":  tfkit.ComputedInt("Bytes free, after a refresh. Changes as volumes are written; never causes a diff."),
	})
	resp.Schema.Blocks["source"] = poolSourceBlock()
}

// poolSourceBlock is the pool's `source` block: where its storage comes from.
func poolSourceBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "Where the storage comes from, by type: `logical` `devices` (and `name`); `netfs` `host`, " +
			"`dir` (and `format`); `rbd` `hosts`, `name` (and `auth`); `iscsi` `host`, `device` (and `initiator`, `auth`); " +
			"`iscsi-direct` `host`, `device`, `initiator` (and `auth`); `zfs` `name` (and `devices`); `disk` `devices` (one) " +
			"(and `format`); `scsi` `adapter`; `gluster` `host`, `name` (and `dir`); none for `dir` and `mpath`. A field " +
			"the type does not take is refused at plan time. Changing it replaces the pool.",
		PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(tfkit.PresenceChanged,
			"Adding or removing the source block replaces the pool.", "Adding or removing the `source` block replaces the pool.")},
		Attributes: map[string]schema.Attribute{
			"devices": replacedList("`logical`: block devices (physical volumes) of the volume group, e.g. `[\"/dev/sdb\"]`. " +
				"`disk`: the one disk whose partitions are the volumes. `zfs`: devices to make the zpool on (omit to use an existing zpool)."),
			"name": tfkit.DefaultedString("`logical`: the volume group's name (default: the pool's name). `rbd`: the Ceph pool. " +
				"`zfs`: the zpool (or a dataset in it, e.g. `tank/vms`). `gluster`: the Gluster volume."),
			"host": tfkit.OptionalReplace("`netfs`: the file server's host name or address. `iscsi`, `iscsi-direct`: the target " +
				"portal, `name` or `name:port` (`[v6addr]:port`). `gluster`: a Gluster server."),
			"hosts": replacedList("`rbd`: the Ceph monitors, each `name` or `name:port`, e.g. `[\"mon1.example:6789\"]`."),
			"dir": tfkit.DefaultedString("`netfs`: the exported directory on the server, e.g. `/exports/vms`. `gluster`: the " +
				"directory in the volume (default `/`)."),
			"format": tfkit.DefaultedString("`netfs`: `auto` (default), `nfs`, `glusterfs` or `cifs`. `logical`: `lvm2` (the only one). " +
				"`disk`: the partition table, `gpt`, `dos`, ... (default `unknown`: whatever the disk has; build writes it only on an empty disk)."),
			"device":    tfkit.OptionalReplace("`iscsi`, `iscsi-direct`: the target's IQN, e.g. `iqn.2024-01.org.example:storage`."),
			"initiator": tfkit.OptionalReplace("`iscsi`, `iscsi-direct`: this host's initiator IQN (required for `iscsi-direct`, whose initiator is libvirt's own)."),
			"adapter":   tfkit.OptionalReplace("`scsi`: the SCSI host adapter's name, e.g. `host0` (`ls /sys/class/scsi_host`)."),
			"auth": schema.SingleNestedAttribute{
				MarkdownDescription: "`rbd`: cephx; `iscsi`, `iscsi-direct`: CHAP. The key or password is a `libvirt_secret` " +
					"(`usage_type` `ceph` or `iscsi`).",
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"username":  schema.StringAttribute{MarkdownDescription: "The Ceph or CHAP user.", Required: true},
					"secret_id": schema.StringAttribute{MarkdownDescription: "`id` of the `libvirt_secret` that holds the key.", Required: true},
				},
				PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
			},
		},
	}
}

// replacedList is an optional list of strings whose change replaces the object.
func replacedList(desc string) schema.ListAttribute {
	return schema.ListAttribute{MarkdownDescription: desc, ElementType: types.StringType, Optional: true,
		PlanModifiers: []planmodifier.List{listplanmodifier.RequiresReplace()}}
}
