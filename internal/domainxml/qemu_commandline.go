package domainxml

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// qemu.args / qemu.env: QEMU command-line passthrough (<qemu:commandline>), for what
// libvirt cannot express. libvirt marks such a domain tainted ("custom-argv") and does
// not check what is passed. A change restarts a running domain.

// QEMUCommandline is what <qemu:commandline> holds; Spec.QEMU nil keeps the definition's
// (resources that do not manage it), an empty one removes it.
type QEMUCommandline struct {
	Args []string
	Env  map[string]string
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var qemuCommandlineFamily = family{
	name: "qemu",
	validate: func(s *Spec) error {
		if s.QEMU == nil {
			return nil
		}
		for i, a := range s.QEMU.Args {
			if a == "" {
				return fmt.Errorf("qemu.args[%d] is empty; remove it", i)
			}
		}
		for k := range s.QEMU.Env {
			if !envName.MatchString(k) {
				return fmt.Errorf("qemu.env: %q is not an environment variable name (letters, digits and _, not starting with a digit)", k)
			}
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		if s.QEMU == nil {
			return nil
		}
		if len(s.QEMU.Args) == 0 && len(s.QEMU.Env) == 0 {
			d.QEMUCommandline = nil
			return nil
		}
		c := &libvirtxml.DomainQEMUCommandline{}
		for _, a := range s.QEMU.Args {
			c.Args = append(c.Args, libvirtxml.DomainQEMUCommandlineArg{Value: a})
		}
		for _, k := range slices.Sorted(maps.Keys(s.QEMU.Env)) {
			c.Envs = append(c.Envs, libvirtxml.DomainQEMUCommandlineEnv{Name: k, Value: s.QEMU.Env[k]})
		}
		d.QEMUCommandline = c
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		c := d.QEMUCommandline
		if c == nil || (len(c.Args) == 0 && len(c.Envs) == 0) {
			return
		}
		q := &QEMUCommandline{}
		for _, a := range c.Args {
			q.Args = append(q.Args, a.Value)
		}
		for _, e := range c.Envs {
			if q.Env == nil {
				q.Env = map[string]string{}
			}
			q.Env[e.Name] = e.Value
		}
		p.Spec.QEMU = q
	},
	// a is what the domain has, b what is wanted; b nil keeps a.
	same: func(a, b Spec) bool {
		if b.QEMU == nil {
			return true
		}
		var x QEMUCommandline
		if a.QEMU != nil {
			x = *a.QEMU
		}
		return slices.Equal(x.Args, b.QEMU.Args) && maps.Equal(x.Env, b.QEMU.Env)
	},
}
