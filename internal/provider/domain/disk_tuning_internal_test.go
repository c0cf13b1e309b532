package domain

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// TestDiskTuningFromSpec: a wwn keeps the case the user wrote (else lower case), a false
// the user wrote stays false (else null), a cdrom is read-only, limits of 0 are null.
func TestDiskTuningFromSpec(t *testing.T) {
	d := domainxml.Disk{Device: domainxml.DeviceDisk, DiskTuning: domainxml.DiskTuning{WWN: "5000C50015EA71AD",
		IOTune: &domainxml.IOTune{TotalIopsSec: 10}}}
	m := diskTuningFromSpec(d, nil)
	if m.WWN.ValueString() != "5000c50015ea71ad" || !m.ReadOnly.IsNull() || !m.Shareable.IsNull() ||
		m.IOTune == nil || m.IOTune.TotalIopsSec.ValueInt64() != 10 || !m.IOTune.TotalBytesSec.IsNull() || !m.IOTune.GroupName.IsNull() {
		t.Errorf("no prior: %+v %+v", m, m.IOTune)
	}
	prior := &diskTuningModel{WWN: types.StringValue("5000C50015ea71ad"), ReadOnly: types.BoolValue(false), Shareable: types.BoolValue(false)}
	m = diskTuningFromSpec(d, prior)
	if m.WWN != prior.WWN || m.ReadOnly != prior.ReadOnly || m.Shareable != prior.Shareable {
		t.Errorf("with prior: %+v", m)
	}
	d.Device = domainxml.DeviceCDROM
	if m = diskTuningFromSpec(d, nil); !m.ReadOnly.ValueBool() {
		t.Errorf("cdrom read_only %v", m.ReadOnly)
	}
	if got := m.toSpec(); got.WWN != "5000c50015ea71ad" || got.IOTune.TotalIopsSec != 10 {
		t.Errorf("toSpec %+v", got)
	}
}

// TestPlanDiskTuning: an unset read_only plans true for a cdrom and null for a disk.
func TestPlanDiskTuning(t *testing.T) {
	m := &Model{}
	m.Disks = []diskModel{{Device: types.StringValue("cdrom")}, {Device: types.StringValue("disk")}, {Device: types.StringUnknown()}}
	for i := range m.Disks {
		m.Disks[i].ReadOnly = types.BoolUnknown()
	}
	planDiskTuning(m)
	if !m.Disks[0].ReadOnly.ValueBool() || !m.Disks[1].ReadOnly.IsNull() || !m.Disks[2].ReadOnly.IsUnknown() {
		t.Errorf("read_only %v %v %v", m.Disks[0].ReadOnly, m.Disks[1].ReadOnly, m.Disks[2].ReadOnly)
	}
}
