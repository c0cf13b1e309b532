package domain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// Resource is libvirt_domain.
type Resource struct {
	tfkit.ResourceBase
}

// domainWhat names a domain in messages.
func domainWhat(m *Model) string { return "libvirt domain " + tfkit.NameOr(m.Name, m.ID.ValueString()) }

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var got *Model
	defer func() { keepReadStamp(ctx, resp.Private, got, &resp.Diagnostics) }()
	tfkit.Create(ctx, req, resp, 20*time.Minute, domainWhat, func(ctx context.Context, plan *Model, diags *diag.Diagnostics) (m *Model, err error) {
		defer func() { got = m }()
		name := plan.Name.ValueString()
		if err := r.chooseType(ctx, plan); err != nil {
			return nil, err
		}
		if !tfkit.Known(plan.UUID) {
			// Chosen here rather than by libvirt, so that the define is idempotent: when the
			// connection breaks between the define and its answer, it is sent again and the
			// domain is made once, and a domain whose define may have landed is still tracked
			// by this id (see below and libvirt.Client.DefineDomain).
			plan.UUID = types.StringValue(uuid.NewString())
		}
		spec, err := r.resolve(ctx, plan)
		if err != nil {
			return nil, err
		}
		if diags.Append(passwordWO(ctx, req.Config, plan, nil, &spec)...); diags.HasError() {
			return nil, errors.New("read graphics_password_wo from the configuration")
		}
		dom, err := domainxml.Build(nil, spec)
		if err != nil {
			return nil, fmt.Errorf("build domain XML: %w", err)
		}
		text, err := dom.Marshal()
		if err != nil {
			return nil, fmt.Errorf("build domain XML: %w", err)
		}
		tflog.Debug(ctx, "defining domain", map[string]any{"name": name, "xml": domainxml.LogXML(dom)})
		plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
		d, err := r.Client.DefineDomain(ctx, name, text)
		switch {
		case err != nil && libvirt.IsTransport(err):
			// The daemon stayed unreachable for longer than the define's retries: the domain
			// may or may not be defined. It goes into state anyway (tainted, with the error),
			// so that no apply leaves a domain on the host that the state does not track: the
			// next refresh drops it from state if it is not there, and a domain that is there
			// is replaced by the next apply.
			tflog.Warn(ctx, "the define's outcome is unknown; tracking the domain by its UUID", map[string]any{"name": name, "uuid": plan.UUID.ValueString()})
			plan.ID = plan.UUID
			return r.settled(ctx, plan.UUID.ValueString(), plan, 0, err)
		case err != nil:
			return nil, err
		}
		id := libvirt.UUIDString(d)
		plan.ID = types.StringValue(id)
		// From here on the domain exists: whatever fails, it goes into state with the error.
		if plan.Autostart.ValueBool() {
			if err := r.Client.SetDomainAutostart(ctx, id, true); err != nil {
				return r.settled(ctx, id, plan, 0, err)
			}
		}
		if plan.Running.ValueBool() {
			err = r.Client.StartDomain(ctx, id)
			if err == nil {
				err = r.waitForGuest(ctx, id, plan) // ready.go
			}
		}
		return r.settled(ctx, id, plan, 0, err)
	})
}

// chooseType fills in the domain type the host offers (kvm, else qemu) when none is set.
func (r *Resource) chooseType(ctx context.Context, plan *Model) error {
	if tfkit.Known(plan.Type) {
		return nil
	}
	info, err := r.Client.HostInfo(ctx)
	if err != nil {
		return fmt.Errorf("choose the domain type: %w", err)
	}
	if info.DefaultDomainType == "" {
		return errors.New("the host offers neither kvm nor qemu domains for its architecture")
	}
	plan.Type = types.StringValue(info.DefaultDomainType)
	return nil
}

// settled is what state holds after a create or update: the domain read back, or, when
// it cannot be read, what is known of it (so that it stays tracked); err is returned
// joined with the read's failure.
// deferred is the run whose restart is pending (restart_on_update = false), 0 for none.
func (r *Resource) settled(ctx context.Context, id string, plan *Model, deferred int32, err error) (*Model, error) {
	got, rerr := tfkit.ReadBack(ctx, func(ctx context.Context) (*Model, error) { return r.read(ctx, id, plan, deferred) })
	if rerr == nil && err == nil {
		err = errors.Join(checkFragmentsKept("device_xml", "device", plan.Name.ValueString(), plan.DeviceXML, &got.DeviceXML), // device_xml.go
			checkFragmentsKept("extra_xml", "element", plan.Name.ValueString(), plan.ExtraXML, &got.ExtraXML))
	}
	if rerr != nil {
		got = plan
		fillUnknowns(got)
		if err == nil {
			err = rerr
		}
	}
	return got, err
}

func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	was := deferredRun(ctx, req.Private)
	tfkit.Refresh(ctx, req, resp, time.Minute, domainWhat, func(ctx context.Context, m *Model) (*Model, error) {
		got, err := r.read(ctx, m.ID.ValueString(), m, was)
		if got != nil && !got.PendingRestart.ValueBool() {
			keepDeferredRun(ctx, resp.Private, was, 0, &resp.Diagnostics) // restarted (or stopped) since
		}
		if err == nil {
			keepReadStamp(ctx, resp.Private, got, &resp.Diagnostics)
		}
		return got, err
	})
}

// Update takes the domain to the plan through workflow.Apply (live, restart, or the
// definition only, as the plan's update_method said), then waits for its addresses.
func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var got *Model
	defer func() { keepReadStamp(ctx, resp.Private, got, &resp.Diagnostics) }()
	tfkit.Update(ctx, req, resp, 20*time.Minute, domainWhat, func(ctx context.Context, plan, state *Model, diags *diag.Diagnostics) (m *Model, err error) {
		defer func() { got = m }()
		id, name := state.ID.ValueString(), plan.Name.ValueString()
		plan.ID = state.ID
		if plan.Type.IsUnknown() {
			plan.Type = state.Type
		}
		if plan.HostOf() != state.HostOf() {
			moved, err := r.migrate(ctx, plan, state, diags) // migrate.go
			if err != nil && moved {
				got, _ := r.settled(ctx, id, plan, 0, nil) // on the new host all the same: the state says so
				return got, err
			}
			if err != nil {
				return nil, err // on the old host: the state stays as it was
			}
		}
		spec, err := r.resolve(ctx, plan)
		if err != nil {
			return nil, err
		}
		if diags.Append(passwordWO(ctx, req.Config, plan, state, &spec)...); diags.HasError() {
			return nil, errors.New("read graphics_password_wo from the configuration")
		}
		oldSpec := specFromModel(state)
		spec.GuestDevices.Drop = domainxml.DroppedGuestDevices(oldSpec.GuestDevices, spec.GuestDevices) // kinds removed from devices go
		spec.Chardevs.Drop = domainxml.DroppedChardevs(oldSpec.Chardevs, spec.Chardevs)                 // back to the default
		spec.DeviceXMLDrop = domainxml.DroppedDeviceXML(oldSpec.DeviceXML, spec.DeviceXML)              // an import's too
		spec.ExtraXMLWas = oldSpec.ExtraXML                                                             // an import has no record yet
		autostart := plan.Autostart.ValueBool()
		res, err := workflow.Apply(ctx, r.Client, workflow.Change{
			ID: id, Name: name, Old: oldSpec, New: spec, Running: plan.Running.ValueBool(), Autostart: &autostart,
			ShutdownTimeout: shutdownTimeout(plan), DeferRestart: !plan.RestartOnUpdate.ValueBool(),
			// Same disks, written another way (volume_id for a path): the references are
			// recorded in the definition's metadata; nothing in the running domain changes.
			Rewrite: !domainxml.SameDiskRefs(oldSpec, specFromModel(plan)),
		})
		if plan.UpdateMethod.IsUnknown() {
			plan.UpdateMethod = types.StringValue(string(res.Method))
		} // else: what the plan said (the domain may have stopped since; res.Method is what was done)
		tflog.Info(ctx, "updated domain", map[string]any{"name": name, "method": string(res.Method)})
		if res.Forced {
			tflog.Warn(ctx, "domain did not shut down in time and was forced off for the restart", map[string]any{"name": name})
		}
		// A guest that only moved did not boot again: nothing to wait for (its lease, if
		// wait_for_ip asks for one, stays in the old host's network).
		movedOnly := plan.HostOf() != state.HostOf() && res.Method != domainxml.ChangeRestart && !res.Started
		if err == nil && plan.Running.ValueBool() && !movedOnly {
			err = r.waitForGuest(ctx, id, plan)
		}
		was := deferredRun(ctx, req.Private)
		deferred := was
		if res.Deferred {
			deferred = res.RunID
		}
		got, err := r.settled(ctx, id, plan, deferred, err)
		if got != nil && !got.PendingRestart.ValueBool() {
			deferred = 0
		}
		keepDeferredRun(ctx, resp.Private, was, deferred, &resp.Diagnostics)
		return got, err
	})
}

func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	tfkit.Remove(ctx, req, resp, 10*time.Minute, domainWhat, func(ctx context.Context, state *Model, _ *diag.Diagnostics) error {
		id := state.ID.ValueString()
		if _, err := r.Client.ShutdownDomain(ctx, id, shutdownTimeout(state)); err != nil {
			return err
		}
		return r.Client.UndefineDomain(ctx, id)
	})
}

func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if req.ID == "" {
		resp.Diagnostics.AddError("Invalid import id", "expected a domain name or UUID, got an empty string")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

func shutdownTimeout(m *Model) time.Duration {
	s := defaultShutdownTimeout
	if m.Shutdown != nil && !m.Shutdown.Timeout.IsNull() && !m.Shutdown.Timeout.IsUnknown() {
		s = m.Shutdown.Timeout.ValueString()
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Minute
	}
	return d
}
