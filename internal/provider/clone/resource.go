package clone

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

type Resource struct {
	tfkit.ResourceBase
}

type Model struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID             types.String `tfsdk:"id"`
	SourceDomainID types.String `tfsdk:"source_domain_id"`
	Name           types.String `tfsdk:"name"`
	Mode           types.String `tfsdk:"mode"`
	Pool           types.String `tfsdk:"pool"`
	VCPU           types.Int64  `tfsdk:"vcpu"`
	MemoryMiB      types.Int64  `tfsdk:"memory_mib"`
	Running        types.Bool   `tfsdk:"running"`
	CloudinitID    types.String `tfsdk:"cloudinit_id"`
	Disks          types.List   `tfsdk:"disks"`
	MACs           types.List   `tfsdk:"macs"`
	NVRAM          types.String `tfsdk:"nvram"`
}

// cloneDiskModel is one element of the computed `disks`.
type cloneDiskModel struct {
	Target   types.String `tfsdk:"target"`
	VolumeID types.String `tfsdk:"volume_id"`
	Path     types.String `tfsdk:"path"`
	Pool     types.String `tfsdk:"pool"`
	Name     types.String `tfsdk:"name"`
	Backing  types.String `tfsdk:"backing"`
}

// cloneDiskAttrTypes is the object type of a cloneDiskModel.
var cloneDiskAttrTypes = map[string]attr.Type{
	"target":    types.StringType,
	"volume_id": types.StringType,
	"path":      types.StringType,
	"pool":      types.StringType,
	"name":      types.StringType,
	"backing":   types.StringType,
}

// ModifyPlan checks at plan time what only the host can tell: the source exists and
// has disks, the name is free, the sizing fits the ceilings; and replaces the clone
// when it is to get fewer vCPUs.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx, bound := tfkit.PlanContext(ctx, req, r.Client, "libvirt_clone", "name")
	defer bound.End(&resp.Diagnostics)
	if req.Plan.Raw.IsNull() || r.Client == nil {
		return
	}
	var plan Model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	state, d := tfkit.PriorState[Model](ctx, req.State)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	name := plan.Name.ValueString()
	creating := state == nil || state.Name.ValueString() != name ||
		state.SourceDomainID.ValueString() != plan.SourceDomainID.ValueString() || state.Mode.ValueString() != plan.Mode.ValueString() ||
		(tfkit.Known(plan.Pool) && plan.Pool.ValueString() != state.Pool.ValueString()) ||
		plan.CloudinitID.ValueString() != state.CloudinitID.ValueString()
	if state != nil && !creating && tfkit.Known(plan.VCPU) && plan.VCPU.ValueInt64() < state.VCPU.ValueInt64() {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("vcpu"))
		creating = true
	}

	var ceilVCPU uint
	var ceilMem uint64
	switch {
	case creating && tfkit.Known(plan.SourceDomainID):
		src, err := workflow.LookupCloneSource(ctx, r.Client, plan.SourceDomainID.ValueString())
		switch {
		case errors.Is(err, libvirt.ErrNotFound):
			resp.Diagnostics.AddAttributeError(path.Root("source_domain_id"), "Unable to plan libvirt clone "+name,
				fmt.Sprintf("The source domain %q does not exist on %s.", plan.SourceDomainID.ValueString(), r.Client.URI()))
			return
		case err != nil:
			resp.Diagnostics.AddAttributeError(path.Root("source_domain_id"), "Unable to plan libvirt clone "+name, err.Error())
			return
		}
		_, ceilVCPU, _, ceilMem = domainxml.Ceilings(src.Inactive)
		if tfkit.Known(plan.Name) && (state == nil || state.Name.ValueString() != name) {
			if _, err := r.Client.LookupDomain(ctx, name); err == nil {
				resp.Diagnostics.AddAttributeError(path.Root("name"), "Unable to plan libvirt clone "+name,
					fmt.Sprintf("A domain named %q already exists on %s: choose another name for the clone.", name, r.Client.URI()))
				return
			}
		}
	case !creating && state != nil:
		st, err := r.Client.GetDomainStatus(ctx, state.ID.ValueString())
		if err != nil {
			return // Read reports it
		}
		d, err := domainxml.ParseDomain(st.XML)
		if err != nil {
			return
		}
		_, ceilVCPU, _, ceilMem = domainxml.Ceilings(d)
	}
	if ceilVCPU > 0 && tfkit.Known(plan.VCPU) && uint(plan.VCPU.ValueInt64()) > ceilVCPU {
		resp.Diagnostics.AddAttributeError(path.Root("vcpu"), "Invalid vcpu for libvirt clone "+name,
			fmt.Sprintf("Clone %s: vcpu %d is above the ceiling of %d vCPUs it keeps from its source (the source's max_vcpu). "+
				"Ask for at most %d, or give the source more hot-add headroom.", name, plan.VCPU.ValueInt64(), ceilVCPU, ceilVCPU))
	}
	if ceilMem > 0 && tfkit.Known(plan.MemoryMiB) && uint64(plan.MemoryMiB.ValueInt64())*domainxml.KiBPerMiB > ceilMem {
		ceilMiB := domainxml.MiBOf(ceilMem) // the most a whole number of MiB can be
		resp.Diagnostics.AddAttributeError(path.Root("memory_mib"), "Invalid memory_mib for libvirt clone "+name,
			fmt.Sprintf("Clone %s: memory_mib %d is above the ceiling of %s it keeps from its source (the source's maximum memory). "+
				"Ask for at most %d, or give the source more memory headroom.", name, plan.MemoryMiB.ValueInt64(), domainxml.FormatMemory(ceilMem)[0], ceilMiB))
	}
}

func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.Refresh(ctx, req, resp, time.Minute,
		func(m *Model) string { return "libvirt clone " + tfkit.NameOr(m.Name, m.ID.ValueString()) },
		func(ctx context.Context, m *Model) (*Model, error) {
			return r.read(ctx, m.ID.ValueString(), m)
		})
}

// read builds the model from the clone's persistent definition and its record there.
func (r *Resource) read(ctx context.Context, id string, prior *Model) (*Model, error) {
	st, err := r.Client.GetDomainStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	d, err := domainxml.ParseDomain(st.XML)
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
	m := &Model{
		ID:             types.StringValue(d.UUID),
		SourceDomainID: types.StringValue(meta.SourceID),
		Name:           types.StringValue(d.Name),
		Mode:           types.StringValue(meta.Mode),
		Pool:           types.StringValue(meta.Pool),
		VCPU:           types.Int64Value(int64(p.Spec.VCPU)),
		MemoryMiB:      types.Int64Value(int64(domainxml.MiBOf(p.Spec.MemoryKiB))),
		Running:        types.BoolValue(st.Active),
		CloudinitID:    types.StringNull(),
		NVRAM:          types.StringValue(domainxml.NVRAMPath(d)),
		WithTimeouts:   prior.WithTimeouts,
	}
	if tfkit.Known(prior.SourceDomainID) {
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

func fillCloneUnknowns(m *Model) {
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

func cloneWhat(m *Model) string { return "libvirt clone " + tfkit.NameOr(m.Name, m.ID.ValueString()) }

// Update applies vcpu (growing only: fewer replace the clone), memory_mib and running.
func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.Update(ctx, req, resp, 10*time.Minute, cloneWhat, func(ctx context.Context, plan, state *Model, _ *diag.Diagnostics) (*Model, error) {
		id := state.ID.ValueString()
		var vcpu uint
		var mib uint64
		if tfkit.Known(plan.VCPU) {
			vcpu = uint(plan.VCPU.ValueInt64())
		}
		if tfkit.Known(plan.MemoryMiB) {
			mib = uint64(plan.MemoryMiB.ValueInt64())
		}
		err := workflow.UpdateClone(ctx, r.Client, id, plan.Name.ValueString(), vcpu, mib, plan.Running.ValueBool())
		got, rerr := tfkit.ReadBack(ctx, func(ctx context.Context) (*Model, error) { return r.read(ctx, id, plan) })
		if rerr != nil {
			return state, errors.Join(err, rerr)
		}
		return got, err
	})
}

// Delete removes the clone's domain (with its varstore) and the disks it owns
// (workflow.DeleteClone: never a source's).
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 10*time.Minute, cloneWhat, func(ctx context.Context, state *Model, d *diag.Diagnostics) error {
		var disks []cloneDiskModel
		if !state.Disks.IsNull() && !state.Disks.IsUnknown() {
			d.Append(state.Disks.ElementsAs(ctx, &disks, false)...)
		}
		var known []domainxml.CloneMetaDisk
		for _, x := range disks {
			known = append(known, domainxml.CloneMetaDisk{Target: x.Target.ValueString(), Key: x.VolumeID.ValueString(),
				Pool: x.Pool.ValueString(), Name: x.Name.ValueString(), Path: x.Path.ValueString(), Backing: x.Backing.ValueString()})
		}
		return workflow.DeleteClone(ctx, r.Client, state.ID.ValueString(), state.Name.ValueString(), known,
			func(msg string, fields map[string]any) { tflog.Warn(ctx, msg, fields) })
	})
}

func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := tfkit.ImportContext(ctx, r.Client, "libvirt_clone", req.ID)
	defer bound.End(&resp.Diagnostics)
	if req.ID == "" {
		resp.Diagnostics.AddError("Invalid import id", "expected the clone's domain name or UUID, got an empty string")
		return
	}
	d, err := r.Client.LookupDomain(ctx, req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Unable to import libvirt clone "+req.ID, err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), libvirt.UUIDString(d))...)
}

// Create makes the clone (workflow.Clone: its disks, its varstore, its domain, all
// removed again when a step fails) and reads it back.
func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 30*time.Minute,
		func(m *Model) string { return "libvirt clone " + m.Name.ValueString() },
		func(ctx context.Context, plan *Model, d *diag.Diagnostics) (*Model, error) {
			res, err := workflow.Clone(ctx, r.Client, workflow.CloneRequest{
				SourceID: plan.SourceDomainID.ValueString(), Name: plan.Name.ValueString(), Mode: plan.Mode.ValueString(),
				Pool: tfkit.StringOf(plan.Pool), VCPU: uint(plan.VCPU.ValueInt64()), MemoryMiB: uint64(plan.MemoryMiB.ValueInt64()),
				CloudinitID: tfkit.StringOf(plan.CloudinitID), Running: plan.Running.ValueBool(),
				Log: func(msg string, fields map[string]any) { tflog.Info(ctx, msg, fields) },
			})
			if err != nil {
				return nil, err
			}
			for _, w := range res.Warnings {
				d.AddWarning("The source of linked clone "+plan.Name.ValueString()+" is now its backing image", w)
			}
			got, err := tfkit.ReadBack(ctx, func(ctx context.Context) (*Model, error) { return r.read(ctx, res.ID, plan) })
			if err != nil {
				// The clone exists and is complete: keep it tracked, report the failed read.
				plan.ID = types.StringValue(res.ID)
				fillCloneUnknowns(plan)
				return plan, err
			}
			return got, nil
		})
}
