package domainxml

import (
	"slices"
	"strings"
	"testing"
)

// TestBootOS: nil keeps today's <boot dev="hd"/>; a list replaces it in order; [] is
// the default again; a menu is written and read; os.boot with a device boot_order
// is refused naming the device; a change restarts a running domain.
func TestBootOS(t *testing.T) {
	s := Spec{Name: "m", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB}
	d, _ := Build(nil, s)
	if len(d.OS.BootDevices) != 1 || d.OS.BootDevices[0].Dev != "hd" || d.OS.BootMenu != nil {
		t.Fatalf("default: %+v", d.OS)
	}
	on := true
	s.Boot = BootOS{Devices: []string{"cdrom", "network", "hd"}, Menu: &on}
	d, err := Build(d, s)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := d.Marshal()
	flat := strings.Join(strings.Fields(text), "")
	if !strings.Contains(flat, `<bootdev="cdrom"></boot><bootdev="network"></boot><bootdev="hd"></boot><bootmenuenable="yes"></bootmenu>`) {
		t.Errorf("boot devices:\n%s", text)
	}
	p, _ := FromDomain(d)
	if !slices.Equal(p.Spec.Boot.Devices, s.Boot.Devices) || p.Spec.Boot.Menu == nil || !bootOSFamily.same(p.Spec, s) {
		t.Errorf("round trip %+v", p.Spec.Boot)
	}
	next := s
	next.Boot = BootOS{Devices: []string{}, Menu: new(bool)}
	if pl := PlanChange(s, next, true, true, nil); pl.Change != ChangeRestart {
		t.Errorf("change: %s", pl.Change)
	}
	d, _ = Build(d, next)
	if len(d.OS.BootDevices) != 1 || d.OS.BootDevices[0].Dev != "hd" || d.OS.BootMenu != nil {
		t.Errorf("back to the default: %+v", d.OS)
	}
	if p, _ := FromDomain(d); p.Spec.Boot.Devices != nil || !bootOSFamily.same(p.Spec, next) {
		t.Errorf("default reads as %+v", p.Spec.Boot)
	}
	s.Disks = []Disk{{Path: "/x.qcow2", BootOrder: 1}}
	if _, err := Build(nil, s); err == nil || !strings.Contains(err.Error(), "os.boot and the boot_order of disk") {
		t.Errorf("exclusive: %v", err)
	}
	// A menu timeout is written and read back; without the menu it is refused (libvirt drops it).
	ms := uint(2500)
	m := Spec{Name: "m", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB, Boot: BootOS{Menu: &on, MenuTimeout: &ms}}
	d, err = Build(nil, m)
	if err != nil || d.OS.BootMenu == nil || d.OS.BootMenu.Timeout != "2500" {
		t.Fatalf("menu timeout: %v %+v", err, d.OS.BootMenu)
	}
	if p, _ := FromDomain(d); p.Spec.Boot.MenuTimeout == nil || *p.Spec.Boot.MenuTimeout != 2500 || !bootOSFamily.same(p.Spec, m) {
		t.Errorf("menu timeout reads as %+v", p.Spec.Boot)
	}
	{
		next, other := m, uint(100)
		next.Boot.MenuTimeout = &other
		if bootOSFamily.same(m, next) {
			t.Error("another timeout is the same")
		}
		next.Boot.Menu = new(bool)
		if err := bootOSFamily.validate(&next); err == nil || !strings.Contains(err.Error(), "os.boot_menu.timeout_ms") {
			t.Errorf("timeout without the menu: %v", err)
		}
	}
	s.Boot = BootOS{Devices: []string{"floppy"}}
	s.Disks = nil
	if err := bootOSFamily.validate(&s); err == nil || !strings.Contains(err.Error(), `"floppy"`) {
		t.Errorf("bad name: %v", err)
	}
}
