package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

type PoolResource struct {
	tfkit.ResourceBase
}

type PoolModel struct {
	tfkit.WithTimeouts
	tfkit.OnHost
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Type         types.String `tfsdk:"type"`
	TargetPath   types.String `tfsdk:"target_path"`
	Source       types.Object `tfsdk:"source"`
	Autostart    types.Bool   `tfsdk:"autostart"`
	Active       types.Bool   `tfsdk:"active"`
	ForceDestroy types.Bool   `tfsdk:"force_destroy"`
	Capacity     types.Int64  `tfsdk:"capacity_bytes"`
	Allocation   types.Int64  `tfsdk:"allocation_bytes"`
	Available    types.Int64  `tfsdk:"available_bytes"`
}

// toSpec turns the model into a spec; ok is false while a value is unknown. In a plan,
// computed values that libvirt is to fill in (target_path, source.name, source.format)
// are unknown: with computedAsEmpty they count as not given.
func (m *PoolModel) toSpec(ctx context.Context, computedAsEmpty bool) (p *hostxml.Pool, ok bool, diags diag.Diagnostics) {
	if !tfkit.AllKnown(m.Name, m.Type) {
		return nil, false, nil
	}
	if !computedAsEmpty && !tfkit.AllKnown(m.TargetPath, m.Source) {
		return nil, false, nil
	}
	if m.Source.IsUnknown() {
		return nil, false, nil
	}
	p = &hostxml.Pool{Name: m.Name.ValueString(), Type: m.Type.ValueString(), TargetPath: tfkit.StringOf(m.TargetPath)}
	if !m.Source.IsNull() {
		s, ok := sourceKnown(ctx, m.Source, &diags)
		if !ok {
			return nil, false, diags
		}
		p.Source = s.toSpec(ctx, &diags)
	}
	return p, !diags.HasError(), diags
}

func (r *PoolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	tfkit.ValidateSpec(ctx, req, resp, "storage pool", func(m *PoolModel, ctx context.Context) (*hostxml.Pool, bool, diag.Diagnostics) {
		return m.toSpec(ctx, false)
	})
}

// ModifyPlan puts what libvirt will fill in (a logical pool's volume group name, target
// path and format; a netfs pool's format) into the plan, so that plans show real values.
func (r *PoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	plan, config, ok := tfkit.GetBoth[PoolModel](ctx, &resp.Diagnostics, req.Plan, req.Config)
	if !ok {
		return
	}
	if !req.State.Raw.IsNull() {
		// An update keeps the values (UseStateForUnknown), unless the pool is replaced
		// under another name or type: then they are worked out anew from the configuration.
		var state PoolModel
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
	if plan.TargetPath.IsUnknown() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("target_path"), tfkit.StringOrNull(d.TargetPath))...)
	}
	if d.Source == nil || plan.Source.IsNull() {
		return
	}
	// What libvirt fills in, where the configuration leaves it out; null where it has none.
	var s poolSourceModel
	resp.Diagnostics.Append(plan.Source.As(ctx, &s, basetypes.ObjectAsOptions{UnhandledUnknownAsEmpty: true})...)
	for name, v := range map[string]types.String{"name": s.Name, "format": s.Format, "dir": s.Dir} {
		if !v.IsUnknown() {
			continue
		}
		fill := map[string]string{"name": d.Source.Name, "format": d.Source.Format, "dir": d.Source.Dir}[name]
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("source").AtName(name), tfkit.StringOrNull(fill))...)
	}
}

func (m *PoolModel) what() string { return "storage pool " + m.Name.ValueString() }

func (r *PoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	tfkit.Create(ctx, req, resp, 5*time.Minute, (*PoolModel).what, func(ctx context.Context, plan *PoolModel, d *diag.Diagnostics) (*PoolModel, error) {
		p, ok, diags := plan.toSpec(ctx, true)
		d.Append(diags...)
		if !ok {
			if diags.HasError() {
				return nil, nil
			}
			return nil, errors.New("a value is still unknown at apply time")
		}
		full := p.WithDefaults()
		start := plan.Active.IsNull() || plan.Active.IsUnknown() || plan.Active.ValueBool()
		if err := r.Client.CreatePool(ctx, full.ToXML(), plan.Autostart.ValueBool(), start); err != nil {
			return nil, fmt.Errorf("%w%s", err, tfkit.AlreadyExistsHint(err, "libvirt_pool", p.Name))
		}
		return r.readBack(ctx, plan, "created")
	})
}

// readBack reads the pool back after a change (see crud.go's readBack).
func (r *PoolResource) readBack(ctx context.Context, m *PoolModel, done string) (*PoolModel, error) {
	_, err := tfkit.ReadBack(ctx, func(ctx context.Context) (*PoolModel, error) { return m, r.look(ctx, m) })
	if errors.Is(err, libvirt.ErrNotFound) {
		return nil, fmt.Errorf("the pool is gone right after it was %s", done)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// look refreshes m from libvirt; an error wrapping libvirt.ErrNotFound when the pool is gone.
func (r *PoolResource) look(ctx context.Context, m *PoolModel) error {
	st, err := r.Client.ReadPool(ctx, m.Name.ValueString())
	if err != nil {
		return err
	}
	p := hostxml.PoolFromXML(st.Def)
	m.ID = types.StringValue(st.UUID)
	m.Name = types.StringValue(p.Name)
	m.Type = types.StringValue(p.Type)
	m.TargetPath = tfkit.StringOrNull(p.TargetPath)
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
		return nil
	}
	m.Source, err = poolSourceValue(ctx, p.Source, m.Source)
	return err
}

// Read refreshes the pool, and warns while it is not running: its volumes cannot be read.
func (r *PoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.RefreshWith(ctx, req, resp, time.Minute, (*PoolModel).what, func(ctx context.Context, m *PoolModel, d *diag.Diagnostics) (*PoolModel, error) {
		// A pool found stopped is warned about when state knew it running: one defined
		// with active = false, or one reported stopped before, stays quiet.
		wasActive := m.Active.IsNull() || m.Active.IsUnknown() || m.Active.ValueBool()
		if err := r.look(ctx, m); err != nil {
			return nil, err
		}
		if !m.Active.ValueBool() && wasActive {
			name := m.Name.ValueString()
			d.AddWarning("Storage pool "+name+" is not running",
				fmt.Sprintf("libvirt cannot see the volumes of a stopped pool, so the volumes in %s cannot be read or deleted "+
					"(they stay in state). Start it: virsh pool-start %s; set autostart = true to have it start with the host.", name, name))
		}
		return m, nil
	})
}

// Update sets autostart and starts or stops the pool (active): the attributes on the
// host that change in place (force_destroy is only stored).
func (r *PoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.Update(ctx, req, resp, 2*time.Minute, (*PoolModel).what, func(ctx context.Context, plan, state *PoolModel, _ *diag.Diagnostics) (*PoolModel, error) {
		if want := plan.Active; tfkit.Known(want) && !want.Equal(state.Active) {
			change := r.Client.StopPool
			if want.ValueBool() {
				change = r.Client.ActivatePool
			}
			if err := change(ctx, plan.Name.ValueString()); err != nil {
				return nil, err
			}
		}
		if !plan.Autostart.Equal(state.Autostart) {
			if err := r.Client.SetPoolAutostart(ctx, plan.Name.ValueString(), plan.Autostart.ValueBool()); err != nil {
				return nil, err
			}
		}
		return r.readBack(ctx, plan, "updated")
	})
}

// Delete stops and undefines the pool; its volumes only with force_destroy.
func (r *PoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 10*time.Minute, (*PoolModel).what, func(ctx context.Context, state *PoolModel, d *diag.Diagnostics) error {
		name := state.Name.ValueString()
		// The volumes can only be counted in a running pool. One that cannot start (its
		// directory, device or server gone) is only undefined: its storage is not touched.
		// A stopped pool of a type whose storage is a server's or a device's (not dir,
		// logical, netfs) is not started at all (it may be stopped by choice,
		// active = false): undefining it leaves that storage as it is.
		if state.Active.Equal(types.BoolValue(false)) && !slices.Contains([]string{hostxml.PoolDir, hostxml.PoolLogical, hostxml.PoolNetfs}, state.Type.ValueString()) {
			_, err := r.Client.DeletePool(ctx, name, false)
			return err
		}
		if err := r.Client.StartPool(ctx, name); err != nil {
			if errors.Is(err, libvirt.ErrNotFound) || libvirt.IsTransport(err) {
				return err
			}
			if _, derr := r.Client.DeletePool(ctx, name, false); derr != nil {
				return derr
			}
			d.AddWarning("Storage pool "+name+" undefined without touching its storage",
				fmt.Sprintf("The pool could not be started to count its volumes (%v), so it was only undefined: whatever is "+
					"left at %s stays there.", err, state.TargetPath.ValueString()))
			return nil
		}
		vols, err := r.Client.PoolVolumes(ctx, name)
		if err != nil {
			return err
		}
		if slices.Contains([]string{hostxml.PoolISCSI, hostxml.PoolISCSIDirect, hostxml.PoolSCSI, hostxml.PoolMpath}, state.Type.ValueString()) {
			vols = nil // the LUNs are the target's, not libvirt's to delete: undefining leaves them
		}
		if len(vols) > 0 && !state.ForceDestroy.ValueBool() {
			return tfkit.Sentence("Storage pool %s still holds %d volume(s): %s. Delete them first, "+
				"or set force_destroy = true (and apply) to have destroy delete them with the pool.", name, len(vols), tfkit.ListShort(vols))
		}
		for _, v := range vols {
			if err := r.Client.DeletePoolVolume(ctx, name, v); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
				return fmt.Errorf("force_destroy: %s", err.Error()) // not %w: a volume gone is not the pool gone
			}
		}
		typ := state.Type.ValueString()
		warn, err := r.Client.DeletePool(ctx, name, typ == hostxml.PoolDir || typ == hostxml.PoolNetfs)
		if err != nil {
			return err
		}
		if warn != nil {
			d.AddWarning("Storage pool "+name+" deleted; its directory was left", warn.Error())
		}
		return nil
	})
}

func (r *PoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if !validators.ObjectNameRegexp.MatchString(req.ID) {
		resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("expected the storage pool's name, e.g. default, got %q", req.ID))
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
