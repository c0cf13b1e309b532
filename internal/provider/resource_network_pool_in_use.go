package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// refuseUsedLinkRemoval fails the plan of an in-place change that takes host links out
// of the network's macvtap pool (forward.interfaces) while a running guest's interface
// is on one of them: libvirt refuses that network-update at apply time, after the other
// changes of the apply have been made. Which link a guest took is in the network's
// ports. When they cannot be read, the plan goes on (the apply then says what libvirt
// says).
func (r *networkResource) refuseUsedLinkRemoval(ctx context.Context, state, plan networkModel, d *diag.Diagnostics) {
	if r.client == nil {
		return
	}
	have, ok1, _ := state.toSpec(ctx)
	want, ok2, _ := plan.toSpec(ctx)
	if !ok1 || !ok2 {
		return
	}
	var removed []string
	for _, link := range have.Forward.Pool() {
		if !slices.Contains(want.Forward.Pool(), link) {
			removed = append(removed, link)
		}
	}
	if len(removed) == 0 {
		return
	}
	name := state.Name.ValueString()
	ports, err := r.client.NetworkPorts(ctx, name)
	if err != nil {
		tflog.Debug(ctx, "could not read the network's ports", map[string]any{"name": name, "error": err.Error()})
		return
	}
	for _, link := range removed {
		var users []string
		for _, p := range ports {
			if p.Link == link && !slices.Contains(users, p.Owner) {
				users = append(users, p.Owner)
			}
		}
		if len(users) > 0 {
			d.AddAttributeError(path.Root("forward").AtName("interfaces"), fmt.Sprintf("Host link %s of network %s is in use", link, name),
				fmt.Sprintf("Running domains have their interface on network %s on host link %s: %s. libvirt takes no link out of a "+
					"macvtap pool while a guest uses it. Keep %s in forward.interfaces, or first shut those domains off or move "+
					"their interfaces off the network.", name, link, strings.Join(users, ", "), link))
		}
	}
}
