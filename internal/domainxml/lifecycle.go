package domainxml

import (
	"fmt"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Lifecycle actions (libvirt_domain.events): what libvirt does when the guest powers
// off, reboots or crashes (<on_poweroff>, <on_reboot>, <on_crash>). libvirt writes its defaults (destroy,
// restart, destroy) into every definition; an action left empty keeps what the domain
// has. A change restarts a running domain: libvirt 9.0 changes only on_reboot live
// (virDomainSetLifecycleAction), and one path for all three is clearer.

// Lifecycle holds the three actions; empty keeps the domain's.
type Lifecycle struct {
	OnPoweroff, OnReboot, OnCrash string
}

// LifecycleActions are the actions on_poweroff and on_reboot take; on_crash also takes
// LifecycleCrashActions. These are what libvirt 9.0's QEMU driver accepts (measured
// with virsh define): it refuses "rename-restart" for all three and "preserve" for
// on_poweroff and on_reboot ("qemu driver doesn't support the ... action").
var (
	LifecycleActions      = []string{"destroy", "restart"}
	LifecycleCrashActions = []string{"preserve", "coredump-destroy", "coredump-restart"}
)

var lifecycleFamily = family{
	name: "events",
	validate: func(s *Spec) error {
		l := s.Lifecycle
		for _, a := range []struct{ name, v string }{{"on_poweroff", l.OnPoweroff}, {"on_reboot", l.OnReboot}, {"on_crash", l.OnCrash}} {
			ok := slices.Contains(LifecycleActions, a.v) || (a.name == "on_crash" && slices.Contains(LifecycleCrashActions, a.v))
			if a.v != "" && !ok {
				return fmt.Errorf("events.%s = %q is not an action libvirt's QEMU driver accepts", a.name, a.v)
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		l := s.Lifecycle
		for _, f := range []struct {
			dst *string
			v   string
		}{{&d.OnPoweroff, l.OnPoweroff}, {&d.OnReboot, l.OnReboot}, {&d.OnCrash, l.OnCrash}} {
			if f.v != "" {
				*f.dst = f.v
			}
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		p.Spec.Lifecycle = Lifecycle{OnPoweroff: d.OnPoweroff, OnReboot: d.OnReboot, OnCrash: d.OnCrash}
	},
	same: sameLifecycle,
	// An action the old spec kept (libvirt_domain v3 keeps only what was written in state)
	// and the new one sets to what the domain already has changes nothing: with the
	// definition at hand (cur) that is no change; without it (plan time), any change
	// restarts, as without this hook.
	live: func(_, next Spec, cur *libvirtxml.Domain) ([]LiveOp, string) {
		if cur == nil {
			return nil, "events changes"
		}
		have := Spec{Lifecycle: Lifecycle{OnPoweroff: cur.OnPoweroff, OnReboot: cur.OnReboot, OnCrash: cur.OnCrash}}
		if !sameLifecycle(have, next) {
			return nil, "events changes"
		}
		return nil, ""
	},
}

// sameLifecycle: b keeps the actions it leaves empty and sets the rest as a has them.
func sameLifecycle(a, b Spec) bool {
	x, y := a.Lifecycle, b.Lifecycle
	keep := func(have, want string) bool { return want == "" || have == want }
	return keep(x.OnPoweroff, y.OnPoweroff) && keep(x.OnReboot, y.OnReboot) && keep(x.OnCrash, y.OnCrash)
}
