package domainxml

import (
	"strings"
	"testing"
)

// TestQEMUCommandline: args in order and env sorted under the qemu namespace, read back
// the same; nil keeps, empty removes; a change restarts; bad env names are refused.
func TestQEMUCommandline(t *testing.T) {
	s := Spec{Name: "d", VCPU: 1, MemoryKiB: 64 * KiBPerMiB, Type: "qemu", Graphics: Graphics{Type: GraphicsNone},
		QEMU: &QEMUCommandline{Args: []string{"-fw_cfg", "name=opt/x,string=1"}, Env: map[string]string{"B": "2", "A": ""}}}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := d.Marshal()
	if !strings.Contains(text, `<commandline xmlns="http://libvirt.org/schemas/domain/qemu/1.0">`) ||
		strings.Index(text, `<arg value="-fw_cfg">`) > strings.Index(text, `<arg value="name=opt/x,string=1">`) ||
		strings.Index(text, `name="A"`) > strings.Index(text, `name="B"`) {
		t.Fatalf("built:\n%s", text)
	}
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if !qemuCommandlineFamily.same(p.Spec, s) || !qemuCommandlineFamily.same(s, p.Spec) {
		t.Errorf("read back %+v", p.Spec.QEMU)
	}
	keep := s
	keep.QEMU = nil
	if d2, _ := Build(d, keep); d2.QEMUCommandline == nil {
		t.Error("nil removed the command line")
	}
	none := s
	none.QEMU = &QEMUCommandline{}
	if d3, _ := Build(d, none); d3.QEMUCommandline != nil {
		t.Error("empty kept the command line")
	}
	if PlanChange(s, none, true, true, nil).Change != ChangeRestart || PlanChange(s, keep, true, true, nil).Change != ChangeNone {
		t.Error("a change should restart, nil should change nothing")
	}
	bad := s
	bad.QEMU = &QEMUCommandline{Env: map[string]string{"1X": "y"}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "not an environment variable name") {
		t.Errorf("bad env name: %v", err)
	}
}
