package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// A change of a libvirt_volume's `host` moves the volume; it never deletes it first (a
// replace would, while a domain on the old host may still run on it). How, decided at
// plan time and again at apply (decideMove):
//   - the new host has it already, same pool and name, on storage both hosts see (asked:
//     SharesDirWith), or the old host has it no more (a domain's migration moved it):
//     taken as it is there; a volume of that name of the new host's own is never taken;
//   - a domain running on the old host writes it: it is carried by that domain's migration
//     (migrate = true, migration.copy_storage = "all", in the same apply): an empty volume
//     of the same format and size is made on the new host at the same path for the
//     migration to fill, and the migration removes the old copy once the guest runs on
//     the new host;
//   - else (nothing writes it now) its bytes are copied, streamed through the provider; the old copy is removed
//     when nothing on the old host uses it any more, else the migration of the domain
//     that does (a backing file, a CD-ROM) removes it, or a warning says it is left.

type moveWay int

const (
	moveAdopt moveWay = iota + 1
	moveCarried
	moveCopy
)

// volumeHostAttribute is libvirt_volume's `host`: a change moves the volume.
func volumeHostAttribute() schema.StringAttribute {
	a := tfkit.HostAttribute("Changing it moves the volume to that host (never deletes it first): taken as it is when the new host " +
		"has it already (storage both hosts see); carried by the migration of the domain that writes it (that domain moves in " +
		"the same apply with `migrate = true` and `migration.copy_storage = \"all\"`); else copied byte for byte. The old " +
		"copy is removed once nothing on the old host uses it.")
	a.PlanModifiers = nil
	return a
}

// moving is true when the plan puts the volume on another host.
func moving(plan, state *VolumeModel) bool {
	return state != nil && !plan.Host.IsUnknown() && plan.HostOf() != state.HostOf()
}

// decideMove decides how the volume of state moves to dst, and what it will be there.
func decideMove(ctx context.Context, src, dst *libvirt.Client, state *VolumeModel) (moveWay, *libvirt.VolumeInfo, libvirt.PathUsers, error) {
	var users libvirt.PathUsers
	pool, name := state.Pool.ValueString(), state.Name.ValueString()
	// A pool lists a file made through another host only once refreshed: storage both
	// hosts see must show up there before anything is copied onto it.
	_, _ = poolDir(ctx, dst, pool) // ReadPool refreshes an active pool
	there, terr := dst.VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: name})
	if terr != nil && !errors.Is(terr, libvirt.ErrNotFound) {
		return 0, nil, users, terr
	}
	info, err := src.VolumeInfo(ctx, state.ref())
	switch {
	case errors.Is(err, libvirt.ErrNotFound) && terr == nil:
		// Moved already (a domain's migration copied it, and removed the old copy).
		return moveAdopt, there, users, nil
	case err != nil:
		return 0, nil, users, fmt.Errorf("read it on host %s: %w", state.HostOf(), err)
	case terr == nil:
		// Both hosts have it: one file on storage both see, or two files, and then the new
		// host's is not this volume (a leftover, another's): never taken for it.
		if shared, serr := src.SharesDirWith(ctx, dst, filepath.Dir(info.Path)); !shared || serr != nil {
			return 0, nil, users, fmt.Errorf("host %s has a volume %s/%s of its own (%s), not on storage both hosts see: "+
				"remove or rename it there, then apply again; nothing was moved", dst.URI(), pool, name, there.Path)
		}
		return moveAdopt, there, users, nil
	}
	if users, err = src.PathUsers(ctx, info.Path, ""); err != nil {
		return 0, nil, users, err
	}
	if len(users.Writers) > 0 {
		return moveCarried, info, users, nil
	}
	return moveCopy, info, users, nil
}

// planMove says at plan time how the volume moves; where its key or path on the new host
// differs from the old (another pool directory), they are known after apply.
func (r *VolumeResource) planMove(ctx context.Context, state, plan *VolumeModel, d *diag.Diagnostics) {
	if r.Hosts == nil || r.Client == nil {
		return
	}
	src, err := r.Hosts.Client(state.HostOf())
	if err != nil {
		d.AddAttributeError(path.Root("host"), "Cannot move "+state.what(), err.Error())
		return
	}
	way, info, users, err := decideMove(ctx, src, r.Client, state)
	if err != nil {
		d.AddAttributeError(path.Root("host"), "Cannot move "+state.what(), err.Error())
		return
	}
	from, to := state.HostOf(), plan.HostOf()
	var how string
	switch way {
	case moveAdopt:
		how = "host " + to + " has it already (storage both hosts see): it is taken as it is there"
	case moveCarried:
		how = fmt.Sprintf("domain %v on host %s writes it: it moves with that domain's migration, which must be in the same apply "+
			"(migrate = true, migration.copy_storage = \"all\"); an empty volume is made on host %s for the migration to fill",
			users.Writers, from, to)
		if dir, err := poolDir(ctx, r.Client, info.Pool); err == nil && dir != "" && dir != filepath.Dir(info.Path) {
			d.AddAttributeError(path.Root("host"), "Cannot move "+state.what(),
				fmt.Sprintf("%s is written by domain %v: a migration copies it to the same path on host %s, but pool %s is in %s there, "+
					"not %s. Give the pool the same directory on both hosts.", state.what(), users.Writers, to, info.Pool, dir, filepath.Dir(info.Path)))
			return
		}
	case moveCopy:
		how = fmt.Sprintf("its bytes are copied to host %s", to)
		if users.InUse() {
			how += fmt.Sprintf("; the copy on host %s stays while something there uses it (%s)", from, describeUsers(users))
		} else {
			how += "; the copy on host " + from + " is removed"
		}
	}
	if way != moveCarried {
		if dir, err := poolDir(ctx, r.Client, info.Pool); err != nil || dir == "" || filepath.Join(dir, info.Name) != state.Path.ValueString() {
			plan.ID, plan.Path = types.StringUnknown(), types.StringUnknown()
		}
	}
	d.AddWarning(fmt.Sprintf("%s will move from host %s to host %s", state.what(), from, to), "It is moved, not replaced: "+how+".")
}

// move moves the volume of state to r.Client's host and returns it as it is there.
func (r *VolumeResource) move(ctx context.Context, state *VolumeModel, to string, d *diag.Diagnostics) (*libvirt.VolumeInfo, error) {
	if r.Hosts == nil {
		return nil, errors.New("the provider's hosts are not configured")
	}
	src, err := r.Hosts.Client(state.HostOf())
	if err != nil {
		return nil, err
	}
	way, info, users, err := decideMove(ctx, src, r.Client, state)
	if err != nil {
		return nil, err
	}
	switch way {
	case moveAdopt:
		return info, nil
	case moveCarried:
		tflog.Info(ctx, "volume "+state.fullName()+" moves with its domain's migration", map[string]any{"from": state.HostOf(), "to": to, "domains": users.Writers})
		return r.Client.PrecreateFor(ctx, info)
	}
	if info.Backing != "" {
		if _, err := r.Client.VolumeInfo(ctx, libvirt.VolumeRef{Key: info.Backing}); err != nil {
			return nil, fmt.Errorf("it is an overlay of %s, which host %s does not have (%w): move its backing volume too", info.Backing, to, err)
		}
	}
	if shared, _ := src.SharesDirWith(ctx, r.Client, filepath.Dir(info.Path)); shared {
		return nil, fmt.Errorf("host %s sees %s on the same storage but its pool %s does not list it: refresh that pool "+
			"(virsh pool-refresh %s) and apply again; nothing was copied", to, info.Path, info.Pool, info.Pool)
	}
	tflog.Info(ctx, "copying volume "+state.fullName(), map[string]any{"from": state.HostOf(), "to": to, "bytes": libvirt.RawCapacity(info)})
	moved, err := r.Client.CopyVolumeFrom(ctx, src, info)
	if err != nil {
		return nil, err
	}
	if users.InUse() {
		d.AddWarning(fmt.Sprintf("%s copied to host %s; the copy on host %s stays", state.what(), to, state.HostOf()),
			fmt.Sprintf("Something on host %s still uses it (%s). The migration of a domain that does removes it once the guest runs "+
				"on host %s; else remove it by hand when nothing uses it.", state.HostOf(), describeUsers(users), to))
		return moved, nil
	}
	if _, left := src.RemoveVolumesAt(ctx, []string{info.Path}); len(left) > 0 {
		d.AddWarning(state.what()+": old copy left on host "+state.HostOf(), fmt.Sprintf("It could not be removed: %v.", left))
	}
	return moved, nil
}

func describeUsers(u libvirt.PathUsers) string {
	var parts []string
	if len(u.Writers)+len(u.Readers) > 0 {
		parts = append(parts, fmt.Sprintf("domains %v", append(append([]string{}, u.Writers...), u.Readers...)))
	}
	if len(u.Overlays) > 0 {
		parts = append(parts, fmt.Sprintf("overlays %v", u.Overlays))
	}
	return fmt.Sprint(parts)
}

// poolDir is the directory of a directory-like pool on c's host ("" for other pools).
func poolDir(ctx context.Context, c *libvirt.Client, pool string) (string, error) {
	st, err := c.ReadPool(ctx, pool)
	if err != nil {
		return "", err
	}
	if st.Def == nil || st.Def.Target == nil {
		return "", nil
	}
	return st.Def.Target.Path, nil
}
