package domainxml

import (
	"reflect"
	"strings"
	"testing"
)

// oddSizing is a domain whose sizes are no whole number of MiB anywhere: memory, its
// ceiling and both NUMA cells (which add up to the ceiling, to the KiB).
func oddSizing() Spec {
	s := Spec{Name: "odd", Type: "qemu", VCPU: 2, MemoryKiB: 1000001, MaxMemoryKiB: 2000004, Firmware: FirmwareBIOS,
		Graphics: Graphics{Type: GraphicsNone}}
	s.CPUMode = "host-model"
	s.NUMACells = []NUMACell{{ID: 0, CPUs: "0", MemoryKiB: 1000002}, {ID: 1, CPUs: "1", MemoryKiB: 1000002}}
	return s
}

// Build writes the exact KiB of memory, currentMemory, the ceiling and every cell, and
// Parse reads them back unchanged.
func TestSizing_exactKiBRoundTrip(t *testing.T) {
	s := oddSizing()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	_, text := build(t, nil, s)
	for _, want := range []string{`<memory unit="KiB">2000004</memory>`, `<currentMemory unit="KiB">1000001</currentMemory>`,
		`<cell id="0" cpus="0" memory="1000002" unit="KiB"`, `<cell id="1" cpus="1" memory="1000002" unit="KiB"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the definition lacks %s:\n%s", want, text)
		}
	}
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.MemoryKiB != 1000001 || p.Spec.MaxMemoryKiB != 2000004 || !reflect.DeepEqual(p.Spec.NUMACells, s.NUMACells) {
		t.Errorf("read back memory %d / %d KiB, cells %+v; want 1000001 / 2000004, %+v", p.Spec.MemoryKiB, p.Spec.MaxMemoryKiB,
			p.Spec.NUMACells, s.NUMACells)
	}
	// Rebuilt onto itself, nothing moves.
	_, again := build(t, mustDomain(t, text), p.Spec)
	if again != text {
		t.Errorf("rebuilt from what it read, the definition changed:\n%s\nwas\n%s", again, text)
	}
}

// What virsh defines: <memory> alone (currentMemory as libvirt prints it, or none), cells in
// KiB whose sum is no whole MiB. Read exactly, as memory without headroom.
func TestSizing_parseLibvirtKiB(t *testing.T) {
	for name, extra := range map[string]string{
		"memory alone":       ``,
		"with currentMemory": `<currentMemory unit='KiB'>1000001</currentMemory>`,
	} {
		t.Run(name, func(t *testing.T) {
			p, err := Parse(`<domain type='qemu'><name>v</name><memory unit='KiB'>1000001</memory>` + extra + `<vcpu>2</vcpu>
<os><type arch='x86_64'>hvm</type></os>
<cpu mode='host-model'><numa><cell id='0' cpus='0' memory='500000' unit='KiB'/><cell id='1' cpus='1' memory='500001'/></numa></cpu>
</domain>`)
			if err != nil {
				t.Fatal(err)
			}
			want := []NUMACell{{ID: 0, CPUs: "0", MemoryKiB: 500000}, {ID: 1, CPUs: "1", MemoryKiB: 500001}}
			if p.Spec.MemoryKiB != 1000001 || p.Spec.MaxMemoryKiB != 0 || !reflect.DeepEqual(p.Spec.NUMACells, want) {
				t.Errorf("memory %d / %d KiB, cells %+v", p.Spec.MemoryKiB, p.Spec.MaxMemoryKiB, p.Spec.NUMACells)
			}
			if err := p.Spec.Validate(); err != nil {
				t.Errorf("what libvirt accepted does not validate: %v", err)
			}
		})
	}
}

func TestToKiB(t *testing.T) {
	for _, tc := range []struct {
		v    uint
		unit string
		want uint64
	}{
		{1000001, "KiB", 1000001}, {1000001, "", 1000001}, {7, "k", 7}, {7, "K", 7}, {256, "MiB", 262144}, {256, "m", 262144},
		{1, "GiB", 1048576}, {1, "g", 1048576}, {1, "TiB", 1 << 30}, {268435456, "bytes", 262144}, {1025, "b", 2}, {1023, "B", 1},
		{1000, "KB", 977}, {1, "MB", 977}, {1, "GB", 976563},
	} {
		if got := toKiB(tc.v, tc.unit); got != tc.want {
			t.Errorf("toKiB(%d, %s) = %d, want %d", tc.v, tc.unit, got, tc.want)
		}
	}
}

// Comparisons are in KiB: one KiB more within the ceiling is live, one KiB above it a
// restart, one KiB on the ceiling a change of structure.
func TestSizing_classifyKiB(t *testing.T) {
	base := oddSizing()
	base.NUMACells = nil
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want Change
	}{
		{"same", func(*Spec) {}, ChangeNone},
		{"one KiB more, within the ceiling", func(s *Spec) { s.MemoryKiB++ }, ChangeLive},
		{"one KiB above the ceiling", func(s *Spec) { s.MemoryKiB = s.MaxMemoryKiB + 1; s.MaxMemoryKiB++ }, ChangeRestart},
		{"the ceiling one KiB up", func(s *Spec) { s.MaxMemoryKiB++ }, ChangeRestart},
	} {
		next := base
		tc.edit(&next)
		if got := Classify(base, next, true, true); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestSizing_validateKiB(t *testing.T) {
	for want, edit := range map[string]func(*Spec){
		"memory (1000001 KiB) is more than the maximum memory (1000000 KiB)": func(s *Spec) { s.MaxMemoryKiB = 1000000; s.NUMACells = nil },
		"memory (2048 MiB) is more than the maximum memory (1024 MiB)":       func(s *Spec) { s.MemoryKiB, s.MaxMemoryKiB, s.NUMACells = 2<<20, 1<<20, nil },
		"adds up to 2000003 KiB, but the domain has 2000004 KiB":             func(s *Spec) { s.NUMACells[1].MemoryKiB-- },
		"make the cells add up to 2000004 KiB":                               func(s *Spec) { s.NUMACells[0].MemoryKiB++ },
	} {
		s := oddSizing()
		edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}

// A clone keeps its source's exact KiB unless it asks for whole MiB of its own.
func TestDeriveSizing_exactKiB(t *testing.T) {
	d := parseXML(t, `<domain type='qemu'><name>src</name><memory unit='KiB'>2000004</memory><currentMemory unit='KiB'>1000001</currentMemory><vcpu>1</vcpu></domain>`)
	if err := sizingFamily.derive(d, &CloneSpec{Name: "c"}); err != nil || d.Memory.Value != 2000004 || d.CurrentMemory.Value != 1000001 {
		t.Errorf("kept: %v %+v %+v", err, d.Memory, d.CurrentMemory)
	}
	if err := sizingFamily.derive(d, &CloneSpec{Name: "c", MemoryMiB: 1024}); err != nil || d.Memory.Value != 2000004 || d.CurrentMemory.Value != 1<<20 {
		t.Errorf("1024 MiB: %v %+v %+v", err, d.Memory, d.CurrentMemory)
	}
	err := sizingFamily.derive(d, &CloneSpec{Name: "c", MemoryMiB: 1954})
	if err == nil || !strings.Contains(err.Error(), "maximum of 2000004 KiB") {
		t.Errorf("above the ceiling: %v", err)
	}
}
