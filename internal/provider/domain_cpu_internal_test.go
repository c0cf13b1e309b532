package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// TestCPUFromSpec: pins and cells keep the cpusets as written while libvirt's rewrite
// holds the same CPUs; without a prior (import) they read as libvirt has them, and an
// unset part is null, never an empty map.
func TestCPUFromSpec(t *testing.T) {
	s := domainxml.Spec{VCPU: 2, CPUPinning: map[uint]string{0: "0-1"}, EmulatorPinning: "0-1",
		NUMACells: []domainxml.NUMACell{{ID: 0, CPUs: "0-1", MemoryMiB: 128}}, CPUTopology: &domainxml.CPUTopology{Sockets: 1, Dies: 1, Cores: 2, Threads: 1}}
	prior := &domainModel{}
	prior.CPU.CPUPinning = types.MapValueMust(types.StringType, map[string]attr.Value{"0": types.StringValue("0,1")})
	prior.CPU.EmulatorPinning = types.StringValue("1,0")
	prior.CPU.NUMACells = []numaCellModel{{ID: types.Int64Value(0), CPUs: types.StringValue("0,1"), MemoryMiB: types.Int64Value(128)}}
	prior.CPU.CPUTopology = &cpuTopologyModel{Sockets: types.Int64Value(1), Dies: types.Int64Value(1), Cores: types.Int64Value(2), Threads: types.Int64Value(1)}
	m := &domainModel{}
	cpuFromSpec(s, prior, m)
	if !m.CPU.CPUPinning.Equal(prior.CPU.CPUPinning) || m.CPU.EmulatorPinning != prior.CPU.EmulatorPinning || m.CPU.NUMACells[0].CPUs.ValueString() != "0,1" {
		t.Errorf("as written: %v %v %+v", m.CPU.CPUPinning, m.CPU.EmulatorPinning, m.CPU.NUMACells)
	}
	m = &domainModel{}
	cpuFromSpec(s, &domainModel{}, m)
	if m.CPU.CPUPinning.Elements()["0"].(types.String).ValueString() != "0-1" || m.CPU.NUMACells[0].CPUs.ValueString() != "0-1" ||
		!m.CPU.CPUFeatures.IsNull() || m.CPU.CPUTopology.Dies.ValueInt64() != 1 {
		t.Errorf("imported: %+v", m.CPU.domainCPUModel)
	}
	m = &domainModel{}
	cpuFromSpec(domainxml.Spec{VCPU: 1}, &domainModel{}, m)
	if !m.CPU.CPUPinning.IsNull() || !m.CPU.CPUFeatures.IsNull() || m.CPU.CPUTopology != nil || m.CPU.NUMACells != nil || !m.CPU.EmulatorPinning.IsNull() {
		t.Errorf("nothing set: %+v", m.CPU.domainCPUModel)
	}
}

// TestValidatePlatformUnknown: a cell size known only at apply is not an error at plan;
// a known wrong one is, at the attribute.
func TestValidatePlatformUnknown(t *testing.T) {
	m := &domainModel{}
	m.VCPU, m.MemoryMiB, m.MaxVCPU, m.MaxMemoryMiB = types.Int64Value(1), types.Int64Value(256), types.Int64Null(), types.Int64Null()
	m.CPU.CPUFeatures, m.CPU.CPUPinning = types.MapNull(types.StringType), types.MapNull(types.StringType)
	m.CPU.NUMACells = []numaCellModel{{ID: types.Int64Value(0), CPUs: types.StringValue("0"), MemoryMiB: types.Int64Unknown()}}
	var diags diag.Diagnostics
	validatePlatform(m, &diags)
	if diags.HasError() {
		t.Errorf("unknown memory_mib: %v", diags)
	}
	m.CPU.NUMACells[0].MemoryMiB = types.Int64Value(128)
	validatePlatform(m, &diags)
	if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), "add up to 128, but the domain has 256 MiB") {
		t.Errorf("known wrong memory_mib: %v", diags)
	}
}
