package network

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/hostxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// refuseUsedLinkRemoval fails the plan of an in-place change (have to want) of network
// name that takes host links out of its macvtap pool (forward.interfaces) while a running guest's interface
// is on one of them: libvirt refuses that network-update at apply time, after the other
// changes of the apply have been made. Which link a guest took is in the network's
// ports. When they cannot be read, the plan goes on (the apply then says what libvirt
// says).
func (r *Resource) refuseUsedLinkRemoval(ctx context.Context, name string, have, want *hostxml.Network, d *diag.Diagnostics) {
	if r.Client == nil || len(removedLinks(have.Forward.Pool(), want.Forward.Pool())) == 0 {
		return
	}
	ports, err := r.Client.NetworkPorts(ctx, name)
	if err != nil {
		tflog.Debug(ctx, "could not read the network's ports", map[string]any{"name": name, "error": err.Error()})
		return
	}
	for _, u := range usedRemovedLinks(have.Forward.Pool(), want.Forward.Pool(), ports) {
		d.AddAttributeError(path.Root("forward").AtName("interfaces"), fmt.Sprintf("Host link %s of network %s is in use", u.link, name),
			fmt.Sprintf("Running domains have their interface on network %s on host link %s: %s. libvirt takes no link out of a "+
				"macvtap pool while a guest uses it. Keep %s in forward.interfaces, or first shut those domains off or move "+
				"their interfaces off the network.", name, u.link, strings.Join(u.users, ", "), u.link))
	}
}

// linkUse is a host link of a pool and the domains whose ports are on it.
type linkUse struct {
	link  string
	users []string
}

// removedLinks is the links of have that want lacks, in have's order.
func removedLinks(have, want []string) []string {
	var out []string
	for _, link := range have {
		if !slices.Contains(want, link) {
			out = append(out, link)
		}
	}
	return out
}

// usedRemovedLinks is the links going from have to want that ports use, each with its
// domains (sorted, each once).
func usedRemovedLinks(have, want []string, ports []libvirt.NetworkPort) []linkUse {
	var out []linkUse
	for _, link := range removedLinks(have, want) {
		var users []string
		for _, p := range ports {
			if p.Link == link {
				users = append(users, p.Owner)
			}
		}
		if len(users) > 0 {
			slices.Sort(users)
			out = append(out, linkUse{link, slices.Compact(users)})
		}
	}
	return out
}
