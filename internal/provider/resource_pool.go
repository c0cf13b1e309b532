package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// NewPoolResource is libvirt_pool.
func NewPoolResource() resource.Resource { return &poolResource{resourceBase{typeName: "pool"}} }

type poolResource struct {
	resourceBase
}

type poolModel struct {
	ID           types.String   `tfsdk:"id"`
	Name         types.String   `tfsdk:"name"`
	Type         types.String   `tfsdk:"type"`
	TargetPath   types.String   `tfsdk:"target_path"`
	Source       types.Object   `tfsdk:"source"`
	Autostart    types.Bool     `tfsdk:"autostart"`
	Active       types.Bool     `tfsdk:"active"`
	ForceDestroy types.Bool     `tfsdk:"force_destroy"`
	Capacity     types.Int64    `tfsdk:"capacity_bytes"`
	Allocation   types.Int64    `tfsdk:"allocation_bytes"`
	Available    types.Int64    `tfsdk:"available_bytes"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

type poolSourceModel struct {
	Devices types.List   `tfsdk:"devices"`
	Name    types.String `tfsdk:"name"`
	Host    types.String `tfsdk:"host"`
	Dir     types.String `tfsdk:"dir"`
	Format  types.String `tfsdk:"format"`
}

var poolSourceAttrTypes = map[string]attr.Type{
	"devices": types.ListType{ElemType: types.StringType}, "name": types.StringType,
	"host": types.StringType, "dir": types.StringType, "format": types.StringType,
}

func (r *poolResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	computedReplace := []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplaceIfConfigured()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A libvirt storage pool: a directory (`dir`), an LVM volume group (`logical`) or a mounted network " +
			"share (`netfs`) that holds volumes. On create the pool is defined, built and started: build makes the " +
			"directory of a `dir` pool and the mount point of a `netfs` pool, and creates the volume group of a `logical` " +
			"pool on `source.devices` — never overwriting a device that carries any signature; devices that hold the volume " +
			"group already are used as they are.\n\n" +
			"Destroy stops (for `netfs`: unmounts) and undefines the pool, and removes the directory of a `dir` pool and " +
			"the mount point of a `netfs` pool (libvirt removes them only when empty). A `logical` pool's volume group is " +
			"left on the host (remove it with `vgremove` when it is no longer wanted). A pool " +
			"that still holds volumes is not destroyed unless `force_destroy = true`, which deletes its volumes first.\n\n" +
			"Every change but `autostart` and `force_destroy` replaces the pool.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The pool's UUID.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Pool name, unique on the host; also the import id. Changing it replaces the pool.",
				Required:            true,
				PlanModifiers:       replace,
				Validators: []validator.String{stringvalidator.RegexMatches(objectNameRegexp,
					"must start with a letter or digit and hold only letters, digits, '_', '.', '+' and '-'")},
			},
			"type": schema.StringAttribute{
				MarkdownDescription: "`dir`, `logical` or `netfs`. Changing it replaces the pool.",
				Required:            true,
				PlanModifiers:       replace,
				Validators:          []validator.String{stringvalidator.OneOf(hostxml.PoolTypes...)},
			},
			"target_path": schema.StringAttribute{
				MarkdownDescription: "Where the volumes appear on the host: the directory of a `dir` pool (required), the mount " +
					"point of a `netfs` pool (required), `/dev/<volume group>` for a `logical` pool (always that; computed " +
					"when omitted). Changing it replaces the pool.",
				Optional:      true,
				Computed:      true,
				PlanModifiers: computedReplace,
			},
			"autostart": schema.BoolAttribute{
				MarkdownDescription: "Start the pool when libvirtd starts. Default `false`. Changes in place.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"active": schema.BoolAttribute{
				MarkdownDescription: "Whether the pool is running, as libvirt reports it. A pool that stopped (a host " +
					"rebooted without `autostart`, a `netfs` share that did not mount) stays in state with `active = false`, " +
					"and its volumes stay in state too: libvirt cannot see into a stopped pool, so their refresh fails, naming " +
					"the pool, until it runs again (`virsh pool-start <name>`).",
				Computed: true,
			},
			"force_destroy": schema.BoolAttribute{
				MarkdownDescription: "Let destroy delete the volumes the pool still holds (all of them, also those no " +
					"configuration manages). Default `false`: destroying a pool that holds volumes fails, naming how many. " +
					"Only stored in state; changes in place.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"capacity_bytes": schema.Int64Attribute{
				MarkdownDescription: "Size of the pool's storage, in bytes, as libvirt reports it after a refresh.",
				Computed:            true,
			},
			"allocation_bytes": schema.Int64Attribute{
				MarkdownDescription: "Bytes in use, after a refresh. Changes as volumes are written; never causes a diff.",
				Computed:            true,
			},
			"available_bytes": schema.Int64Attribute{
				MarkdownDescription: "Bytes free, after a refresh. Changes as volumes are written; never causes a diff.",
				Computed:            true,
			},
		},
		Blocks: map[string]schema.Block{
			"source": schema.SingleNestedBlock{
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
					"name": schema.StringAttribute{
						MarkdownDescription: "`logical`: the volume group's name. Default: the pool's name.",
						Optional:            true,
						Computed:            true,
						PlanModifiers:       computedReplace,
					},
					"host": schema.StringAttribute{
						MarkdownDescription: "`netfs`: the file server's host name or address.",
						Optional:            true,
						PlanModifiers:       replace,
					},
					"dir": schema.StringAttribute{
						MarkdownDescription: "`netfs`: the exported directory on the server, e.g. `/exports/vms`.",
						Optional:            true,
						PlanModifiers:       replace,
					},
					"format": schema.StringAttribute{
						MarkdownDescription: "`netfs`: `auto` (default), `nfs`, `glusterfs` or `cifs`. `logical`: `lvm2` (the only one).",
						Optional:            true,
						Computed:            true,
						PlanModifiers:       computedReplace,
					},
				},
			},
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}),
		},
	}
}

// toSpec turns the model into a spec; ok is false while a value is unknown. In a plan,
// computed values that libvirt is to fill in (target_path, source.name, source.format)
// are unknown: with computedAsEmpty they count as not given.
func (m *poolModel) toSpec(ctx context.Context, computedAsEmpty bool) (p *hostxml.Pool, ok bool, diags diag.Diagnostics) {
	if !allKnown(m.Name, m.Type) {
		return nil, false, nil
	}
	if !computedAsEmpty && !allKnown(m.TargetPath, m.Source) {
		return nil, false, nil
	}
	if m.Source.IsUnknown() {
		return nil, false, nil
	}
	if !m.Source.IsNull() {
		var s poolSourceModel
		diags.Append(m.Source.As(ctx, &s, basetypes.ObjectAsOptions{})...)
		if !allKnown(s.Devices, s.Host, s.Dir) {
			return nil, false, diags
		}
	}
	p = &hostxml.Pool{Name: m.Name.ValueString(), Type: m.Type.ValueString(), TargetPath: strOrEmpty(m.TargetPath)}
	if !m.Source.IsNull() {
		var s poolSourceModel
		diags.Append(m.Source.As(ctx, &s, basetypes.ObjectAsOptions{})...)
		p.Source = &hostxml.PoolSource{Name: strOrEmpty(s.Name), Host: strOrEmpty(s.Host), Dir: strOrEmpty(s.Dir), Format: strOrEmpty(s.Format)}
		if !s.Devices.IsNull() {
			diags.Append(s.Devices.ElementsAs(ctx, &p.Source.Devices, false)...)
		}
	}
	return p, !diags.HasError(), diags
}

func (r *poolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m poolModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, ok, diags := m.toSpec(ctx, false)
	resp.Diagnostics.Append(diags...)
	if !ok {
		return
	}
	for _, e := range p.Validate() {
		resp.Diagnostics.AddAttributeError(path.Root(e.Attr), "Invalid storage pool "+e.Attr, e.Detail)
	}
}

// ModifyPlan puts what libvirt will fill in (a logical pool's volume group name, target
// path and format; a netfs pool's format) into the plan, so that plans show real values.
func (r *poolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, config poolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() {
		// An update keeps the values (UseStateForUnknown), unless the pool is replaced
		// under another name or type: then they are worked out anew from the configuration.
		var state poolModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if resp.Diagnostics.HasError() || (state.Name.Equal(plan.Name) && state.Type.Equal(plan.Type)) {
			return
		}
	}
	p, ok, _ := config.toSpec(ctx, true)
	if !ok {
		return
	}
	d := p.WithDefaults()
	if d.TargetPath != "" {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("target_path"), d.TargetPath)...)
	}
	if d.Source != nil && !plan.Source.IsNull() {
		if p.Type == hostxml.PoolLogical {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("source").AtName("name"), d.Source.Name)...)
		}
		if p.Type != hostxml.PoolDir {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("source").AtName("format"), d.Source.Format)...)
		}
	}
	if p.Type == hostxml.PoolDir && !plan.Source.IsNull() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("source").AtName("name"), types.StringNull())...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("source").AtName("format"), types.StringNull())...)
	}
}

func (r *poolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan poolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 5*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := "Unable to create storage pool " + plan.Name.ValueString()
	p, ok, diags := plan.toSpec(ctx, true)
	resp.Diagnostics.Append(diags...)
	if !ok {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "a value is still unknown at apply time")
		}
		return
	}
	d := p.WithDefaults()
	if err := r.client.CreatePool(ctx, d.ToXML(), plan.Autostart.ValueBool()); err != nil {
		resp.Diagnostics.AddError(summary, err.Error()+alreadyExistsHint(err, "libvirt_pool", p.Name))
		return
	}
	if !r.readInto(ctx, &plan, &resp.Diagnostics, summary) {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "the pool is gone right after it was created")
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// readInto refreshes m from libvirt; false when the pool is gone (or on error, then in d).
func (r *poolResource) readInto(ctx context.Context, m *poolModel, d *diag.Diagnostics, summary string) bool {
	st, err := r.client.ReadPool(ctx, m.Name.ValueString())
	if errors.Is(err, libvirt.ErrNotFound) {
		return false
	}
	if err != nil {
		d.AddError(summary, err.Error())
		return false
	}
	p := hostxml.PoolFromXML(st.Def)
	m.ID = types.StringValue(st.UUID)
	m.Name = types.StringValue(p.Name)
	m.Type = types.StringValue(p.Type)
	m.TargetPath = strOrNull(p.TargetPath)
	m.Autostart = types.BoolValue(st.Autostart)
	m.Active = types.BoolValue(st.Active)
	if m.ForceDestroy.IsNull() || m.ForceDestroy.IsUnknown() {
		m.ForceDestroy = types.BoolValue(false)
	}
	m.Capacity = types.Int64Value(int64(st.Capacity))
	m.Allocation = types.Int64Value(int64(st.Allocation))
	m.Available = types.Int64Value(int64(st.Available))
	if p.Source == nil {
		m.Source = types.ObjectNull(poolSourceAttrTypes)
		return true
	}
	var prior poolSourceModel
	if !m.Source.IsNull() && !m.Source.IsUnknown() {
		d.Append(m.Source.As(ctx, &prior, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})...)
	} else {
		prior.Devices = types.ListNull(types.StringType)
	}
	var devs []attr.Value
	for _, dev := range p.Source.Devices {
		devs = append(devs, types.StringValue(dev))
	}
	m.Source = types.ObjectValueMust(poolSourceAttrTypes, map[string]attr.Value{
		"devices": listOrNull(types.StringType, devs, prior.Devices),
		"name":    strOrNull(p.Source.Name),
		"host":    strOrNull(p.Source.Host),
		"dir":     strOrNull(p.Source.Dir),
		"format":  strOrNull(p.Source.Format),
	})
	return true
}

func (r *poolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state poolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Read(ctx, time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !r.readInto(ctx, &state, &resp.Diagnostics, "Unable to read storage pool "+state.Name.ValueString()) {
		if !resp.Diagnostics.HasError() {
			tflog.Info(ctx, "storage pool is gone; removing it from state", map[string]any{"name": state.Name.ValueString()})
			resp.State.RemoveResource(ctx)
		}
		return
	}
	if !state.Active.ValueBool() {
		name := state.Name.ValueString()
		resp.Diagnostics.AddWarning("Storage pool "+name+" is not running",
			fmt.Sprintf("libvirt cannot see the volumes of a stopped pool, so the volumes in %s cannot be read or deleted "+
				"(they stay in state). Start it: virsh pool-start %s; set autostart = true to have it start with the host.", name, name))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *poolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state poolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, 2*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	summary := "Unable to update storage pool " + plan.Name.ValueString()
	if !plan.Autostart.Equal(state.Autostart) {
		if err := r.client.SetPoolAutostart(ctx, plan.Name.ValueString(), plan.Autostart.ValueBool()); err != nil {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
	}
	if !r.readInto(ctx, &plan, &resp.Diagnostics, summary) {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.AddError(summary, "the pool is gone")
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *poolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state poolModel
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
	name := state.Name.ValueString()
	summary := "Unable to delete storage pool " + name
	// The volumes can only be counted in a running pool. One that cannot start (its
	// directory, device or server gone) is only undefined: its storage is not touched.
	if err := r.client.StartPool(ctx, name); err != nil {
		if errors.Is(err, libvirt.ErrNotFound) {
			return
		}
		if libvirt.IsTransport(err) {
			resp.Diagnostics.AddError(summary, err.Error())
			return
		}
		if _, derr := r.client.DeletePool(ctx, name, false); derr != nil && !errors.Is(derr, libvirt.ErrNotFound) {
			resp.Diagnostics.AddError(summary, derr.Error())
			return
		}
		resp.Diagnostics.AddWarning("Storage pool "+name+" undefined without touching its storage",
			fmt.Sprintf("The pool could not be started to count its volumes (%v), so it was only undefined: whatever is "+
				"left at %s stays there.", err, state.TargetPath.ValueString()))
		return
	}
	vols, err := r.client.PoolVolumes(ctx, name)
	if err != nil {
		if errors.Is(err, libvirt.ErrNotFound) {
			return
		}
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if len(vols) > 0 {
		if !state.ForceDestroy.ValueBool() {
			resp.Diagnostics.AddError(summary, fmt.Sprintf("Storage pool %s still holds %d volume(s): %s. Delete them first, "+
				"or set force_destroy = true (and apply) to have destroy delete them with the pool.", name, len(vols), listShort(vols)))
			return
		}
		for _, v := range vols {
			if err := r.client.DeletePoolVolume(ctx, name, v); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
				resp.Diagnostics.AddError(summary, fmt.Sprintf("force_destroy: %v", err))
				return
			}
		}
	}
	typ := state.Type.ValueString()
	warn, err := r.client.DeletePool(ctx, name, typ == hostxml.PoolDir || typ == hostxml.PoolNetfs)
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if warn != nil {
		resp.Diagnostics.AddWarning("Storage pool "+name+" deleted; its directory was left", warn.Error())
	}
}

func listShort(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}

func (r *poolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !objectNameRegexp.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("expected the storage pool's name, e.g. default, got %q", req.ID))
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}

// alreadyExistsHint suggests importing when libvirt refuses a definition because an object
// of that name exists.
func alreadyExistsHint(err error, typ, name string) string {
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		return ""
	}
	return fmt.Sprintf("\n\nAn object named %q exists on the host already: import it (terraform import %s.<name> %s) or choose another name.", name, typ, name)
}
