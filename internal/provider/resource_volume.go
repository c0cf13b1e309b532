package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/validators"
)

// NewVolumeResource is the libvirt_volume resource.
func NewVolumeResource() resource.Resource { return &volumeResource{resourceBase{typeName: "volume"}} }

type volumeResource struct {
	resourceBase
}

type volumeModel struct {
	ID              types.String   `tfsdk:"id"`
	Name            types.String   `tfsdk:"name"`
	Pool            types.String   `tfsdk:"pool"`
	SourceURL       types.String   `tfsdk:"source_url"`
	SourceFile      types.String   `tfsdk:"source_file"`
	BackingVolume   types.String   `tfsdk:"backing_volume"`
	CloneFrom       types.String   `tfsdk:"clone_from"`
	SourceChecksum  types.String   `tfsdk:"source_checksum"`
	Format          types.String   `tfsdk:"format"`
	CapacityBytes   types.Int64    `tfsdk:"capacity_bytes"`
	AllocationBytes types.Int64    `tfsdk:"allocation_bytes"`
	Path            types.String   `tfsdk:"path"`
	Timeouts        timeouts.Value `tfsdk:"timeouts"`
}

func (m *volumeModel) readTimeouts() timeouts.Value { return m.Timeouts }

// volumeSources are the attributes that say where a volume's content comes from: at most
// one may be set.
var volumeSources = []string{"source_url", "source_file", "backing_volume", "clone_from"}

func (m *volumeModel) source(name string) types.String {
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

func (r *volumeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A storage volume in a libvirt pool: empty, uploaded from a URL or a local file (streamed, " +
			"optionally checksummed), a copy-on-write overlay of another volume, or a full copy of one. " +
			"Growing `capacity_bytes` is done in place — online, through the running domain that uses the volume, " +
			"when there is one; shrinking is refused at plan time.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The volume's key (for directory pools, its path on the host).",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Volume name, unique in its pool, e.g. `web-1.qcow2`. Changing it replaces the volume.",
				Required:            true,
				PlanModifiers:       replace,
				Validators:          []validator.String{validators.ObjectName("volume name")},
			},
			"pool": schema.StringAttribute{
				MarkdownDescription: "Name of the storage pool to create the volume in, e.g. `default`. Changing it replaces the volume.",
				Required:            true,
				PlanModifiers:       replace,
				Validators:          []validator.String{validators.ObjectName("pool name")},
			},
			"source_url": schema.StringAttribute{
				MarkdownDescription: "Image to upload: an `http://`, `https://` or `file://` URL. The image is streamed " +
					"from the machine running Terraform into libvirt, never held whole in memory; progress is logged. " +
					"At most one of `source_url`, `source_file`, `backing_volume`, `clone_from`. Changing it replaces the volume.",
				Optional:      true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.SourceURL()},
			},
			"source_file": schema.StringAttribute{
				MarkdownDescription: "Path of an image file on the machine running Terraform, uploaded like `source_url`. " +
					"Changing it replaces the volume.",
				Optional:      true,
				PlanModifiers: replace,
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"backing_volume": schema.StringAttribute{
				MarkdownDescription: "`id` of a volume to overlay copy-on-write (a linked qcow2 disk whose `<backingStore>` is " +
					"that volume), or `<pool>/<name>`. The overlay's capacity defaults to the backing volume's. Needs `format = \"qcow2\"`. " +
					"Changing it replaces the volume.",
				Optional:      true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.VolumeRef()},
			},
			"clone_from": schema.StringAttribute{
				MarkdownDescription: "`id` of a volume to copy whole (or `<pool>/<name>`): libvirt converts it to `format` and " +
					"flattens its backing chain. Changing it replaces the volume.",
				Optional:      true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.VolumeRef()},
			},
			"source_checksum": schema.StringAttribute{
				MarkdownDescription: "Expected digest of `source_url` / `source_file`, as `sha256:<64 hex digits>`. Verified while " +
					"streaming; on a mismatch the apply fails and the volume is deleted.",
				Optional:      true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.Checksum()},
			},
			"format": schema.StringAttribute{
				MarkdownDescription: "Volume format: `qcow2` (default), `raw` or `iso`. An uploaded image must be of this " +
					"format (a qcow2 image needs `qcow2`; anything else `raw` or `iso`). Changing it replaces the volume.",
				Optional:      true,
				Computed:      true,
				Default:       stringdefault.StaticString("qcow2"),
				PlanModifiers: replace,
				Validators:    []validator.String{stringvalidator.OneOf("qcow2", "raw", "iso")},
			},
			"capacity_bytes": schema.Int64Attribute{
				MarkdownDescription: "Size the guest sees, in bytes (for qcow2, a multiple of 512). Required for an empty volume. With a source it defaults " +
					"to the image's own virtual size (read from its qcow2 header; the file size for raw images); a larger " +
					"value grows the volume. Growing it later is an in-place update (online through a running domain that " +
					"uses the volume, then a best-effort filesystem grow by the guest agent); shrinking is refused.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				Validators:    []validator.Int64{int64validator.AtLeast(1)},
			},
			"allocation_bytes": schema.Int64Attribute{
				MarkdownDescription: "Bytes the volume uses on the host, as libvirt reports it.",
				Computed:            true,
			},
			"path": schema.StringAttribute{
				MarkdownDescription: "Path of the volume on the host (what a domain's disk uses).",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

// ValidateConfig rejects at plan time what cannot work: two sources, a checksum with
// nothing to check, an empty volume without a size, an overlay that is not qcow2.
func (r *volumeResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m volumeModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
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
	if p := m.SourceFile; !p.IsNull() && !p.IsUnknown() && p.ValueString() != "" {
		if st, err := os.Stat(p.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("source_file"), "Unreadable source_file",
				fmt.Sprintf("source_file %q cannot be read on this machine: %v. source_file is a path on the machine running Terraform.", p.ValueString(), err))
		} else if !st.Mode().IsRegular() {
			resp.Diagnostics.AddAttributeError(path.Root("source_file"), "source_file is not a file",
				fmt.Sprintf("source_file %q is not a regular file.", p.ValueString()))
		}
	}
}

// ModifyPlan refuses to shrink a volume, when the volume is kept (a replacement may be
// any size).
func (r *volumeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var state, plan volumeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	for _, pair := range [][2]types.String{
		{state.Name, plan.Name}, {state.Pool, plan.Pool}, {state.SourceURL, plan.SourceURL},
		{state.SourceFile, plan.SourceFile}, {state.BackingVolume, plan.BackingVolume}, {state.CloneFrom, plan.CloneFrom},
		{state.SourceChecksum, plan.SourceChecksum}, {state.Format, plan.Format},
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

func (r *volumeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan volumeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 30*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	spec := libvirt.VolumeSpec{Pool: plan.Pool.ValueString(), Name: plan.Name.ValueString(), Format: plan.Format.ValueString()}
	if !plan.CapacityBytes.IsNull() && !plan.CapacityBytes.IsUnknown() {
		spec.Capacity = uint64(plan.CapacityBytes.ValueInt64())
	}
	info, err := r.create(ctx, spec, &plan)
	if err != nil {
		resp.Diagnostics.AddError("Unable to create volume "+spec.String(), err.Error()+notFoundHint(err, &plan))
		return
	}
	plan.fromInfo(info)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// notFoundHint says what to check when a pool or a source volume does not exist.
func notFoundHint(err error, plan *volumeModel) string {
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

func (r *volumeResource) create(ctx context.Context, spec libvirt.VolumeSpec, plan *volumeModel) (*libvirt.VolumeInfo, error) {
	switch {
	case !plan.BackingVolume.IsNull():
		ref, err := libvirt.ParseVolumeRef(plan.BackingVolume.ValueString())
		if err != nil {
			return nil, err
		}
		return r.client.CreateOverlay(ctx, spec, ref)
	case !plan.CloneFrom.IsNull():
		ref, err := libvirt.ParseVolumeRef(plan.CloneFrom.ValueString())
		if err != nil {
			return nil, err
		}
		return r.client.CloneVolume(ctx, spec, ref)
	case !plan.SourceURL.IsNull() || !plan.SourceFile.IsNull():
		var opts libvirt.UploadOptions
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
		return r.client.UploadVolume(ctx, spec, src, opts)
	default:
		return r.client.CreateVolume(ctx, spec)
	}
}

func (r *volumeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, req, resp, 2*time.Minute,
		func(m *volumeModel) string { return "volume " + m.Pool.ValueString() + "/" + m.Name.ValueString() },
		func(ctx context.Context, m *volumeModel) (*volumeModel, error) {
			info, err := r.client.VolumeInfo(ctx, m.ref())
			if err != nil {
				return nil, err
			}
			m.fromInfo(info)
			return m, nil
		})
}

func (r *volumeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state volumeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, 10*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := state.Pool.ValueString() + "/" + state.Name.ValueString()
	ref := state.ref()

	if !plan.CapacityBytes.IsNull() && !plan.CapacityBytes.IsUnknown() && !plan.CapacityBytes.Equal(state.CapacityBytes) {
		res, err := r.client.GrowVolume(ctx, ref, uint64(plan.CapacityBytes.ValueInt64()))
		if err != nil {
			resp.Diagnostics.AddError("Unable to grow volume "+name, err.Error())
			return
		}
		if res.Online {
			tflog.Info(ctx, "grew volume online through its running domain", map[string]any{
				"volume": name, "domain": res.Domain, "target": res.Target, "guest_output": res.GuestLog,
			})
		}
		for _, w := range res.Warnings {
			resp.Diagnostics.AddAttributeWarning(path.Root("capacity_bytes"), "Filesystem in the guest not grown", w)
		}
	}
	info, err := r.client.VolumeInfo(ctx, ref)
	if err != nil {
		resp.Diagnostics.AddError("Unable to read volume "+name+" after update", err.Error())
		return
	}
	plan.fromInfo(info)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *volumeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state volumeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, 5*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := r.client.DeleteVolume(ctx, state.ref())
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError("Unable to delete volume "+state.Pool.ValueString()+"/"+state.Name.ValueString(), err.Error()+poolStoppedNote(err))
	}
}

// ref is how a volume in state is looked up: by its key, in its pool. The pool only tells
// "gone" from "in a stopped pool" (libvirt finds keys in running pools only); there is no
// fallback by name, so that a volume made anew under the same name (a new key) is never
// taken for this one.
func (m *volumeModel) ref() libvirt.VolumeRef {
	return libvirt.VolumeRef{Key: m.ID.ValueString(), Pool: m.Pool.ValueString()}
}

// poolStoppedNote adds to a failed delete of a volume whose pool is stopped that nothing
// was deleted and what to do.
func poolStoppedNote(err error) string {
	if !libvirt.IsPoolInactive(err) {
		return ""
	}
	return "\n\nNothing was deleted, and the resource stays in state: start the pool, then destroy again."
}

// ImportState accepts <pool>/<name> or the volume key and stores the key as id; Read
// then fills in the rest. Sources cannot be known from the host and stay null.
func (r *volumeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := importContext(ctx, r.client, "libvirt_volume", req.ID)
	defer bound.end(&resp.Diagnostics)
	ref, err := libvirt.ParseVolumeRef(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import id for libvirt_volume", err.Error())
		return
	}
	info, err := r.client.VolumeInfo(ctx, ref)
	if err != nil {
		resp.Diagnostics.AddError("Unable to import volume "+ref.String(), err.Error())
		return
	}
	m := volumeModel{
		SourceURL: types.StringNull(), SourceFile: types.StringNull(), BackingVolume: types.StringNull(),
		CloneFrom: types.StringNull(), SourceChecksum: types.StringNull(), Format: types.StringNull(),
		Timeouts: timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes("create", "read", "update", "delete"))},
	}
	m.fromInfo(info)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// fromInfo sets what libvirt reports. libvirt's directory pools probe a raw file's
// content on refresh and may call a raw volume holding a CD image "iso" (and back):
// between raw and iso, the configured format stands.
func (m *volumeModel) fromInfo(info *libvirt.VolumeInfo) {
	m.ID = types.StringValue(info.Key)
	m.Name = types.StringValue(info.Name)
	m.Pool = types.StringValue(info.Pool)
	m.Path = types.StringValue(info.Path)
	m.CapacityBytes = types.Int64Value(int64(info.Capacity))
	m.AllocationBytes = types.Int64Value(int64(info.Allocation))
	have := m.Format.ValueString()
	switch {
	case info.Format == "":
		if m.Format.IsNull() || m.Format.IsUnknown() {
			m.Format = types.StringValue("raw")
		}
	case (have == "raw" || have == "iso") && (info.Format == "raw" || info.Format == "iso"):
	default:
		m.Format = types.StringValue(info.Format)
	}
}

// timeoutsAttrTypes is the object type of a timeouts block with the given operations,
// for a state made from scratch (import).
func timeoutsAttrTypes(ops ...string) map[string]attr.Type {
	t := make(map[string]attr.Type, len(ops))
	for _, op := range ops {
		t[op] = types.StringType
	}
	return t
}
