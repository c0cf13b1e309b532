package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// ModifyPlan makes the plan say what libvirt will get and how an update applies:
//   - disk bus and target defaults (the same function Build uses), a disk's format and a
//     NIC's MAC carried over from state while their source stays the same;
//   - on create, the domain type the host offers (kvm, else qemu);
//   - on update, update_method (none, live, restart, definition), and a warning when a
//     running domain will be restarted.
func (r *domainResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan domainModel
	if d := req.Plan.Get(ctx, &plan); d.HasError() {
		return // e.g. blocks from an unknown for_each: nothing to fill in yet
	}
	var state *domainModel
	if !req.State.Raw.IsNull() {
		var s domainModel
		if d := req.State.Get(ctx, &s); !d.HasError() {
			state = &s
		}
	}

	planDiskDefaults(&plan, state)
	if plan.CPUModel.IsUnknown() && state != nil && plan.CPUMode.Equal(state.CPUMode) {
		plan.CPUModel = state.CPUModel // libvirt's model for the mode stays while the mode does
	}
	for i := range plan.Interfaces {
		n := &plan.Interfaces[i]
		if !n.MAC.IsUnknown() || state == nil || i >= len(state.Interfaces) {
			continue
		}
		s := state.Interfaces[i]
		if n.Network.Equal(s.Network) && n.Bridge.Equal(s.Bridge) && known(s.MAC) {
			n.MAC = s.MAC
		}
	}

	if state == nil {
		if plan.Type.IsUnknown() && r.client != nil {
			if info, err := r.client.HostInfo(ctx); err == nil && info.DefaultDomainType != "" {
				plan.Type = types.StringValue(info.DefaultDomainType)
			}
		}
		plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
	} else if plan.UpdateMethod.IsUnknown() {
		before := state.Running.ValueBool()
		after := plan.Running.IsUnknown() || plan.Running.ValueBool()
		method := domainxml.Classify(specFromModel(state), specFromModel(&plan), before, after)
		plan.UpdateMethod = types.StringValue(string(method))
		if method == domainxml.ChangeRestart {
			resp.Diagnostics.AddWarning(
				fmt.Sprintf("libvirt_domain %s will restart", plan.Name.ValueString()),
				fmt.Sprintf("The change cannot be applied to the running domain: its definition is rewritten and the domain is "+
					"shut down gracefully (forced off after shutdown.timeout = %s) and started again. Only vcpu and memory_mib "+
					"changes within max_vcpu / max_memory_mib apply live.", shutdownTimeout(&plan)))
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// planDiskDefaults fills unknown bus, target and format of planned disks.
func planDiskDefaults(plan, state *domainModel) {
	disks := make([]domainxml.Disk, len(plan.Disks))
	for i, d := range plan.Disks {
		if d.Device.IsUnknown() || d.Bus.IsUnknown() && d.Target.IsUnknown() && d.Device.IsNull() {
			return
		}
		disks[i] = domainxml.Disk{Device: d.Device.ValueString(), Bus: d.Bus.ValueString(), Target: d.Target.ValueString()}
	}
	domainxml.FillDiskDefaults(disks, nil)
	for i := range plan.Disks {
		d := &plan.Disks[i]
		if d.Bus.IsUnknown() {
			d.Bus = types.StringValue(disks[i].Bus)
		}
		if d.Target.IsUnknown() {
			d.Target = types.StringValue(disks[i].Target)
		}
		if d.Format.IsUnknown() && state != nil && i < len(state.Disks) {
			s := state.Disks[i]
			if known(s.Format) && d.VolumeID.Equal(s.VolumeID) && d.Path.Equal(s.Path) {
				d.Format = s.Format
			}
		}
	}
}

// ValidateConfig checks what single attributes cannot.
func (r *domainResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m domainModel
	if d := req.Config.Get(ctx, &m); d.HasError() {
		return
	}
	if known(m.CPUModel) && known(m.CPUMode) && m.CPUMode.ValueString() != "custom" {
		resp.Diagnostics.AddAttributeError(path.Root("cpu_model"), "cpu_model needs cpu_mode = \"custom\"",
			fmt.Sprintf("cpu_model names a CPU model, which only cpu_mode = \"custom\" uses; cpu_mode is %q. Remove cpu_model or set cpu_mode = \"custom\".", m.CPUMode.ValueString()))
	}
	if known(m.CPUMode) && m.CPUMode.ValueString() == "custom" && m.CPUModel.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("cpu_model"), "cpu_mode \"custom\" needs cpu_model",
			"Set cpu_model to a CPU model the host knows, e.g. \"qemu64\" or \"Haswell-noTSX\".")
	}
	for i, n := range m.Interfaces {
		if n.WaitForIP == nil {
			continue
		}
		if known(n.WaitForIP.Source) && n.WaitForIP.Source.ValueString() == "lease" && known(n.Bridge) {
			resp.Diagnostics.AddAttributeError(path.Root("network_interface").AtListIndex(i).AtName("wait_for_ip").AtName("source"),
				"DHCP leases need a libvirt network",
				fmt.Sprintf("network_interface %d is on bridge %q: libvirt knows no DHCP leases there. Use source = \"agent\" (the guest agent) instead.", i, n.Bridge.ValueString()))
		}
		if known(n.WaitForIP.Source) && n.WaitForIP.Source.ValueString() == "agent" && known(m.QemuAgent) && !m.QemuAgent.ValueBool() {
			resp.Diagnostics.AddAttributeError(path.Root("network_interface").AtListIndex(i).AtName("wait_for_ip").AtName("source"),
				"The guest agent is disabled",
				"wait_for_ip with source = \"agent\" asks the guest agent, but qemu_agent = false leaves the domain without its channel. Set qemu_agent = true or use source = \"lease\".")
		}
	}
	targets := map[string]int{}
	for i, d := range m.Disks {
		if !known(d.Target) {
			continue
		}
		t := strings.ToLower(d.Target.ValueString())
		if j, ok := targets[t]; ok {
			resp.Diagnostics.AddAttributeError(path.Root("disk").AtListIndex(i).AtName("target"), "Disk target used twice",
				fmt.Sprintf("disk %d and disk %d both use target %q; each disk needs its own.", j, i, t))
		}
		targets[t] = i
	}
}

func (r *domainResource) ConfigValidators(context.Context) []resource.ConfigValidator { return nil }
