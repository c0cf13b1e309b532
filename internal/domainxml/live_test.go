package domainxml

import (
	"reflect"
	"strings"
	"testing"
)

// TestPlanChange: an iotune change alone is live on a running domain, with one operation
// per disk whose limits change; anything else about the disks restarts, with a reason.
func TestPlanChange(t *testing.T) {
	mod := func(f func(*Spec)) Spec { s := tuned(); f(&s); return s }
	limits := &IOTune{ReadIopsSec: 5}
	cases := []struct {
		name           string
		next           Spec
		before, after  bool
		want           Change
		ops            []LiveOp
		reasonContains string
	}{
		{"nothing", tuned(), true, true, ChangeNone, nil, ""},
		{"iotune live", mod(func(s *Spec) { s.Disks[1].IOTune = limits }), true, true, ChangeLive,
			[]LiveOp{{Kind: LiveSetIOTune, Noun: "disk", Device: "sda", IOTune: limits}}, ""},
		{"iotune removed", mod(func(s *Spec) { s.Disks[0].IOTune = nil }), true, true, ChangeLive,
			[]LiveOp{{Kind: LiveSetIOTune, Noun: "disk", Device: "vda"}}, ""},
		{"iotune with sizing", mod(func(s *Spec) { s.Disks[1].IOTune = limits; s.MemoryKiB = 192 * KiBPerMiB }), true, true, ChangeLive,
			[]LiveOp{{Kind: LiveSetIOTune, Noun: "disk", Device: "sda", IOTune: limits}}, ""},
		{"stopped", mod(func(s *Spec) { s.Disks[1].IOTune = limits }), false, false, ChangeDefinition, nil, ""},
		{"iotune and cache", mod(func(s *Spec) { s.Disks[1].IOTune = limits; s.Disks[0].Cache = "directsync" }), true, true, ChangeRestart, nil,
			"disk vda changes beyond its iotune"},
		{"group removed", mod(func(s *Spec) { s.Disks[0].IOTune.GroupName = "" }), true, true, ChangeRestart, nil, "removing iotune group_name"},
		{"another family", mod(func(s *Spec) { s.Disks[1].IOTune = limits; s.CPUMode = "host-model" }), true, true, ChangeRestart, nil, "cpu"},
		{"vcpu up within the ceiling", mod(func(s *Spec) { s.VCPU = 2; s.Disks[1].IOTune = limits }), true, true, ChangeLive,
			[]LiveOp{{Kind: LiveSetIOTune, Noun: "disk", Device: "sda", IOTune: limits}}, ""},
		{"ceiling", mod(func(s *Spec) { s.MaxVCPU = 3 }), true, true, ChangeRestart, nil, "sizing changes"},
	}
	for _, c := range cases {
		p := PlanChange(tuned(), c.next, c.before, c.after, nil)
		if p.Change != c.want || !reflect.DeepEqual(p.Ops, c.ops) || !strings.Contains(p.Reason, c.reasonContains) {
			t.Errorf("%s: %+v, want %s %+v (reason %q)", c.name, p, c.want, c.ops, c.reasonContains)
		}
		if got := Classify(tuned(), c.next, c.before, c.after); got != c.want {
			t.Errorf("%s: Classify %s, want %s", c.name, got, c.want)
		}
	}
}
