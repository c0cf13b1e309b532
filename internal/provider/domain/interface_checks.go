package domain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// Plan-time checks of the NIC options (domain_nic_options.go): what domainxml would
// refuse at apply, and the host objects they name.

// validateNICOptions reports at plan time what domainxml's validation would refuse at
// apply: options that do not fit the NIC, and a boot order used twice.
func validateNICOptions(m *Model, d *diag.Diagnostics) {
	used := map[int64]string{}
	for i, dk := range m.Disks {
		if tfkit.Known(dk.BootOrder) {
			used[dk.BootOrder.ValueInt64()] = fmt.Sprintf("disk %d", i)
		}
	}
	for i, n := range m.Interfaces {
		at := path.Root("network_interface").AtListIndex(i)
		var sources []string
		unknown := n.Network.IsUnknown() || n.Bridge.IsUnknown()
		for src, set := range map[string]bool{"network": !n.Network.IsNull(), "bridge": !n.Bridge.IsNull(), "direct": n.Direct != nil} {
			if set {
				sources = append(sources, src)
			}
		}
		if slices.Sort(sources); len(sources) > 1 || len(sources) == 0 && !unknown {
			has := "none: add one"
			if len(sources) > 1 {
				has = strings.Join(sources, " and ") + ": keep one"
			}
			d.AddAttributeError(at, "One source per network_interface",
				fmt.Sprintf("network_interface %d needs exactly one of network, bridge and direct; it has %s.", i, has))
		}
		if tfkit.Known(n.BootOrder) {
			if other, ok := used[n.BootOrder.ValueInt64()]; ok {
				d.AddAttributeError(at.AtName("boot_order"), "Boot order used twice",
					fmt.Sprintf("network_interface %d: boot_order %d is already used by %s; each device needs its own.", i, n.BootOrder.ValueInt64(), other))
			}
			used[n.BootOrder.ValueInt64()] = fmt.Sprintf("network_interface %d", i)
		}
		if tfkit.Known(n.Model) && tfkit.Known(n.Queues) && n.Model.ValueString() != domainxml.DefaultNIC {
			d.AddAttributeError(at.AtName("queues"), "queues needs a virtio NIC",
				fmt.Sprintf("network_interface %d: queues needs model = \"virtio\", not %q. Remove queues or use the virtio model.", i, n.Model.ValueString()))
		}
		if v := n.VirtualPort; v != nil && tfkit.Known(v.Type) {
			switch t := v.Type.ValueString(); {
			case t == domainxml.VirtualPortQbh && (v.ProfileID.IsNull() || !v.InterfaceID.IsNull() && !v.InterfaceID.IsUnknown()):
				d.AddAttributeError(at.AtName("virtualport"), "Invalid virtualport",
					fmt.Sprintf("network_interface %d: virtualport type 802.1Qbh needs profile_id and takes no interface_id.", i))
			case t == domainxml.VirtualPortQbg && !v.ProfileID.IsNull():
				d.AddAttributeError(at.AtName("virtualport").AtName("profile_id"), "Invalid virtualport",
					fmt.Sprintf("network_interface %d: virtualport type 802.1Qbg takes no profile_id (only interface_id, its instance id).", i))
			}
		}
		if n.ROM != nil && n.ROM.Bar.IsNull() && n.ROM.File.IsNull() {
			d.AddAttributeError(at.AtName("rom"), "Empty rom", fmt.Sprintf("network_interface %d: rom needs bar or file.", i))
		}
		if n.Bandwidth != nil && n.Bandwidth.Inbound == nil && n.Bandwidth.Outbound == nil {
			d.AddAttributeError(at.AtName("bandwidth"), "Empty bandwidth", fmt.Sprintf("network_interface %d: bandwidth needs inbound or outbound.", i))
		}
		if v := n.VLAN; v != nil && len(v.Tags) == 0 && v.NativeTag.IsNull() {
			d.AddAttributeError(at.AtName("vlan"), "Empty vlan", fmt.Sprintf("network_interface %d: vlan needs tags or native_tag.", i))
		}
	}
}

// checkNICReferences fails when a NIC names a filter or a port group the host lacks
// (libvirt would define the domain and only fail to start it). changed says which NICs
// to look at, so an unchanged plan asks the host nothing.
func checkNICReferences(ctx context.Context, c *libvirt.Client, nics []domainxml.Interface, changed func(i int) bool) error {
	for i, n := range nics {
		if !changed(i) {
			continue
		}
		if f := n.Filter; f != nil && f.Name != "" {
			if err := c.LookupNWFilter(ctx, f.Name); errors.Is(err, libvirt.ErrNotFound) {
				return missingRef(fmt.Sprintf("network_interface %d: nwfilter %q does not exist on %s: name one that `virsh nwfilter-list` shows, e.g. clean-traffic",
					i, f.Name, c.URI()))
			} else if err != nil {
				return fmt.Errorf("network_interface %d: %w", i, err)
			}
		}
		if n.PortGroup != "" && n.Network != "" {
			net, err := c.ReadNetwork(ctx, n.Network)
			if errors.Is(err, libvirt.ErrNotFound) {
				continue // resolve names the missing network
			} else if err != nil {
				return fmt.Errorf("network_interface %d: %w", i, err)
			}
			var names []string
			for _, g := range net.Def.PortGroups {
				names = append(names, g.Name)
			}
			if !slices.Contains(names, n.PortGroup) {
				return missingRef(fmt.Sprintf("network_interface %d: network %s has no port group %q (it has %v): add it to the network or name one of those",
					i, n.Network, n.PortGroup, names))
			}
		}
	}
	return nil
}

// missingRef is checkNICReferences' answer for a name the host lacks (the plan reports
// only these; an unreachable host leaves the check to apply).
type missingRef string

func (e missingRef) Error() string { return string(e) }

// planNICReferences is ModifyPlan's part: the filters and port groups that are new or
// changed since state must exist.
func (r *Resource) planNICReferences(ctx context.Context, plan, state *Model, d *diag.Diagnostics) {
	if r.Client == nil {
		return
	}
	ref := func(m *nicModel) string {
		f := ""
		if m.Filter != nil {
			f = m.Filter.Name.ValueString()
		}
		return f + "\x00" + m.PortGroup.ValueString() + "\x00" + m.Network.ValueString()
	}
	changed := func(i int) bool {
		return state == nil || i >= len(state.Interfaces) || ref(&plan.Interfaces[i]) != ref(&state.Interfaces[i])
	}
	var missing missingRef
	if err := checkNICReferences(ctx, r.Client, specFromModel(plan).Interfaces, changed); errors.As(err, &missing) {
		d.AddAttributeError(path.Root("network_interface"), "Unknown network_interface reference",
			fmt.Sprintf("libvirt_domain %s: %s.", plan.Name.ValueString(), missing))
	}
}
