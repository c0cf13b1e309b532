package storage

import (
	"fmt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// allocationAttribute is libvirt_volume.allocation_bytes: computed as before when not
// set (no UseStateForUnknown: it changes as the volume is written), and when set, what to
// reserve on the host at create. Not set, the volume XML carries no <allocation> and
// libvirt reserves the whole capacity, so a logical pool never gets a sparse LV by
// surprise.
func allocationAttribute() schema.Int64Attribute {
	return schema.Int64Attribute{
		MarkdownDescription: "Bytes to reserve for the volume on the host when it is made; afterwards, while not set, the " +
			"bytes it uses as libvirt reports them (never a diff). Not set: libvirt reserves the whole capacity — a `logical` " +
			"pool makes a thick LV, a `dir` pool an empty `raw` volume as a fully written file (what it always did); `qcow2` " +
			"files grow as they are written either way. `0`: sparse — a `raw` file with holes, and in a `logical` pool a sparse " +
			"LV (libvirt's `lvcreate --virtualsize`, a snapshot of a zero device; never an LV of an LVM thin pool: libvirt 9 " +
			"cannot make those). A value between `0` and `capacity_bytes` reserves that much (in a `logical` pool: the sparse " +
			"LV's copy-on-write space; libvirt reports that space, at least one LVM extent, as the allocation, so make a sparse LV larger " +
			"than one extent, 4 MiB by default). A set value stays in state as long as the volume matches it (`0` while the volume " +
			"uses less than its capacity). Changing it replaces the volume; removing it keeps the volume as it is.",
		Optional:      true,
		Computed:      true,
		Validators:    []validator.Int64{int64validator.AtLeast(0)},
		PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplaceIfConfigured()},
	}
}

// allocationSpec is what to ask libvirt for: nothing when not set (or unknown).
func allocationSpec(v types.Int64) *uint64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	a := uint64(v.ValueInt64())
	return &a
}

// allocationRead is the value to keep in state: a set 0 stays while the volume is sparse
// (libvirt reports what it uses, which a sparse LV or a qcow2 file grows), a value equal
// to what libvirt reports stays; anything else is what libvirt reports, so a volume that
// no longer matches its configuration shows as a diff.
func allocationRead(prior types.Int64, info *libvirt.VolumeInfo) types.Int64 {
	if !prior.IsNull() && !prior.IsUnknown() && prior.ValueInt64() == 0 && info.Allocation < info.Capacity {
		return prior
	}
	return types.Int64Value(int64(info.Allocation))
}

// validateAllocation refuses, at plan time, more bytes than the volume's capacity.
func validateAllocation(alloc, capacity types.Int64, d *diag.Diagnostics) {
	if !tfkit.AllKnown(alloc, capacity) || alloc.IsNull() || capacity.IsNull() {
		return
	}
	if a, c := alloc.ValueInt64(), capacity.ValueInt64(); a > c {
		d.AddAttributeError(path.Root("allocation_bytes"), "allocation_bytes larger than the volume",
			fmt.Sprintf("allocation_bytes = %d is more than capacity_bytes = %d: a volume reserves at most its capacity. "+
				"Remove allocation_bytes (the whole capacity, thick), set it to 0 (sparse) or to at most %d.", a, c, c))
	}
}
