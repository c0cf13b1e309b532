package storage

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// A set 0 stays while the volume is sparse; otherwise state is what libvirt reports.
func TestAllocationRead(t *testing.T) {
	for _, c := range []struct {
		prior           types.Int64
		alloc, capacity uint64
		want            int64
	}{
		{types.Int64Null(), 1 << 20, 1 << 20, 1 << 20},         // not set: reported
		{types.Int64Unknown(), 4096, 1 << 20, 4096},            // create without it: reported
		{types.Int64Value(0), 4096, 1 << 20, 0},                // sparse as asked
		{types.Int64Value(0), 1 << 20, 1 << 20, 1 << 20},       // filled up (or thick): shows
		{types.Int64Value(1 << 20), 1 << 20, 1 << 20, 1 << 20}, // thick as asked
		{types.Int64Value(8192), 4096, 1 << 20, 4096},          // anything else: reported
	} {
		got := allocationRead(c.prior, &libvirt.VolumeInfo{Allocation: c.alloc, Capacity: c.capacity})
		if got.ValueInt64() != c.want {
			t.Errorf("allocationRead(%v, alloc %d, capacity %d) = %v, want %d", c.prior, c.alloc, c.capacity, got, c.want)
		}
	}
	if allocationSpec(types.Int64Null()) != nil || allocationSpec(types.Int64Unknown()) != nil {
		t.Error("allocationSpec of an unset value must send no <allocation>")
	}
	if a := allocationSpec(types.Int64Value(0)); a == nil || *a != 0 {
		t.Errorf("allocationSpec(0) = %v, want 0", a)
	}
}
