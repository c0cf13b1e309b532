package clustermachine

import (
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// Sizing updates: ceilings stay while the new values fit (live on a running machine),
// else become the new values x2 and the machine restarts; vCPU removal restarts.
func TestClusterMachinePlanSizing(t *testing.T) {
	old := machineSizing{VCPU: 1, MaxVCPU: 2, MemMiB: 256, MaxMemMiB: 512}
	cases := []struct {
		name       string
		vcpu       uint
		mem        uint64
		running    bool
		want       machineSizing
		wantChange domainxml.Change
	}{
		{"nothing", 1, 256, true, old, domainxml.ChangeNone},
		{"vcpu within headroom", 2, 256, true, machineSizing{2, 2, 256, 512}, domainxml.ChangeLive},
		{"memory within headroom", 1, 512, true, machineSizing{1, 2, 512, 512}, domainxml.ChangeLive},
		{"memory shrink", 1, 128, true, machineSizing{1, 2, 128, 512}, domainxml.ChangeLive},
		{"vcpu beyond headroom", 3, 256, true, machineSizing{3, 6, 256, 512}, domainxml.ChangeRestart},
		{"memory beyond headroom", 1, 1024, true, machineSizing{1, 2, 1024, 2048}, domainxml.ChangeRestart},
		{"stopped", 3, 256, false, machineSizing{3, 6, 256, 512}, domainxml.ChangeDefinition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := planSizing(old, tc.vcpu, tc.mem)
			if got != tc.want {
				t.Errorf("planSizing = %+v, want %+v", got, tc.want)
			}
			if c := domainxml.Classify(old.spec(), got.spec(), tc.running, tc.running); c != tc.wantChange {
				t.Errorf("Classify = %s, want %s", c, tc.wantChange)
			}
		})
	}
	shrink := machineSizing{VCPU: 2, MaxVCPU: 4, MemMiB: 256, MaxMemMiB: 512}
	if c := domainxml.Classify(shrink.spec(), planSizing(shrink, 1, 256).spec(), true, true); c != domainxml.ChangeRestart {
		t.Errorf("vcpu 2 -> 1 on a running machine: %s, want restart", c)
	}
}
