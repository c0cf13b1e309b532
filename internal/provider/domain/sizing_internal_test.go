package domain

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

func i64(v int64) types.Int64 { return types.Int64Value(v) }

var null64 = types.Int64Null()

// Either form of the memory, its ceiling and a NUMA cell reaches the spec in exact KiB.
func TestSizingToSpec_bothForms(t *testing.T) {
	for name, tc := range map[string]struct {
		mib, kib, maxMiB, maxKiB types.Int64
		cell                     numaCellModel
		mem, maxMem, cellKiB     uint64
	}{
		"MiB":   {i64(1024), null64, i64(2048), null64, numaCellModel{MemoryMiB: i64(2048)}, 1 << 20, 2 << 20, 2 << 20},
		"KiB":   {null64, i64(1000001), null64, i64(2000004), numaCellModel{MemoryKiB: i64(2000004)}, 1000001, 2000004, 2000004},
		"mixed": {null64, i64(1000001), i64(2048), null64, numaCellModel{MemoryMiB: i64(2048), MemoryKiB: null64}, 1000001, 2 << 20, 2 << 20},
	} {
		m := withGroups(&Model{})
		m.VCPU, m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB = i64(1), tc.mib, tc.kib, tc.maxMiB, tc.maxKiB
		tc.cell.ID, tc.cell.CPUs = i64(0), types.StringValue("0")
		m.CPU.NUMACells = []numaCellModel{tc.cell}
		s := specFromModel(m)
		if s.MemoryKiB != tc.mem || s.MaxMemoryKiB != tc.maxMem || len(s.NUMACells) != 1 || s.NUMACells[0].MemoryKiB != tc.cellKiB {
			t.Errorf("%s: memory %d / %d KiB, cells %+v; want %d / %d, a cell of %d", name, s.MemoryKiB, s.MaxMemoryKiB, s.NUMACells,
				tc.mem, tc.maxMem, tc.cellKiB)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// sizes is a spec with the given memory, ceiling (0: none) and cells.
func sizes(mem, maxMem uint64, cells ...uint64) domainxml.Spec {
	s := domainxml.Spec{Name: "d", VCPU: uint(max(len(cells), 1)), MemoryKiB: mem, MaxMemoryKiB: maxMem}
	for i, c := range cells {
		s.NUMACells = append(s.NUMACells, domainxml.NUMACell{ID: uint(i), CPUs: string(rune('0' + i)), MemoryKiB: c})
	}
	return s
}

// Import writes the MiB form where the value is a whole number of MiB, else the KiB form:
// the memory, its ceiling and each cell on its own.
func TestSizingFromSpec_importChoosesTheForm(t *testing.T) {
	m := fromSpec(sizes(1000001, 0, 500000, 500001), nil)
	if !m.MemoryMiB.IsNull() || m.MemoryKiB.ValueInt64() != 1000001 || !m.MaxMemoryMiB.IsNull() || !m.MaxMemoryKiB.IsNull() {
		t.Errorf("odd memory: %s / %s, max %s / %s", m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB)
	}
	if m.CPU == nil || len(m.CPU.NUMACells) != 2 {
		t.Fatalf("cells: %+v", m.CPU)
	}
	for i, want := range []int64{500000, 500001} {
		if c := m.CPU.NUMACells[i]; !c.MemoryMiB.IsNull() || c.MemoryKiB.ValueInt64() != want {
			t.Errorf("cell %d: %s / %s, want memory_kib = %d", i, c.MemoryMiB, c.MemoryKiB, want)
		}
	}
	m = fromSpec(sizes(1<<20, 2000004, 1<<20, 2000004-(1<<20)), nil)
	if m.MemoryMiB.ValueInt64() != 1024 || !m.MemoryKiB.IsNull() || !m.MaxMemoryMiB.IsNull() || m.MaxMemoryKiB.ValueInt64() != 2000004 {
		t.Errorf("whole memory, odd ceiling: %s / %s, max %s / %s", m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB)
	}
	if c := m.CPU.NUMACells; c[0].MemoryMiB.ValueInt64() != 1024 || !c[0].MemoryKiB.IsNull() || !c[1].MemoryMiB.IsNull() ||
		c[1].MemoryKiB.ValueInt64() != 2000004-(1<<20) {
		t.Errorf("cells: %+v", c)
	}
	m = fromSpec(sizes(1<<20, 2<<20), nil)
	if m.MemoryMiB.ValueInt64() != 1024 || m.MaxMemoryMiB.ValueInt64() != 2048 || !m.MemoryKiB.IsNull() || !m.MaxMemoryKiB.IsNull() {
		t.Errorf("whole: %s / %s, max %s / %s", m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB)
	}
}

// After create or update (and on refresh) each value keeps the form the prior model
// wrote, even a whole number of MiB written in KiB; a value written in MiB that libvirt no
// longer has in whole MiB (changed outside Terraform) reads in KiB, so the drift shows.
func TestSizingFromSpec_keepsTheForm(t *testing.T) {
	prior := withGroups(&Model{Name: types.StringValue("d")})
	prior.MemoryMiB, prior.MemoryKiB, prior.MaxMemoryMiB, prior.MaxMemoryKiB = null64, i64(1<<20), i64(2048), null64
	prior.CPU.NUMACells = []numaCellModel{{ID: i64(0), CPUs: types.StringValue("0"), MemoryMiB: null64, MemoryKiB: i64(1 << 20)},
		{ID: i64(1), CPUs: types.StringValue("1"), MemoryMiB: i64(1024), MemoryKiB: null64}}
	s := sizes(1<<20, 2<<20, 1<<20, 1<<20)
	m := fromSpec(s, prior)
	if !m.MemoryMiB.IsNull() || m.MemoryKiB.ValueInt64() != 1<<20 || m.MaxMemoryMiB.ValueInt64() != 2048 || !m.MaxMemoryKiB.IsNull() {
		t.Errorf("as written: %s / %s, max %s / %s", m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB)
	}
	if c := m.CPU.NUMACells; !c[0].MemoryMiB.IsNull() || c[0].MemoryKiB.ValueInt64() != 1<<20 || c[1].MemoryMiB.ValueInt64() != 1024 || !c[1].MemoryKiB.IsNull() {
		t.Errorf("cells as written: %+v", c)
	}
	if c := domainxml.Classify(specFromModel(m), specFromModel(fromSpec(s, m)), false, false); c != domainxml.ChangeNone {
		t.Errorf("read-back classifies as %s", c)
	}
	// Changed outside: memory and the second cell one KiB off whole MiB, no headroom left
	// (the ceiling, written, reads as the memory).
	drift := sizes(1<<20+1, 0, 1<<20, 1<<20+1)
	m = fromSpec(drift, prior)
	if !m.MemoryMiB.IsNull() || m.MemoryKiB.ValueInt64() != 1<<20+1 || !m.MaxMemoryMiB.IsNull() || m.MaxMemoryKiB.ValueInt64() != 1<<20+1 {
		t.Errorf("drift: %s / %s, max %s / %s", m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB)
	}
	if c := m.CPU.NUMACells[1]; !c.MemoryMiB.IsNull() || c.MemoryKiB.ValueInt64() != 1<<20+1 {
		t.Errorf("drifted cell: %+v", c)
	}
	// A state from before memory_kib (MiB everywhere, memory_kib null) reads back as it was.
	old := withGroups(&Model{Name: types.StringValue("d")})
	old.MemoryMiB, old.MaxMemoryMiB = i64(256), i64(512)
	old.CPU.NUMACells = []numaCellModel{{ID: i64(0), CPUs: types.StringValue("0"), MemoryMiB: i64(512)}}
	m = fromSpec(sizes(256<<10, 512<<10, 512<<10), old)
	if m.MemoryMiB.ValueInt64() != 256 || !m.MemoryKiB.IsNull() || m.MaxMemoryMiB.ValueInt64() != 512 || !m.MaxMemoryKiB.IsNull() ||
		m.CPU.NUMACells[0] != old.CPU.NUMACells[0] {
		t.Errorf("state from before: %s / %s, max %s / %s, cells %+v", m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB, m.CPU.NUMACells)
	}
}

func TestValidateSizing(t *testing.T) {
	type forms struct{ mib, kib, maxMiB, maxKiB types.Int64 }
	for name, tc := range map[string]struct {
		f    forms
		cell *numaCellModel
		at   path.Path
		want string // "" no error
	}{
		"MiB":                  {f: forms{i64(256), null64, null64, null64}},
		"KiB":                  {f: forms{null64, i64(1000001), null64, i64(1000001)}},
		"unknown":              {f: forms{types.Int64Unknown(), null64, types.Int64Unknown(), null64}},
		"unknown beside":       {f: forms{types.Int64Unknown(), i64(1), null64, null64}},
		"both":                 {f: forms{i64(256), i64(262144), null64, null64}, at: path.Root("memory_kib"), want: "memory_mib = 256 and memory_kib = 262144 are the same setting"},
		"neither":              {f: forms{null64, null64, null64, null64}, at: path.Root("memory_mib"), want: "set the memory with memory_mib (MiB) or memory_kib (KiB, exact)"},
		"both maxima":          {f: forms{i64(256), null64, i64(512), i64(524288)}, at: path.Root("max_memory_kib"), want: "max_memory_mib = 512 and max_memory_kib = 524288"},
		"max KiB below MiB":    {f: forms{i64(256), null64, null64, i64(262143)}, at: path.Root("max_memory_kib"), want: "max_memory_kib = 262143 is below memory_mib = 256 (262144 KiB). max_memory_kib is the memory ceiling: set it to 262144 or more"},
		"max MiB below KiB":    {f: forms{null64, i64(1000001), i64(976), null64}, at: path.Root("max_memory_mib"), want: "max_memory_mib = 976 (999424 KiB) is below memory_kib = 1000001. max_memory_mib is the memory ceiling: set it to 977 or more"},
		"max KiB below KiB":    {f: forms{null64, i64(1000001), null64, i64(1000000)}, at: path.Root("max_memory_kib"), want: "max_memory_kib = 1000000 is below memory_kib = 1000001. max_memory_kib is the memory ceiling: set it to 1000001 or more"},
		"max MiB equal in KiB": {f: forms{null64, i64(1 << 20), i64(1024), null64}},
		"cell neither":         {f: forms{i64(256), null64, null64, null64}, cell: &numaCellModel{}, at: path.Root("cpu").AtName("numa_cell").AtListIndex(0).AtName("memory_mib"), want: "cpu.numa_cell 0: set the memory"},
		"cell both":            {f: forms{i64(256), null64, null64, null64}, cell: &numaCellModel{MemoryMiB: i64(256), MemoryKiB: i64(262144)}, at: path.Root("cpu").AtName("numa_cell").AtListIndex(0).AtName("memory_kib"), want: "cpu.numa_cell 0: memory_mib = 256 and memory_kib = 262144"},
		"cell KiB":             {f: forms{i64(256), null64, null64, null64}, cell: &numaCellModel{MemoryKiB: i64(262144)}},
	} {
		m := withGroups(&Model{Name: types.StringValue("d")})
		m.MemoryMiB, m.MemoryKiB, m.MaxMemoryMiB, m.MaxMemoryKiB = tc.f.mib, tc.f.kib, tc.f.maxMiB, tc.f.maxKiB
		if tc.cell != nil {
			m.CPU.NUMACells = []numaCellModel{*tc.cell}
		}
		var diags diag.Diagnostics
		validateSizing(m, &diags)
		switch {
		case tc.want == "" && diags.HasError():
			t.Errorf("%s: %v", name, diags)
		case tc.want == "":
		case !diags.HasError() || !strings.Contains(diags.Errors()[0].Detail(), tc.want):
			t.Errorf("%s: want %q, got %v", name, tc.want, diags)
		default:
			if d, ok := diags.Errors()[0].(diag.DiagnosticWithPath); !ok || !d.Path().Equal(tc.at) {
				t.Errorf("%s: the error is not at %s: %v", name, tc.at, diags.Errors()[0])
			}
		}
	}
}
