package domainxml

import (
	"strings"
	"testing"
)

// TestKernel: written, read back, compared; an empty Kernel removes it, nil keeps it;
// relative paths and an initrd without a kernel are refused; a change restarts.
func TestKernel(t *testing.T) {
	s := Spec{Name: "m", Type: "qemu", VCPU: 1, MemoryKiB: 128 * KiBPerMiB,
		Kernel: &Kernel{Path: "/boot/vmlinux", Initrd: "/boot/initrd.img", Cmdline: "console=ttyS0 quiet", DTB: "/boot/x.dtb"}}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.OS.Kernel != "/boot/vmlinux" || d.OS.Initrd != "/boot/initrd.img" || d.OS.Cmdline != "console=ttyS0 quiet" || d.OS.DTB != "/boot/x.dtb" {
		t.Fatalf("os %+v", d.OS)
	}
	p, _ := FromDomain(d)
	if p.Spec.Kernel == nil || *p.Spec.Kernel != *s.Kernel || !kernelFamily.same(p.Spec, s) {
		t.Errorf("round trip %+v", p.Spec.Kernel)
	}
	keep := s
	keep.Kernel = nil
	if d2, _ := Build(d, keep); d2.OS.Kernel != "/boot/vmlinux" {
		t.Error("nil did not keep the kernel")
	}
	none := s
	none.Kernel = &Kernel{}
	if pl := PlanChange(s, none, true, true, nil); pl.Change != ChangeRestart {
		t.Errorf("removal: %s", pl.Change)
	}
	d, _ = Build(d, none)
	if d.OS.Kernel != "" || d.OS.Initrd != "" {
		t.Errorf("not removed: %+v", d.OS)
	}
	if p, _ := FromDomain(d); p.Spec.Kernel != nil || !kernelFamily.same(p.Spec, none) {
		t.Errorf("none reads as %+v", p.Spec.Kernel)
	}
	for k, want := range map[Kernel]string{{Path: "vmlinux"}: "kernel.path must be an absolute", {Initrd: "/i"}: "need a kernel path"} {
		if err := kernelFamily.validate(&Spec{Kernel: &k}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v", k, err)
		}
	}
}
