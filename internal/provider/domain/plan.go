package domain

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// ModifyPlan makes the plan say what libvirt will get and how an update applies:
//   - disk bus and target defaults (the same function Build uses), a disk's format and a
//     NIC's MAC carried over from state while their source stays the same;
//   - on create, the domain type the host offers (kvm, else qemu);
//   - on update, update_method (none, live, restart, definition), and a warning when a
//     running domain will be restarted.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx, bound := tfkit.PlanContext(ctx, req, r.Client, "libvirt_domain", "name")
	defer bound.End(&resp.Diagnostics)
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var planned Model
	if d := tfkit.GetPlan(ctx, req.Plan, &planned); d.HasError() {
		return // e.g. blocks from an unknown for_each: nothing to fill in yet
	}
	plan := *withGroups(&planned)                       // the groups the configuration leaves null stay so (below)
	state, _ := tfkit.PriorState[Model](ctx, req.State) // one that does not decode plans as a create
	if state != nil {
		state = withGroups(state)
	}

	planDiskDefaults(&plan, state)
	planDiskTuning(&plan)
	planNICOptions(&plan, state)
	r.planNICReferences(ctx, &plan, state, &resp.Diagnostics)
	for i := range plan.Interfaces {
		n := &plan.Interfaces[i]
		if !n.MAC.IsUnknown() || state == nil || i >= len(state.Interfaces) {
			continue
		}
		s := state.Interfaces[i]
		if n.Network.Equal(s.Network) && n.Bridge.Equal(s.Bridge) && tfkit.Known(s.MAC) {
			n.MAC = s.MAC
		}
	}

	// What only the host can say: the arch, emulator, domain type, machine type and firmware it offers.
	// Asked on create and when one of them changes; an unreachable host leaves it to apply.
	if r.Client != nil && (state == nil || !plan.Type.Equal(state.Type) || !plan.OS.Machine.Equal(state.OS.Machine) ||
		!plan.Firmware.Equal(state.Firmware) || !plan.OS.Arch.Equal(state.OS.Arch) || !plan.OS.Emulator.Equal(state.OS.Emulator)) {
		if info, err := r.Client.HostInfo(ctx); err == nil {
			var replace bool
			info, replace = r.planArch(ctx, info, &plan, state, &resp.Diagnostics) // arch.go: for the domain's arch
			if replace {
				resp.RequiresReplace = append(resp.RequiresReplace, path.Root("os").AtName("arch"))
			}
			if state == nil && plan.Type.IsUnknown() && info.DefaultDomainType != "" {
				plan.Type = types.StringValue(info.DefaultDomainType)
			}
			hostOffers(info, &plan, state, &resp.Diagnostics)
		}
	}
	checkHostdevs(ctx, r.Client, &plan, state, &resp.Diagnostics) // hostdev.go
	if moving(&plan, state) {
		r.planMigration(ctx, &plan, state, &resp.Diagnostics) // migrate.go
	}
	if state == nil {
		plan.UpdateMethod = types.StringValue(string(domainxml.ChangeNone))
		plan.PendingRestart = types.BoolValue(false)
	} else if plan.UpdateMethod.IsUnknown() && moving(&plan, state) {
		plan.UpdateMethod = types.StringValue(updateMigrate)
		if plan.PendingRestart.IsUnknown() {
			plan.PendingRestart = state.PendingRestart
		}
	} else if plan.UpdateMethod.IsUnknown() {
		before := state.Running.ValueBool()
		after := plan.Running.IsUnknown() || plan.Running.ValueBool()
		change := domainxml.PlanChange(specFromModel(state), specFromModel(&plan), before, after, r.currentDefinition(ctx, state))
		plan.UpdateMethod = types.StringValue(string(change.Change))
		planPendingRestart(&plan, state, change, after, &resp.Diagnostics) // pending.go
		if change.Change == domainxml.ChangeRestart && plan.RestartOnUpdate.ValueBool() {
			resp.Diagnostics.AddWarning(
				fmt.Sprintf("libvirt_domain %s will restart", plan.Name.ValueString()),
				fmt.Sprintf("The change cannot be applied to the running domain (%s): its definition is rewritten and the domain is "+
					"shut down gracefully (forced off after shutdown.timeout = %s) and started again. Only these apply live: vcpu and "+
					"memory_mib within max_vcpu / max_memory_mib; disk iotune; a cdrom's source; a network_interface's link_state "+
					"and bandwidth; disks (virtio, scsi, usb), network interfaces and hostdevs added at the end or removed; virtiofs "+
					"shares removed; the graphics password.", change.Reason, shutdownTimeout(&plan)))
		}
	}
	keepNullGroups(&plan, planned.groupsModel)
	resp.Diagnostics.Append(tfkit.SetPlan(ctx, &resp.Plan, &plan)...)
}

// hostOffers fails the plan when the domain asks for a domain type, machine type or firmware
// the host does not offer (libvirt would refuse the definition or the start).
func hostOffers(info *libvirt.HostInfo, plan, state *Model, d *diag.Diagnostics) {
	name := plan.Name.ValueString()
	changed := func(now, before types.String) bool {
		return tfkit.Known(now) && (state == nil || !now.Equal(before))
	}
	if changed(plan.Type, stateValue(state, func(m *Model) types.String { return m.Type })) && len(info.DomainTypes) > 0 &&
		!slices.Contains(info.DomainTypes, plan.Type.ValueString()) {
		d.AddAttributeError(path.Root("type"), "Domain type not offered by the host",
			fmt.Sprintf("libvirt_domain %s: type = %q, but host %s offers only %s domains for %s (kvm needs a usable /dev/kvm). "+
				"Set type = %q or remove type to use the host's default.",
				name, plan.Type.ValueString(), info.Hostname, strings.Join(info.DomainTypes, ", "), info.Arch, info.DefaultDomainType))
	}
	if changed(plan.OS.Machine, stateValue(state, func(m *Model) types.String { return m.OS.Machine })) && len(info.Machines) > 0 &&
		!slices.Contains(info.Machines, plan.OS.Machine.ValueString()) {
		var aliases []string
		for _, m := range info.Machines {
			if !versionedMachine.MatchString(m) { // pc, q35, isapc, microvm, ...: the stable aliases
				aliases = append(aliases, m)
			}
		}
		d.AddAttributeError(path.Root("os").AtName("machine"), "Machine type not offered by the host",
			fmt.Sprintf("libvirt_domain %s: os.machine = %q is not a machine type host %s offers for %s guests. Use one of %s "+
				"(or a versioned name that `virsh capabilities` lists), or remove os.machine for libvirt's default.",
				name, plan.OS.Machine.ValueString(), info.Hostname, info.Arch, strings.Join(aliases, ", ")))
	}
	if changed(plan.Firmware, stateValue(state, func(m *Model) types.String { return m.Firmware })) && plan.OS.Loader == nil && // os.loader: by hand
		plan.Firmware.ValueString() == domainxml.FirmwareUEFI && info.DefaultDomainType != "" && !slices.Contains(info.FirmwareTypes, "efi") {
		d.AddAttributeError(path.Root("firmware"), "UEFI firmware not offered by the host",
			fmt.Sprintf("libvirt_domain %s: firmware = \"uefi\", but host %s offers no UEFI firmware for %s %s domains "+
				"(install UEFI firmware: Debian ovmf for x86_64, qemu-efi-aarch64 for aarch64). Use firmware = \"bios\" or install it.",
				name, info.Hostname, info.Arch, info.DefaultDomainType))
	}
}

// versionedMachine matches machine types with a version, e.g. pc-q35-7.2.
var versionedMachine = regexp.MustCompile(`\d+\.\d+$`)

func stateValue(state *Model, f func(*Model) types.String) types.String {
	if state == nil {
		return types.StringNull()
	}
	return f(state)
}

// planDiskDefaults fills unknown bus, target and format of planned disks.
func planDiskDefaults(plan, state *Model) {
	disks := make([]domainxml.Disk, len(plan.Disks))
	for i, d := range plan.Disks {
		if d.Device.IsUnknown() || d.Bus.IsUnknown() && d.Target.IsUnknown() && d.Device.IsNull() {
			return
		}
		disks[i] = domainxml.Disk{Device: d.Device.ValueString(), Bus: d.Bus.ValueString(), Target: d.Target.ValueString()}
	}
	domainxml.FillDiskDefaultsBeside(disks, nil, knownStrings(plan.DeviceXML)) // device_xml disks hold their targets
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
			if tfkit.Known(s.Format) && d.VolumeID.Equal(s.VolumeID) && d.Path.Equal(s.Path) {
				d.Format = s.Format
			}
		}
	}
}

// ValidateConfig checks what single attributes cannot.
func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config Model
	if d := tfkit.GetConfig(ctx, req.Config, &config); d.HasError() {
		return
	}
	m := withGroups(&config)
	if tfkit.Known(m.MaxVCPU) && tfkit.Known(m.VCPU) && m.MaxVCPU.ValueInt64() < m.VCPU.ValueInt64() {
		resp.Diagnostics.AddAttributeError(path.Root("max_vcpu"), "max_vcpu below vcpu",
			fmt.Sprintf("libvirt_domain %s: max_vcpu = %d is below vcpu = %d. max_vcpu is the hot-add ceiling: set it to %d or more, "+
				"or remove it (default: vcpu, no headroom).", m.Name.ValueString(), m.MaxVCPU.ValueInt64(), m.VCPU.ValueInt64(), m.VCPU.ValueInt64()))
	}
	// The memory forms and the memory ceiling: sizing.go's validate.
	validateHostdevs(m, &resp.Diagnostics) // hostdev.go
	for i, n := range m.Interfaces {
		if n.WaitForIP == nil {
			continue
		}
		if tfkit.Known(n.WaitForIP.Source) && n.WaitForIP.Source.ValueString() == "lease" && tfkit.Known(n.Bridge) {
			resp.Diagnostics.AddAttributeError(path.Root("network_interface").AtListIndex(i).AtName("wait_for_ip").AtName("source"),
				"DHCP leases need a libvirt network",
				fmt.Sprintf("network_interface %d is on bridge %q: libvirt knows no DHCP leases there. Use source = \"agent\" (the guest agent) instead.", i, n.Bridge.ValueString()))
		}
		if tfkit.Known(n.WaitForIP.Source) && n.WaitForIP.Source.ValueString() == "agent" && tfkit.Known(m.QemuAgent) && !m.QemuAgent.ValueBool() {
			resp.Diagnostics.AddAttributeError(path.Root("network_interface").AtListIndex(i).AtName("wait_for_ip").AtName("source"),
				"The guest agent is disabled",
				"wait_for_ip with source = \"agent\" asks the guest agent, but qemu_agent = false leaves the domain without its channel. Set qemu_agent = true or use source = \"lease\".")
		}
	}
	for _, f := range families {
		if f.validate != nil {
			f.validate(m, &resp.Diagnostics)
		}
	}
	targets := map[string]int{}
	for i, d := range m.Disks {
		if !tfkit.Known(d.Target) {
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

func (r *Resource) ConfigValidators(context.Context) []resource.ConfigValidator { return nil }

// currentDefinition is the domain's persistent definition, for the plan's update_method
// to be what apply will do: a grouped value the state left null but the configuration now
// writes, equal to what the domain has, changes nothing (ADR 9). nil when it cannot be
// read: the families then judge from state alone.
func (r *Resource) currentDefinition(ctx context.Context, state *Model) *libvirtxml.Domain {
	if r.Client == nil || state == nil || !tfkit.Known(state.ID) {
		return nil
	}
	st, err := r.Client.GetDomainStatus(ctx, state.ID.ValueString())
	if err != nil {
		return nil
	}
	d, err := domainxml.ParseDomain(st.XML)
	if err != nil {
		return nil
	}
	return d
}
