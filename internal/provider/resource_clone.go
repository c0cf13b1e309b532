package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// NewCloneResource is libvirt_clone.
func NewCloneResource() resource.Resource { return &cloneResource{resourceBase{typeName: "clone"}} }

type cloneResource struct {
	resourceBase
}

// cloneShutdownTimeout is how long delete lets a clone shut down before forcing it off.
const cloneShutdownTimeout = 30 * time.Second

type cloneModel struct {
	ID             types.String   `tfsdk:"id"`
	SourceDomainID types.String   `tfsdk:"source_domain_id"`
	Name           types.String   `tfsdk:"name"`
	Mode           types.String   `tfsdk:"mode"`
	Pool           types.String   `tfsdk:"pool"`
	VCPU           types.Int64    `tfsdk:"vcpu"`
	MemoryMiB      types.Int64    `tfsdk:"memory_mib"`
	Running        types.Bool     `tfsdk:"running"`
	CloudinitID    types.String   `tfsdk:"cloudinit_id"`
	Disks          types.List     `tfsdk:"disks"`
	MACs           types.List     `tfsdk:"macs"`
	NVRAM          types.String   `tfsdk:"nvram"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

func (m *cloneModel) readTimeouts() timeouts.Value { return m.Timeouts }

var cloneDiskAttrTypes = map[string]attr.Type{
	"target":    types.StringType,
	"volume_id": types.StringType,
	"path":      types.StringType,
	"pool":      types.StringType,
	"name":      types.StringType,
	"backing":   types.StringType,
}

func (r *cloneResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A clone of an existing domain: a new domain with the source's definition (CPU, machine, firmware, " +
			"devices, networks), a new UUID, new MACs (derived from the clone's name, never the source's), its own disks " +
			"`<name>-<target>.qcow2` and, for a UEFI source, its own nvram varstore (a copy of the source's when it has one, " +
			"else a fresh one from the firmware's template). Cdroms of the source, its cloud-init seed included, and an " +
			"Ignition config are not carried over: give the clone a seed of its own with `cloudinit_id`.\n\n" +
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
			"id": schema.StringAttribute{
				MarkdownDescription: "The clone's UUID (new, never the source's).",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"source_domain_id": schema.StringAttribute{
				MarkdownDescription: "The domain to clone: its UUID (e.g. `libvirt_domain.x.id`) or its name. It may be running. Changing it replaces the clone.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "The clone's domain name, unique on the host; its disks are named `<name>-<target>.qcow2`. Changing it replaces the clone.",
				Required:            true,
				Validators: []validator.String{stringvalidator.RegexMatches(domainNameRegexp,
					"must be a libvirt domain name: 1 to 200 characters, starting with a letter, digit or underscore, without '/' or whitespace")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"mode": schema.StringAttribute{
				MarkdownDescription: "`linked` (qcow2 overlays: fast, small, tied to the source's images) or `full` (standalone copies, backing chains flattened). Changing it replaces the clone.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.OneOf(domainxml.CloneLinked, domainxml.CloneFull)},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"pool": schema.StringAttribute{
				MarkdownDescription: "Storage pool for the clone's disks. Default: the pool of the source's first disk. Changing it replaces the clone.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"vcpu": schema.Int64Attribute{
				MarkdownDescription: "Number of vCPUs. Default: the source's current count. At most the source's maximum (its `max_vcpu`, " +
					"which the clone keeps as its own hot-add ceiling); more is an error at plan time. Growing it on a running clone " +
					"hot-adds vCPUs live (and in the definition); fewer vCPUs replace the clone.",
				Optional:      true,
				Computed:      true,
				Validators:    []validator.Int64{int64validator.Between(1, 4096)},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"memory_mib": schema.Int64Attribute{
				MarkdownDescription: "Memory in MiB (the current allocation). Default: the source's. At most the source's maximum " +
					"(its `max_memory_mib`, kept by the clone); more is an error at plan time. A change on a running clone is applied " +
					"live through the balloon and to the definition.",
				Optional:      true,
				Computed:      true,
				Validators:    []validator.Int64{int64validator.AtLeast(16)},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"running": schema.BoolAttribute{
				MarkdownDescription: "Whether the clone runs. Default `true`: started after it is made. Changing it starts the clone, or shuts it down (ACPI, then forced off after 30 s).",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
			"cloudinit_id": schema.StringAttribute{
				MarkdownDescription: "A cloud-init seed of the clone's own (e.g. `libvirt_cloudinit_iso.x.id`: a volume key or `<pool>/<name>`), " +
					"attached as a read-only SATA cdrom as `libvirt_domain` does. The source's seed is never shared. Changing it replaces the clone.",
				Optional:      true,
				Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"disks": schema.ListNestedAttribute{
				MarkdownDescription: "The clone's own disks (deleted with it), in the source's order.",
				Computed:            true,
				PlanModifiers:       []planmodifier.List{listplanmodifier.UseStateForUnknown()},
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"target":    schema.StringAttribute{Computed: true, MarkdownDescription: "Device name, as on the source (`vda`, ...)."},
						"volume_id": schema.StringAttribute{Computed: true, MarkdownDescription: "The volume key (for dir pools, its path)."},
						"path":      schema.StringAttribute{Computed: true, MarkdownDescription: "The file on the host."},
						"pool":      schema.StringAttribute{Computed: true, MarkdownDescription: "The pool holding it."},
						"name":      schema.StringAttribute{Computed: true, MarkdownDescription: "The volume name, `<name>-<target>.qcow2`."},
						"backing":   schema.StringAttribute{Computed: true, MarkdownDescription: "The backing file it is an overlay on; empty for a standalone copy."},
					},
				},
			},
			"macs": schema.ListAttribute{
				MarkdownDescription: "The clone's MAC addresses, one per network interface of the source, in order: `52:54:00` and three bytes derived from the clone's name and the interface's index.",
				Computed:            true,
				ElementType:         types.StringType,
				PlanModifiers:       []planmodifier.List{listplanmodifier.UseStateForUnknown()},
			},
			"nvram": schema.StringAttribute{
				MarkdownDescription: "Path of the clone's own UEFI varstore (`<dir of the source's>/<name>_VARS.fd`); empty for a BIOS source.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

// ModifyPlan checks at plan time what only the host can tell: the source exists and
// has disks, the name is free, the sizing fits the ceilings; and replaces the clone
// when it is to get fewer vCPUs.
func (r *cloneResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx, bound := planContext(ctx, req, r.client, "libvirt_clone", "name")
	defer bound.end(&resp.Diagnostics)
	if req.Plan.Raw.IsNull() || r.client == nil {
		return
	}
	var plan cloneModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *cloneModel
	if !req.State.Raw.IsNull() {
		state = &cloneModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	name := plan.Name.ValueString()
	creating := state == nil || state.Name.ValueString() != name ||
		state.SourceDomainID.ValueString() != plan.SourceDomainID.ValueString() || state.Mode.ValueString() != plan.Mode.ValueString() ||
		(known(plan.Pool) && plan.Pool.ValueString() != state.Pool.ValueString()) ||
		plan.CloudinitID.ValueString() != state.CloudinitID.ValueString()
	if state != nil && !creating && known(plan.VCPU) && plan.VCPU.ValueInt64() < state.VCPU.ValueInt64() {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("vcpu"))
		creating = true
	}

	var ceilVCPU uint
	var ceilMem uint64
	switch {
	case creating && known(plan.SourceDomainID):
		src, err := workflow.LookupCloneSource(ctx, r.client, plan.SourceDomainID.ValueString())
		switch {
		case errors.Is(err, libvirt.ErrNotFound):
			resp.Diagnostics.AddAttributeError(path.Root("source_domain_id"), "Unable to plan libvirt clone "+name,
				fmt.Sprintf("The source domain %q does not exist on %s.", plan.SourceDomainID.ValueString(), r.client.URI()))
			return
		case err != nil:
			resp.Diagnostics.AddAttributeError(path.Root("source_domain_id"), "Unable to plan libvirt clone "+name, err.Error())
			return
		}
		_, ceilVCPU, _, ceilMem = domainxml.Ceilings(src.Inactive)
		if known(plan.Name) && (state == nil || state.Name.ValueString() != name) {
			if _, err := r.client.LookupDomain(ctx, name); err == nil {
				resp.Diagnostics.AddAttributeError(path.Root("name"), "Unable to plan libvirt clone "+name,
					fmt.Sprintf("A domain named %q already exists on %s: choose another name for the clone.", name, r.client.URI()))
				return
			}
		}
	case !creating && state != nil:
		st, err := r.client.GetDomainStatus(ctx, state.ID.ValueString())
		if err != nil {
			return // Read reports it
		}
		d, err := parseDomain(st.XML)
		if err != nil {
			return
		}
		_, ceilVCPU, _, ceilMem = domainxml.Ceilings(d)
	}
	if ceilVCPU > 0 && known(plan.VCPU) && uint(plan.VCPU.ValueInt64()) > ceilVCPU {
		resp.Diagnostics.AddAttributeError(path.Root("vcpu"), "Invalid vcpu for libvirt clone "+name,
			fmt.Sprintf("Clone %s: vcpu %d is above the ceiling of %d vCPUs it keeps from its source (the source's max_vcpu). "+
				"Ask for at most %d, or give the source more hot-add headroom.", name, plan.VCPU.ValueInt64(), ceilVCPU, ceilVCPU))
	}
	if ceilMem > 0 && known(plan.MemoryMiB) && uint64(plan.MemoryMiB.ValueInt64()) > ceilMem {
		resp.Diagnostics.AddAttributeError(path.Root("memory_mib"), "Invalid memory_mib for libvirt clone "+name,
			fmt.Sprintf("Clone %s: memory_mib %d is above the ceiling of %d MiB it keeps from its source (the source's max_memory_mib). "+
				"Ask for at most %d, or give the source more memory headroom.", name, plan.MemoryMiB.ValueInt64(), ceilMem, ceilMem))
	}
}

func (r *cloneResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, req, resp, time.Minute,
		func(m *cloneModel) string { return "libvirt clone " + nameOr(m.Name, m.ID.ValueString()) },
		func(ctx context.Context, m *cloneModel) (*cloneModel, error) {
			return r.read(ctx, m.ID.ValueString(), m)
		})
}

// read builds the model from the clone's persistent definition and its record there.
func (r *cloneResource) read(ctx context.Context, id string, prior *cloneModel) (*cloneModel, error) {
	st, err := r.client.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	d, err := parseDomain(st.XML)
	if err != nil {
		return nil, err
	}
	meta, ok := domainxml.ParseCloneMeta(d)
	if !ok {
		return nil, fmt.Errorf("domain %s was not made by libvirt_clone (its definition has no clone record): manage it as a libvirt_domain instead", d.Name)
	}
	p, err := domainxml.FromDomain(d)
	if err != nil {
		return nil, err
	}
	m := &cloneModel{
		ID:             types.StringValue(d.UUID),
		SourceDomainID: types.StringValue(meta.SourceID),
		Name:           types.StringValue(d.Name),
		Mode:           types.StringValue(meta.Mode),
		Pool:           types.StringValue(meta.Pool),
		VCPU:           types.Int64Value(int64(p.Spec.VCPU)),
		MemoryMiB:      types.Int64Value(int64(p.Spec.MemoryMiB)),
		Running:        types.BoolValue(st.Active),
		CloudinitID:    types.StringNull(),
		NVRAM:          types.StringValue(domainxml.NVRAMPath(d)),
		Timeouts:       prior.Timeouts,
	}
	if known(prior.SourceDomainID) {
		m.SourceDomainID = prior.SourceDomainID
	}
	if p.Spec.CloudInit != nil {
		m.CloudinitID = types.StringValue(p.Spec.CloudInit.ID)
	}
	var disks []attr.Value
	for _, md := range meta.Disks {
		obj, diags := types.ObjectValue(cloneDiskAttrTypes, map[string]attr.Value{
			"target": types.StringValue(md.Target), "volume_id": types.StringValue(md.Key), "path": types.StringValue(md.Path),
			"pool": types.StringValue(md.Pool), "name": types.StringValue(md.Name), "backing": types.StringValue(md.Backing),
		})
		if diags.HasError() {
			return nil, fmt.Errorf("disks: %v", diags)
		}
		disks = append(disks, obj)
	}
	m.Disks = types.ListValueMust(types.ObjectType{AttrTypes: cloneDiskAttrTypes}, disks)
	var macs []attr.Value
	for _, n := range p.Spec.Interfaces {
		macs = append(macs, types.StringValue(strings.ToLower(n.MAC)))
	}
	m.MACs = types.ListValueMust(types.StringType, macs)
	return m, nil
}

func fillCloneUnknowns(m *cloneModel) {
	for _, v := range []*types.String{&m.Pool, &m.NVRAM} {
		if v.IsUnknown() {
			*v = types.StringNull()
		}
	}
	for _, v := range []*types.Int64{&m.VCPU, &m.MemoryMiB} {
		if v.IsUnknown() {
			*v = types.Int64Null()
		}
	}
	if m.Disks.IsUnknown() {
		m.Disks = types.ListNull(types.ObjectType{AttrTypes: cloneDiskAttrTypes})
	}
	if m.MACs.IsUnknown() {
		m.MACs = types.ListNull(types.StringType)
	}
}

// Update applies vcpu (growing only: fewer replace the clone), memory_mib and running.
func (r *cloneResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state cloneModel
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
	id := state.ID.ValueString()
	summary := "Unable to update libvirt clone " + plan.Name.ValueString()
	st, err := r.client.GetDomainStatus(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	cur, err := parseDomain(st.XML)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	// The ceilings stay what the clone kept from its source: only the current values move.
	oldSizing := domainxml.Sizing(cur)
	oldSizing.MaxVCPU, oldSizing.MaxMemoryMiB = oldSizing.EffectiveMaxVCPU(), oldSizing.EffectiveMaxMemoryMiB()
	newSizing := oldSizing
	if known(plan.VCPU) {
		newSizing.VCPU = uint(plan.VCPU.ValueInt64())
	}
	if known(plan.MemoryMiB) {
		newSizing.MemoryMiB = uint64(plan.MemoryMiB.ValueInt64())
	}
	_, err = workflow.Apply(ctx, r.client, workflow.Change{
		ID: id, Name: plan.Name.ValueString(), Old: oldSizing, New: newSizing, Running: plan.Running.ValueBool(),
		ShutdownTimeout: cloneShutdownTimeout, Redefine: workflow.SizingOnly(newSizing),
	})
	got, rerr := readBack(ctx, func(ctx context.Context) (*cloneModel, error) { return r.read(ctx, id, &plan) })
	if rerr != nil {
		got = &state
		err = errors.Join(err, rerr)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, got)...)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
	}
}

// Delete removes the clone's domain (with its varstore) and the disks it owns, as its
// record in the definition names them (the state's list when the domain is gone).
func (r *cloneResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state cloneModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := state.ID.ValueString()
	name := state.Name.ValueString()
	summary := "Unable to delete libvirt clone " + nameOr(state.Name, id)

	// key -> the volume's name and pool (the pool tells "gone" from "in a stopped pool")
	keys := map[string]struct{ name, pool string }{}
	var stateDisks []struct {
		Target   types.String `tfsdk:"target"`
		VolumeID types.String `tfsdk:"volume_id"`
		Path     types.String `tfsdk:"path"`
		Pool     types.String `tfsdk:"pool"`
		Name     types.String `tfsdk:"name"`
		Backing  types.String `tfsdk:"backing"`
	}
	if !state.Disks.IsNull() && !state.Disks.IsUnknown() {
		resp.Diagnostics.Append(state.Disks.ElementsAs(ctx, &stateDisks, false)...)
	}
	for _, d := range stateDisks {
		keys[d.VolumeID.ValueString()] = struct{ name, pool string }{d.Name.ValueString(), d.Pool.ValueString()}
	}
	if st, err := r.client.GetDomainStatus(ctx, id); err == nil {
		if d, perr := parseDomain(st.XML); perr == nil {
			if meta, ok := domainxml.ParseCloneMeta(d); ok {
				for _, md := range meta.Disks {
					keys[md.Key] = struct{ name, pool string }{md.Name, md.Pool}
				}
			}
		}
	} else if !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}

	_, err := r.client.ShutdownDomain(ctx, id, cloneShutdownTimeout)
	if err == nil {
		err = r.client.UndefineDomain(ctx, id)
	}
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	for key, vol := range keys {
		vname := vol.name
		// Only volumes named as a clone's own disks: never a source's.
		if key == "" || !strings.HasPrefix(vname, name+"-") || !strings.HasSuffix(vname, ".qcow2") {
			tflog.Warn(ctx, "not deleting a volume that is not named as this clone's disk", map[string]any{"key": key, "name": vname})
			continue
		}
		if err := r.client.DeleteVolume(ctx, libvirt.VolumeRef{Key: key, Pool: vol.pool}); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			resp.Diagnostics.AddError(summary, fmt.Sprintf("delete disk %s: %v", key, err))
		}
	}
}

func (r *cloneResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := importContext(ctx, r.client, "libvirt_clone", req.ID)
	defer bound.end(&resp.Diagnostics)
	if req.ID == "" {
		resp.Diagnostics.AddError("Invalid import id", "expected the clone's domain name or UUID, got an empty string")
		return
	}
	d, err := r.client.LookupDomain(ctx, req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Unable to import libvirt clone "+req.ID, err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), libvirt.UUIDString(d))...)
}
