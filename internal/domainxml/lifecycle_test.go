package domainxml

import (
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestEventsKeptThenWritten: an action state kept (v3: not written) and now written as the
// domain has it changes nothing at apply; at plan time, or when it differs, it restarts.
func TestEventsKeptThenWritten(t *testing.T) {
	old, next := Spec{Name: "e"}, Spec{Name: "e", Lifecycle: Lifecycle{OnCrash: "destroy"}}
	cur := &libvirtxml.Domain{OnPoweroff: "destroy", OnReboot: "restart", OnCrash: "destroy"}
	if c := PlanChange(old, next, true, true, cur).Change; c != ChangeNone {
		t.Errorf("on_crash the domain has: %s", c)
	}
	if p := PlanChange(old, next, true, true, nil); p.Change != ChangeRestart || p.Reason != "events changes" {
		t.Errorf("at plan time: %+v", p)
	}
	cur.OnCrash = "preserve"
	if c := PlanChange(old, next, true, true, cur).Change; c != ChangeRestart {
		t.Errorf("on_crash the domain lacks: %s", c)
	}
}
