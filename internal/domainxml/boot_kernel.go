package domainxml

import (
	"fmt"
	"path/filepath"

	"libvirt.org/go/libvirtxml"
)

// Direct kernel boot: QEMU loads a kernel (and initrd, command line, device tree) from
// the host instead of booting a disk (<os><kernel>, <initrd>, <cmdline>, <dtb>). The
// files must be readable by libvirt's QEMU user. A change restarts a running domain.

// Kernel is the direct kernel boot of a domain; Path empty means none.
type Kernel struct {
	Path, Initrd, Cmdline, DTB string
}

var kernelFamily = family{
	name: "kernel",
	validate: func(s *Spec) error {
		k := s.Kernel
		if k == nil {
			return nil
		}
		if k.Path == "" && (k.Initrd != "" || k.Cmdline != "" || k.DTB != "") {
			return fmt.Errorf("kernel: initrd, cmdline and dtb need a kernel path")
		}
		for _, f := range []struct{ name, v string }{{"path", k.Path}, {"initrd", k.Initrd}, {"dtb", k.DTB}} {
			if f.v != "" && !filepath.IsAbs(f.v) {
				return fmt.Errorf("kernel.%s must be an absolute path on the host, got: %s", f.name, f.v)
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		if k := s.Kernel; k != nil {
			d.OS.Kernel, d.OS.Initrd, d.OS.Cmdline, d.OS.DTB = k.Path, k.Initrd, k.Cmdline, k.DTB
		}
		return nil
	},
	// None reads as nil (specs that never set it round-trip).
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		if d.OS != nil && d.OS.Kernel != "" {
			p.Spec.Kernel = &Kernel{Path: d.OS.Kernel, Initrd: d.OS.Initrd, Cmdline: d.OS.Cmdline, DTB: d.OS.DTB}
		}
	},
	same: func(a, b Spec) bool {
		if b.Kernel == nil {
			return true
		}
		have := Kernel{}
		if a.Kernel != nil {
			have = *a.Kernel
		}
		return have == *b.Kernel
	},
}
