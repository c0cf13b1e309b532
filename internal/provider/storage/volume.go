package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

type VolumeResource struct {
	tfkit.ResourceBase
}

type VolumeModel struct {
	storedVolume
	tfkit.WithTimeouts
	tfkit.OnHost
	SourceURL       types.String `tfsdk:"source_url"`
	SourceFile      types.String `tfsdk:"source_file"`
	BackingVolume   types.String `tfsdk:"backing_volume"`
	CloneFrom       types.String `tfsdk:"clone_from"`
	SourceChecksum  types.String `tfsdk:"source_checksum"`
	Compression     types.String `tfsdk:"source_compression"`
	Permissions     types.Object `tfsdk:"permissions"`
	Format          types.String `tfsdk:"format"`
	CapacityBytes   types.Int64  `tfsdk:"capacity_bytes"`
	AllocationBytes types.Int64  `tfsdk:"allocation_bytes"`
	volumeEncryptionPart
}

func (m *VolumeModel) what() string { return "volume " + m.fullName() }

// volumeSources are the attributes that say where a volume's content comes from: at most
// one may be set.
var volumeSources = []string{"source_url", "source_file", "backing_volume", "clone_from"}

func (m *VolumeModel) source(name string) types.String {
	switch name {
	case "source_url":
		return m.SourceURL
	case "source_file":
		return m.SourceFile
	case "backing_volume":
		return m.BackingVolume
	case "clone_from":
		return m.CloneFrom
	}
	panic("unknown source " + name)
}

// ValidateConfig rejects at plan time what cannot work: two sources, a checksum with
// nothing to check, an empty volume without a size, an overlay that is not qcow2.
func (r *VolumeResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m VolumeModel
	resp.Diagnostics.Append(tfkit.GetConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var set []string
	unknown := false
	for _, s := range volumeSources {
		v := m.source(s)
		if v.IsUnknown() {
			unknown = true
		}
		if !v.IsNull() {
			set = append(set, s)
		}
	}
	if len(set) > 1 {
		resp.Diagnostics.AddAttributeError(path.Root(set[1]), "Conflicting volume sources",
			fmt.Sprintf("%s are all set, but a volume has at most one source. Keep one of source_url, source_file, "+
				"backing_volume or clone_from and remove the others.", strings.Join(set, " and ")))
	}
	if !m.SourceChecksum.IsNull() && m.SourceURL.IsNull() && m.SourceFile.IsNull() && !unknown {
		resp.Diagnostics.AddAttributeError(path.Root("source_checksum"), "source_checksum without an upload",
			"source_checksum verifies an uploaded image: set source_url or source_file, or remove source_checksum.")
	}
	if !m.Compression.IsNull() && m.SourceURL.IsNull() && m.SourceFile.IsNull() && !unknown {
		resp.Diagnostics.AddAttributeError(path.Root("source_compression"), "source_compression without an upload",
			"source_compression says how to read an uploaded image: set source_url or source_file, or remove source_compression "+
				"(backing_volume, clone_from and empty volumes have nothing to decompress).")
	}
	if len(set) == 0 && !unknown && m.CapacityBytes.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("capacity_bytes"), "Missing capacity_bytes",
			"An empty volume (no source_url, source_file, backing_volume or clone_from) needs its size: set capacity_bytes, "+
				"e.g. capacity_bytes = 10737418240 for 10 GiB.")
	}
	if !m.BackingVolume.IsNull() && !m.Format.IsNull() && !m.Format.IsUnknown() && m.Format.ValueString() != "qcow2" {
		resp.Diagnostics.AddAttributeError(path.Root("format"), "Overlay volumes are qcow2",
			fmt.Sprintf("backing_volume makes a copy-on-write qcow2 overlay, but format = %q: remove format or set it to \"qcow2\".", m.Format.ValueString()))
	}
	if c := m.CapacityBytes; !c.IsNull() && !c.IsUnknown() && c.ValueInt64() > 0 && c.ValueInt64()%512 != 0 &&
		!m.Format.IsUnknown() && (m.Format.IsNull() || m.Format.ValueString() == "qcow2") {
		up := (c.ValueInt64() + 511) / 512 * 512
		resp.Diagnostics.AddAttributeError(path.Root("capacity_bytes"), "capacity_bytes not a whole number of sectors",
			fmt.Sprintf("capacity_bytes = %d is not a multiple of 512: qcow2 volumes are sized in 512-byte sectors, so libvirt would "+
				"make it %d bytes. Use %d, or a size in MiB or GiB (e.g. 10 * 1024 * 1024 * 1024).", c.ValueInt64(), up, up))
	}
	validateAllocation(m.AllocationBytes, m.CapacityBytes, &resp.Diagnostics)
	validateVolumeEncryption(&m, &resp.Diagnostics)
	if p := m.SourceFile; !p.IsNull() && !p.IsUnknown() && p.ValueString() != "" {
		if st, err := os.Stat(p.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("source_file"), "Unreadable source_file",
				fmt.Sprintf("source_file %q cannot be read on this machine: %v. source_file is a path on the machine running Terraform.", p.ValueString(), err))
		} else if !st.Mode().IsRegular() {
			resp.Diagnostics.AddAttributeError(path.Root("source_file"), "source_file is not a file",
				fmt.Sprintf("source_file %q is not a regular file.", p.ValueString()))
		} else if !m.Compression.IsUnknown() {
			checkFileCompression(p.ValueString(), m.Compression.ValueString(), &resp.Diagnostics)
		}
	}
}

// ModifyPlan refuses to shrink a volume, when the volume is kept (a replacement may be
// any size).
func (r *VolumeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	state, plan, ok := tfkit.GetBoth[VolumeModel](ctx, &resp.Diagnostics, req.State, req.Plan)
	if !ok {
		return
	}
	if moving(&plan, &state) {
		r.planMove(ctx, &state, &plan, &resp.Diagnostics) // volume_move.go
		resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
	}
	for _, pair := range [][2]types.String{
		{state.Name, plan.Name}, {state.Pool, plan.Pool}, {state.SourceURL, plan.SourceURL},
		{state.SourceFile, plan.SourceFile}, {state.BackingVolume, plan.BackingVolume}, {state.CloneFrom, plan.CloneFrom},
		{state.SourceChecksum, plan.SourceChecksum}, {state.Format, plan.Format}, {encryptionKey(&state), encryptionKey(&plan)}, {state.Compression, plan.Compression},
	} {
		if !pair[0].Equal(pair[1]) {
			return // replaced: the new volume may have any size
		}
	}
	if plan.CapacityBytes.IsUnknown() || plan.CapacityBytes.IsNull() || state.CapacityBytes.IsNull() {
		return
	}
	if want, have := plan.CapacityBytes.ValueInt64(), state.CapacityBytes.ValueInt64(); want < have {
		resp.Diagnostics.AddAttributeError(path.Root("capacity_bytes"), "Volume cannot shrink",
			fmt.Sprintf("libvirt_volume %s/%s is %d bytes; capacity_bytes = %d would shrink it, which would cut off the "+
				"data at its end, so it is refused. Set capacity_bytes to %d or more, or replace the volume "+
				"(terraform apply -replace=...) to start over with a smaller one.",
				state.Pool.ValueString(), state.Name.ValueString(), have, want, have))
	}
}

func (r *VolumeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 30*time.Minute, (*VolumeModel).what,
		func(ctx context.Context, plan *VolumeModel, d *diag.Diagnostics) (*VolumeModel, error) {
			spec := libvirt.VolumeSpec{Pool: plan.Pool.ValueString(), Name: plan.Name.ValueString(), Format: plan.Format.ValueString(),
				Perms: permsSpec(ctx, plan.Permissions, d), Encryption: plan.Encryption.toSpec()}
			if !plan.CapacityBytes.IsNull() && !plan.CapacityBytes.IsUnknown() {
				spec.Capacity = uint64(plan.CapacityBytes.ValueInt64())
			}
			spec.Allocation = allocationSpec(plan.AllocationBytes)
			info, err := r.create(ctx, spec, plan)
			if err != nil {
				return nil, fmt.Errorf("%w%s", err, notFoundHint(err, plan)) // a failed upload deleted the half-made volume
			}
			plan.fromInfo(info)
			return plan, nil
		})
}

// notFoundHint says what to check when a pool or a source volume does not exist.
func notFoundHint(err error, plan *VolumeModel) string {
	if !errors.Is(err, libvirt.ErrNotFound) {
		return ""
	}
	hint := fmt.Sprintf("\n\nCheck that pool %q exists (create it with libvirt_pool, or see `virsh pool-list --all`)", plan.Pool.ValueString())
	for _, src := range []string{"backing_volume", "clone_from"} {
		if v := plan.source(src); !v.IsNull() {
			hint += fmt.Sprintf(" and that %s = %q names an existing volume (use the id of its libvirt_volume)", src, v.ValueString())
		}
	}
	return hint + "."
}

func (r *VolumeResource) create(ctx context.Context, spec libvirt.VolumeSpec, plan *VolumeModel) (*libvirt.VolumeInfo, error) {
	switch {
	case !plan.BackingVolume.IsNull():
		ref, err := libvirt.ParseVolumeRef(plan.BackingVolume.ValueString())
		if err != nil {
			return nil, err
		}
		return r.Client.CreateOverlay(ctx, spec, ref)
	case !plan.CloneFrom.IsNull():
		ref, err := libvirt.ParseVolumeRef(plan.CloneFrom.ValueString())
		if err != nil {
			return nil, err
		}
		return r.Client.CloneVolume(ctx, spec, ref)
	case !plan.SourceURL.IsNull() || !plan.SourceFile.IsNull():
		opts := libvirt.UploadOptions{Decoder: decoder(ctx, plan.Compression.ValueString())}
		if !plan.SourceChecksum.IsNull() {
			sum, err := libvirt.ParseChecksum(plan.SourceChecksum.ValueString())
			if err != nil {
				return nil, err
			}
			opts.Checksum = &sum
		}
		src, err := libvirt.OpenSource(ctx, plan.SourceURL.ValueString(), plan.SourceFile.ValueString())
		if err != nil {
			return nil, err
		}
		opts.Progress = func(done, total int64, rate float64) {
			fields := map[string]any{
				"volume": spec.String(), "source": src.Name, "bytes": done,
				"rate": libvirt.FormatBytes(rate) + "/s", "bytes_per_second": int64(rate),
			}
			if total >= 0 {
				fields["total_bytes"] = total
			}
			tflog.Info(ctx, fmt.Sprintf("uploading %s into volume %s: %s", src.Name, spec, libvirt.FormatBytes(float64(done))), fields)
		}
		return r.Client.UploadVolume(ctx, spec, src, opts)
	default:
		return r.Client.CreateVolume(ctx, spec)
	}
}

// Read keeps the stored format whatever libvirt reports now (fromInfo): a probe that
// disagrees is a warning, never a change of state (which would replace the volume).
func (r *VolumeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.RefreshWith(ctx, req, resp, 2*time.Minute, (*VolumeModel).what, func(ctx context.Context, m *VolumeModel, d *diag.Diagnostics) (*VolumeModel, error) {
		info, err := r.Client.VolumeInfo(ctx, m.ref())
		if err != nil {
			return nil, err
		}
		m.fromInfo(info).warn(d)
		return m, nil
	})
}

// Update moves the volume to another host (volume_move.go) and grows it: host and
// capacity_bytes are the attributes that change in place.
func (r *VolumeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.Update(ctx, req, resp, 30*time.Minute, (*VolumeModel).what,
		func(ctx context.Context, plan, state *VolumeModel, d *diag.Diagnostics) (*VolumeModel, error) {
			if moving(plan, state) {
				info, err := r.move(ctx, state, plan.HostOf(), d)
				if err != nil {
					return nil, fmt.Errorf("move it to host %s: %w", plan.HostOf(), err)
				}
				state.ID, state.Path = types.StringValue(info.Key), types.StringValue(info.Path)
			}
			ref := state.ref()
			if want := plan.CapacityBytes; !want.IsNull() && !want.IsUnknown() && !want.Equal(state.CapacityBytes) {
				// libvirt resizes a volume as the format it reads it as: not one it misreads.
				info, err := r.Client.VolumeInfo(ctx, ref)
				if err != nil {
					return nil, err
				}
				if fd := state.formatDoubt(info); fd != nil {
					return nil, fmt.Errorf("grow it to %d bytes: %s. libvirt would resize it as %s, so it is not resized; "+
						"resize it by hand with `qemu-img resize -f %s`", want.ValueInt64(), fd.detail(), info.Format, state.Format.ValueString())
				}
				res, err := r.Client.GrowVolume(ctx, ref, uint64(want.ValueInt64()))
				if err != nil {
					return nil, fmt.Errorf("grow it to %d bytes: %w", want.ValueInt64(), err)
				}
				if res.Online {
					tflog.Info(ctx, "grew volume online through its running domain", map[string]any{
						"volume": state.fullName(), "domain": res.Domain, "target": res.Target, "guest_output": res.GuestLog,
					})
				}
				for _, w := range res.Warnings {
					d.AddAttributeWarning(path.Root("capacity_bytes"), "Filesystem in the guest not grown", w)
				}
			}
			info, err := tfkit.ReadBack(ctx, func(ctx context.Context) (*libvirt.VolumeInfo, error) { return r.Client.VolumeInfo(ctx, ref) })
			if err != nil {
				return nil, fmt.Errorf("read it back after the update: %w", err)
			}
			plan.fromInfo(info).warn(d)
			return plan, nil
		})
}

func (r *VolumeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteStored[VolumeModel](ctx, r.Client, req, resp)
}

// ImportState accepts <pool>/<name> or the volume key and stores the key as id; Read
// then fills in the rest. Sources cannot be known from the host and stay null.
func (r *VolumeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := tfkit.ImportContext(ctx, r.Client, "libvirt_volume", req.ID)
	defer bound.End(&resp.Diagnostics)
	ref, err := libvirt.ParseVolumeRef(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import id for libvirt_volume", err.Error())
		return
	}
	info, err := r.Client.VolumeInfo(ctx, ref)
	if err != nil {
		resp.Diagnostics.AddError("Unable to import volume "+ref.String(), err.Error())
		return
	}
	m := VolumeModel{
		SourceURL: types.StringNull(), SourceFile: types.StringNull(), BackingVolume: types.StringNull(),
		CloneFrom: types.StringNull(), SourceChecksum: types.StringNull(), Format: types.StringNull(), Compression: types.StringNull(),
		Permissions:  types.ObjectNull(volumePermsTypes),
		WithTimeouts: tfkit.WithTimeouts{Timeouts: tfkit.UnsetTimeouts(tfkit.AllTimeouts)},
	}
	m.fromInfo(info)
	resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, &m)...)
}

// fromInfo sets what libvirt reports, except the format: that is what the configuration
// said (an import: what libvirt reported at the first read), never read again. libvirt's
// directory pools probe each file's format on a pool refresh, and a guest owns every byte
// of a raw disk: one that writes a qcow2 header on it would otherwise turn the state to
// qcow2 (replacing the volume at the next plan) and have the provider follow the backing
// file the header names. What libvirt reports instead is returned as a doubt to warn
// about; a raw volume's capacity is then its file's length, not the header's.
func (m *VolumeModel) fromInfo(info *libvirt.VolumeInfo) *formatDoubt {
	m.storedVolume.fromInfo(info)
	m.AllocationBytes = allocationRead(m.AllocationBytes, info)
	m.Encryption = volumeEncryptionFrom(info.Encryption, m.Encryption)
	m.Permissions = permsValue(context.Background(), info.Perms, m.Permissions)
	if m.Format.IsNull() || m.Format.IsUnknown() {
		m.Format = types.StringValue(importedFormat(info.Format))
	}
	fd := m.formatDoubt(info)
	m.CapacityBytes = types.Int64Value(int64(info.Capacity))
	if fd != nil && m.Format.ValueString() != "qcow2" {
		m.CapacityBytes = types.Int64Value(int64(libvirt.RawCapacity(info)))
	}
	return fd
}

// importedFormat is the format an import stores: libvirt's at that first read ("raw" when
// it names none).
func importedFormat(reported string) string {
	if reported == "" {
		return "raw"
	}
	return reported
}

// formatDoubt is libvirt reading the volume as another format than the stored one.
type formatDoubt struct{ volume, stored, reported string }

func (m *VolumeModel) formatDoubt(info *libvirt.VolumeInfo) *formatDoubt {
	if stored := m.Format.ValueString(); libvirt.FormatDisagrees(stored, info.Format) {
		return &formatDoubt{volume: m.fullName(), stored: stored, reported: info.Format}
	}
	return nil
}

func (fd *formatDoubt) detail() string {
	return fmt.Sprintf("libvirt reads volume %s as %s but it was created %s", fd.volume, fd.reported, fd.stored)
}

// warn adds the doubt, if any, as a warning: the provider keeps the stored format.
func (fd *formatDoubt) warn(d *diag.Diagnostics) {
	if fd == nil {
		return
	}
	d.AddWarning("Volume "+fd.volume+" reads as "+fd.reported,
		fmt.Sprintf("%s: the provider keeps treating it as %s (state, domain disks, exports and copies); a guest may have "+
			"written a %s header on it. Nothing is replaced or changed. If the volume really was converted outside Terraform, "+
			"replace it (terraform apply -replace=...) or import it again.", fd.detail(), fd.stored, fd.reported))
}
