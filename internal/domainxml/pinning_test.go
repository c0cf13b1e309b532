package domainxml

import (
	"strings"
	"testing"
)

// A pin added or changed is live; a removed one, or one of a vCPU not online, restarts;
// "0,1" and "0-1" are no change.
func TestPinning_plan(t *testing.T) {
	old := cpuSpec()
	for name, tc := range map[string]struct {
		edit   func(*Spec)
		change Change
		ops    []LiveOp
		reason string
	}{
		"same set, other spelling": {edit: func(s *Spec) { s.CPUPinning[1] = "0-1" }, change: ChangeNone},
		"changed": {edit: func(s *Spec) { s.CPUPinning[1] = "1" }, change: ChangeLive,
			ops: []LiveOp{{Kind: LivePinVCPU, Noun: "vcpu", Device: "1", VCPU: 1, CPUSet: "1"}}},
		"emulator": {edit: func(s *Spec) { s.EmulatorPinning = "0-1" }, change: ChangeLive,
			ops: []LiveOp{{Kind: LivePinEmulator, Noun: "emulator", Device: "threads", CPUSet: "0-1"}}},
		"removed":          {edit: func(s *Spec) { delete(s.CPUPinning, 0) }, change: ChangeRestart, reason: "vCPU 0 is removed"},
		"emulator removed": {edit: func(s *Spec) { s.EmulatorPinning = "" }, change: ChangeRestart, reason: "emulator_pinning is removed"},
		"topology":         {edit: func(s *Spec) { s.CPUTopology.Cores, s.CPUTopology.Sockets = 1, 2 }, change: ChangeRestart, reason: "cpu changes"},
	} {
		next := cpuSpec()
		tc.edit(&next)
		p := PlanChange(old, next, true, true, nil)
		if p.Change != tc.change || !strings.Contains(p.Reason, tc.reason) || len(p.Ops) != len(tc.ops) {
			t.Errorf("%s: %+v", name, p)
			continue
		}
		for i := range tc.ops {
			if p.Ops[i] != tc.ops[i] {
				t.Errorf("%s: op %+v, want %+v", name, p.Ops[i], tc.ops[i])
			}
		}
	}
	hot := cpuSpec()
	hot.VCPU, hot.MaxVCPU, hot.CPUTopology.Cores = 1, 2, 2
	next := hot
	next.CPUPinning = map[uint]string{0: "0", 1: "1"}
	if p := PlanChange(hot, next, true, true, nil); p.Change != ChangeRestart || !strings.Contains(p.Reason, "not online") {
		t.Errorf("pinning an offline vCPU: %+v", p)
	}
}
