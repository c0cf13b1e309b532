package domainxml

import "libvirt.org/go/libvirtxml"

// I/O threads: the <iothreads> count, the threads a disk's iothread (disk_tuning.go)
// names by number (1 to the count, unless the definition numbers them itself with
// <iothreadids>). A change restarts a running domain: libvirt can add and delete I/O
// threads live, but a disk bound to one cannot move without a restart either.

var ioThreadsFamily = family{
	name:     "iothreads",
	validate: func(*Spec) error { return nil },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		if s.IOThreads == nil || *s.IOThreads == d.IOThreads {
			return nil
		}
		// Numbered threads describe the old count; libvirt numbers the new ones 1..n.
		d.IOThreads, d.IOThreadIDs = *s.IOThreads, nil
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		n := d.IOThreads
		if d.IOThreadIDs != nil {
			n = max(n, uint(len(d.IOThreadIDs.IOThreads)))
		}
		if n > 0 { // none reads as nil, which the provider shows as 0
			p.Spec.IOThreads = &n
		}
	},
	// a is what the domain has, b what is wanted; b nil keeps a.
	same: func(a, b Spec) bool { return b.IOThreads == nil || a.IOThreadCount() == b.IOThreadCount() },
}

// IOThreadCount is the <iothreads> count of s (0: none, or s keeps the domain's).
func (s Spec) IOThreadCount() uint {
	if s.IOThreads == nil {
		return 0
	}
	return *s.IOThreads
}
