package domain

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// domainEventsModel: events.on_poweroff, on_reboot and on_crash (domainxml's events
// family; libvirt's "events configuration").
type domainEventsModel struct {
	OnPoweroff types.String `tfsdk:"on_poweroff"`
	OnReboot   types.String `tfsdk:"on_reboot"`
	OnCrash    types.String `tfsdk:"on_crash"`
}

var domainEvents = family{
	group: groupEvents,
	attributes: map[string]schema.Attribute{
		"on_poweroff": lifecycleAttribute("the guest powers off", "destroy", domainxml.LifecycleActions),
		"on_reboot":   lifecycleAttribute("the guest reboots", "restart", domainxml.LifecycleActions),
		"on_crash": lifecycleAttribute("the guest crashes", "destroy",
			append(append([]string{}, domainxml.LifecycleActions...), domainxml.LifecycleCrashActions...)),
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		e := m.Events
		s.Lifecycle = domainxml.Lifecycle{OnPoweroff: tfkit.StringOf(e.OnPoweroff), OnReboot: tfkit.StringOf(e.OnReboot), OnCrash: tfkit.StringOf(e.OnCrash)}
	},
	// Null unless written; an import writes an action where it differs from what libvirt
	// writes for a domain made here (destroy, restart, destroy).
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		l, e, p := s.Lifecycle, &m.Events.domainEventsModel, prior.Events
		imp := isImport(prior)
		for _, a := range []struct {
			dst         *types.String
			was         types.String
			have, fresh string
		}{{&e.OnPoweroff, p.OnPoweroff, l.OnPoweroff, "destroy"}, {&e.OnReboot, p.OnReboot, l.OnReboot, "restart"}, {&e.OnCrash, p.OnCrash, l.OnCrash, "destroy"}} {
			*a.dst = types.StringNull()
			if (imp && a.have != a.fresh) || (!imp && !a.was.IsNull()) {
				*a.dst = tfkit.StringOrNull(a.have)
			}
		}
	},
	fillUnknowns: func(m *Model) { tfkit.NullIfUnknown(&m.Events.OnPoweroff, &m.Events.OnReboot, &m.Events.OnCrash) },
}

func lifecycleAttribute(when, def string, actions []string) schema.StringAttribute {
	return tfkit.OptionalString("What libvirt does when "+when+": one of `"+joinBackticked(actions)+"`. Unset: what the domain has "+
		"(libvirt writes `"+def+"` for a domain made here). libvirt's QEMU driver refuses `rename-restart`, and `preserve` but for "+
		"`on_crash`. A change rewrites the definition and restarts a running domain.",
		stringvalidator.OneOf(actions...))
}
