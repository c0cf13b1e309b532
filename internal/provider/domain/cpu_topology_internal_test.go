package domain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// TestCPUFromSpec: pins and cells keep the cpusets as written while libvirt's rewrite
// holds the same CPUs; on import they read as libvirt has them (dies = 1 left out), and
// an unset part is null, never an empty map; a part the prior model left null stays null
// whatever libvirt has.
func TestCPUFromSpec(t *testing.T) {
	s := domainxml.Spec{VCPU: 2, CPUPinning: map[uint]string{0: "0-1"}, EmulatorPinning: "0-1",
		NUMACells: []domainxml.NUMACell{{ID: 0, CPUs: "0-1", MemoryKiB: 128 * domainxml.KiBPerMiB}}, CPUTopology: &domainxml.CPUTopology{Sockets: 1, Dies: 1, Cores: 2, Threads: 1}}
	prior := withGroups(&Model{Name: types.StringValue("d")})
	prior.CPU.CPUPinning = types.MapValueMust(types.StringType, map[string]attr.Value{"0": types.StringValue("0,1")})
	prior.CPU.EmulatorPinning = types.StringValue("1,0")
	prior.CPU.NUMACells = []numaCellModel{{ID: types.Int64Value(0), CPUs: types.StringValue("0,1"), MemoryMiB: types.Int64Value(128)}}
	prior.CPU.CPUTopology = &cpuTopologyModel{Sockets: types.Int64Value(1), Dies: types.Int64Null(), Cores: types.Int64Value(2), Threads: types.Int64Value(1)}
	m := withGroups(&Model{})
	cpuFromSpec(s, prior, m)
	if !m.CPU.CPUPinning.Equal(prior.CPU.CPUPinning) || m.CPU.EmulatorPinning != prior.CPU.EmulatorPinning || m.CPU.NUMACells[0].CPUs.ValueString() != "0,1" ||
		m.CPU.CPUTopology != prior.CPU.CPUTopology || !m.CPU.CPUFeatures.IsNull() {
		t.Errorf("as written: %v %v %+v %+v", m.CPU.CPUPinning, m.CPU.EmulatorPinning, m.CPU.NUMACells, m.CPU.CPUTopology)
	}
	// libvirt's values where they differ: the one cell that changed, the new topology
	// (dies still left out), the pins.
	changed := s
	changed.CPUTopology = &domainxml.CPUTopology{Sockets: 2, Dies: 1, Cores: 1, Threads: 1}
	changed.CPUPinning, changed.EmulatorPinning = map[uint]string{0: "1"}, "1"
	m = withGroups(&Model{})
	cpuFromSpec(changed, prior, m)
	if m.CPU.CPUTopology.Sockets.ValueInt64() != 2 || !m.CPU.CPUTopology.Dies.IsNull() || m.CPU.CPUPinning.Elements()["0"].(types.String).ValueString() != "1" ||
		m.CPU.EmulatorPinning.ValueString() != "1" || m.CPU.NUMACells[0].CPUs.ValueString() != "0,1" {
		t.Errorf("changed: %+v", m.CPU.domainCPUModel)
	}
	m = withGroups(&Model{})
	cpuFromSpec(s, withGroups(&Model{}), m)
	if m.CPU.CPUPinning.Elements()["0"].(types.String).ValueString() != "0-1" || m.CPU.NUMACells[0].CPUs.ValueString() != "0-1" ||
		!m.CPU.CPUFeatures.IsNull() || m.CPU.CPUTopology.Sockets.ValueInt64() != 1 || !m.CPU.CPUTopology.Dies.IsNull() || m.CPU.EmulatorPinning.ValueString() != "0-1" {
		t.Errorf("imported: %+v", m.CPU.domainCPUModel)
	}
	m = withGroups(&Model{})
	cpuFromSpec(domainxml.Spec{VCPU: 1}, withGroups(&Model{}), m)
	if !m.CPU.CPUPinning.IsNull() || !m.CPU.CPUFeatures.IsNull() || m.CPU.CPUTopology != nil || m.CPU.NUMACells != nil || !m.CPU.EmulatorPinning.IsNull() {
		t.Errorf("nothing set: %+v", m.CPU.domainCPUModel)
	}
	m = withGroups(&Model{})
	cpuFromSpec(s, withGroups(&Model{Name: types.StringValue("d")}), m)
	if !m.CPU.CPUPinning.IsNull() || m.CPU.CPUTopology != nil || m.CPU.NUMACells != nil || !m.CPU.EmulatorPinning.IsNull() {
		t.Errorf("not written, stays null: %+v", m.CPU.domainCPUModel)
	}
}

// TestCPUModeFromSpec: import leaves out the CPU a domain made here gets (libvirt's
// custom qemu64 with fallback forbid and its check, the ARM default), and writes any
// other, with fallback and check only where they are not libvirt's default; otherwise a
// value is libvirt's where the prior model wrote it.
func TestCPUModeFromSpec(t *testing.T) {
	str := func(v types.String) string {
		if v.IsNull() {
			return "null"
		}
		return v.ValueString()
	}
	got := func(s domainxml.Spec, prior *Model) string {
		m := withGroups(&Model{})
		cpuModeFromSpec(s, withGroups(prior), m)
		c := m.CPU.domainCPUModeModel
		return strings.Join([]string{str(c.CPUMode), str(c.CPUModel), str(c.CPUFallback), str(c.CPUCheck)}, " ")
	}
	libvirts := domainxml.Spec{Type: "qemu", Arch: "x86_64", CPUMode: "custom", CPUModel: "qemu64", CPUFallback: "forbid", CPUCheck: "none"}
	arm := domainxml.Spec{Type: "qemu", Arch: "aarch64", CPUMode: "custom", CPUModel: "cortex-a57", CPUFallback: "forbid", CPUCheck: "none"}
	written := &Model{Name: types.StringValue("d")}
	written.CPU = &domainCPUGroup{domainCPUModeModel: domainCPUModeModel{CPUMode: types.StringValue("custom"), CPUModel: types.StringValue("qemu64"),
		CPUFallback: types.StringValue("forbid"), CPUCheck: types.StringNull()}}
	with := func(edit func(*domainxml.Spec)) domainxml.Spec {
		s := libvirts
		edit(&s)
		return s
	}
	for name, c := range map[string]struct {
		s     domainxml.Spec
		prior *Model
		want  string
	}{
		"import, libvirt's CPU":          {libvirts, &Model{}, "null null null null"},
		"import, no cpu":                 {domainxml.Spec{Type: "qemu"}, &Model{}, "null null null null"},
		"import, the ARM default":        {arm, &Model{}, "null null null null"},
		"import, fallback allow":         {with(func(s *domainxml.Spec) { s.CPUFallback = "allow" }), &Model{}, "custom qemu64 null null"},
		"import, check full":             {with(func(s *domainxml.Spec) { s.CPUCheck = "full" }), &Model{}, "custom qemu64 forbid full"},
		"import, custom under kvm":       {with(func(s *domainxml.Spec) { s.Type, s.CPUCheck = "kvm", "partial" }), &Model{}, "null null null null"},
		"import, features":               {with(func(s *domainxml.Spec) { s.CPUFeatures = map[string]string{"vmx": "disable"} }), &Model{}, "custom qemu64 forbid null"},
		"import, host-model":             {domainxml.Spec{Type: "qemu", CPUMode: "host-model", CPUCheck: "partial"}, &Model{}, "host-model null null null"},
		"import, host-passthrough":       {domainxml.Spec{Type: "qemu", CPUMode: "host-passthrough", CPUCheck: "partial"}, &Model{}, "host-passthrough null null partial"},
		"import, custom without a model": {domainxml.Spec{Type: "qemu", Arch: "ppc64le", CPUMode: "custom"}, &Model{}, "null null null null"},
		"not written: null":              {with(func(s *domainxml.Spec) { s.CPUModel = "Haswell" }), &Model{Name: types.StringValue("d")}, "null null null null"},
		"written: libvirt's values":      {with(func(s *domainxml.Spec) { s.CPUModel = "Haswell" }), written, "custom Haswell forbid null"},
	} {
		if g := got(c.s, c.prior); g != c.want {
			t.Errorf("%s: %s, want %s", name, g, c.want)
		}
	}
}

// TestCPUModeValidate: a fallback needs a custom model, a check a mode; the errors are at
// the attributes in the cpu group.
func TestCPUModeValidate(t *testing.T) {
	for want, c := range map[string]domainCPUModeModel{
		"cpu.model|cpu.model needs":  {CPUModel: types.StringValue("qemu64"), CPUMode: types.StringNull()},
		"cpu.fallback|cpu.fallback":  {CPUMode: types.StringValue("host-model"), CPUFallback: types.StringValue("forbid")},
		"cpu.check|cpu.check needs":  {CPUMode: types.StringNull(), CPUCheck: types.StringValue("full")},
		"cpu.model|\"custom\" needs": {CPUMode: types.StringValue("custom")},
		"|":                          {CPUMode: types.StringValue("custom"), CPUModel: types.StringValue("qemu64"), CPUFallback: types.StringValue("forbid"), CPUCheck: types.StringValue("full")},
	} {
		m := withGroups(&Model{})
		m.CPU.domainCPUModeModel = c
		var diags diag.Diagnostics
		validateCPUMode(m, &diags)
		at, summary, _ := strings.Cut(want, "|")
		switch {
		case at == "" && diags.HasError():
			t.Errorf("%+v: %v", c, diags)
		case at != "" && (len(diags.Errors()) != 1 || !strings.Contains(diags.Errors()[0].Summary(), summary)):
			t.Errorf("%+v: %v, want %s", c, diags, summary)
		case at != "":
			d, ok := diags.Errors()[0].(diag.DiagnosticWithPath)
			if p := strings.ReplaceAll(strings.ReplaceAll(fmt.Sprint(d.Path()), "[\"", "."), "\"]", ""); !ok || p != at {
				t.Errorf("%+v: at %v, want %s", c, d.Path(), at)
			}
		}
	}
}

// TestIOThreadsFromSpec: import writes a count the domain has (none: null); otherwise
// libvirt's count where the prior model wrote one, null where it did not.
func TestIOThreadsFromSpec(t *testing.T) {
	two, none := uint(2), domainxml.Spec{}
	has := domainxml.Spec{IOThreads: &two}
	written := withGroups(&Model{Name: types.StringValue("d")})
	written.CPU.IOThreads = types.Int64Value(0)
	for name, c := range map[string]struct {
		s     domainxml.Spec
		prior *Model
		want  types.Int64
	}{
		"import":              {has, &Model{}, types.Int64Value(2)},
		"import, none":        {none, &Model{}, types.Int64Null()},
		"not written":         {has, &Model{Name: types.StringValue("d")}, types.Int64Null()},
		"written":             {has, written, types.Int64Value(2)},
		"written, none there": {none, written, types.Int64Value(0)},
	} {
		m := withGroups(&Model{})
		domainIOThreads.fromSpec(c.s, withGroups(c.prior), m)
		if !m.CPU.IOThreads.Equal(c.want) {
			t.Errorf("%s: %v, want %v", name, m.CPU.IOThreads, c.want)
		}
	}
}

// TestValidatePlatformUnknown: a cell size known only at apply is not an error at plan;
// a known wrong one is, at the attribute.
func TestValidatePlatformUnknown(t *testing.T) {
	m := withGroups(&Model{})
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
	if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), "adds up to 128 MiB, but the domain has 256 MiB") {
		t.Errorf("known wrong memory_mib: %v", diags)
	}
	if d, ok := diags.Errors()[0].(diag.DiagnosticWithPath); !ok || !d.Path().Equal(path.Root("cpu").AtName("numa_cell")) {
		t.Errorf("the error is not at cpu.numa_cell: %v", diags.Errors()[0])
	}
	// Features need a CPU model, which cpu.mode (its own family) gives.
	m.CPU.NUMACells = nil
	m.CPU.CPUFeatures = types.MapValueMust(types.StringType, map[string]attr.Value{"vmx": types.StringValue("disable")})
	diags = nil
	validatePlatform(m, &diags)
	if !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), "set cpu.mode") {
		t.Errorf("features without a mode: %v", diags)
	}
	m.CPU.CPUMode = types.StringValue("host-model")
	diags = nil
	if validatePlatform(m, &diags); diags.HasError() {
		t.Errorf("features with cpu.mode: %v", diags)
	}
}

// TestVCPUPlacementFromSpec: import writes placement and cpuset where the domain has them
// (static is libvirt's default and reads as null); otherwise a value the prior model
// wrote is kept while it says the same (static for none, a cpuset with the same CPUs).
func TestVCPUPlacementFromSpec(t *testing.T) {
	m := withGroups(&Model{})
	cpuFromSpec(domainxml.Spec{VCPU: 1, VCPUPlacement: "auto", VCPUCPUSet: "0-1"}, withGroups(&Model{}), m)
	if m.CPU.VCPUPlacement.ValueString() != "auto" || m.CPU.VCPUCPUSet.ValueString() != "0-1" {
		t.Errorf("imported: %v %v", m.CPU.VCPUPlacement, m.CPU.VCPUCPUSet)
	}
	m = withGroups(&Model{})
	cpuFromSpec(domainxml.Spec{VCPU: 1}, withGroups(&Model{}), m)
	if !m.CPU.VCPUPlacement.IsNull() || !m.CPU.VCPUCPUSet.IsNull() {
		t.Errorf("imported without: %v %v", m.CPU.VCPUPlacement, m.CPU.VCPUCPUSet)
	}
	prior := withGroups(&Model{Name: types.StringValue("d")})
	prior.CPU.VCPUPlacement, prior.CPU.VCPUCPUSet = types.StringValue("static"), types.StringValue("1,0")
	m = withGroups(&Model{})
	cpuFromSpec(domainxml.Spec{VCPU: 1, VCPUCPUSet: "0-1"}, prior, m)
	if m.CPU.VCPUPlacement.ValueString() != "static" || m.CPU.VCPUCPUSet.ValueString() != "1,0" {
		t.Errorf("as written: %v %v", m.CPU.VCPUPlacement, m.CPU.VCPUCPUSet)
	}
	m = withGroups(&Model{})
	cpuFromSpec(domainxml.Spec{VCPU: 1, VCPUPlacement: "auto"}, prior, m)
	if m.CPU.VCPUPlacement.ValueString() != "auto" || !m.CPU.VCPUCPUSet.IsNull() {
		t.Errorf("changed outside: %v %v", m.CPU.VCPUPlacement, m.CPU.VCPUCPUSet)
	}
	m = withGroups(&Model{})
	cpuFromSpec(domainxml.Spec{VCPU: 1, VCPUPlacement: "auto", VCPUCPUSet: "0"}, withGroups(&Model{Name: types.StringValue("d")}), m)
	if !m.CPU.VCPUPlacement.IsNull() || !m.CPU.VCPUCPUSet.IsNull() {
		t.Errorf("not written, stays null: %v %v", m.CPU.VCPUPlacement, m.CPU.VCPUCPUSet)
	}
}
