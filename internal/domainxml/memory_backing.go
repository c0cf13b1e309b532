package domainxml

import (
	"fmt"

	"libvirt.org/go/libvirtxml"
)

// Memory backing: <memoryBacking>, how the guest's RAM is provided (memory_backing):
// huge pages and their size, the source (anonymous, memfd, file), shared or private
// access, locked, nosharepages (no KSM) and discard. This family is its one writer.
//
// virtiofsd shares the guest's RAM, so a domain with a virtiofs share needs shared
// memory: without memory_backing, Build gives it the smallest backing that works (memfd,
// shared), notes in the record that it did, and takes it away again with the last
// virtiofs share; that backing beside a virtiofs share reads back as no memory_backing
// (also on a domain virsh defined), so existing configurations plan as before. With memory_backing,
// a source or access it leaves out is memfd and shared while a virtiofs share is there;
// private access with a virtiofs share is an error.

// Memory backing sources and access modes.
const (
	MemorySourceAnonymous = "anonymous"
	MemorySourceMemfd     = "memfd"
	MemorySourceFile      = "file"
	MemoryAccessShared    = "shared"
	MemoryAccessPrivate   = "private"
)

// MemoryBacking is the user's <memoryBacking>.
type MemoryBacking struct {
	HugePages bool
	// HugePageSizeKiB is the page size (0: the host's default huge page size).
	HugePageSizeKiB uint64
	Source          string // anonymous, memfd, file; empty: libvirt's (anonymous), or memfd with virtiofs
	Access          string // shared, private; empty: libvirt's (private), or shared with virtiofs
	Locked          bool
	NoSharePages    bool
	Discard         bool
}

var memoryBackingFamily = family{
	name:     "memory_backing",
	validate: validateMemoryBacking,
	build: func(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
		s.virtiofsMemory = false
		if s.MemoryBacking == nil {
			s.virtiofsMemory = buildVirtiofsMemory(d, s.Filesystems, base)
			return nil
		}
		old := d.MemoryBacking
		d.MemoryBacking = nil
		if m := effectiveBacking(*s); m != nil {
			d.MemoryBacking = memoryBackingXML(old, m)
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		m := d.MemoryBacking
		// None, or exactly what a virtiofs share implies (the filesystems are read
		// already): memory_backing unset says the same.
		implied := isVirtiofsMemory(m) && (virtiofsShare(p.Spec.Filesystems) != "" || (rec != nil && rec.VirtiofsMemory != nil))
		if m == nil || implied || untypedElement(d, "memoryBacking") { // untyped: extra_xml holds it whole
			return
		}
		if m == nil || implied {
			return
		}
		mb := &MemoryBacking{Locked: m.MemoryLocked != nil, NoSharePages: m.MemoryNosharepages != nil, Discard: m.MemoryDiscard != nil}
		if h := m.MemoryHugePages; h != nil {
			mb.HugePages = true
			if len(h.Hugepages) > 0 {
				mb.HugePageSizeKiB = toKiB(h.Hugepages[0].Size, h.Hugepages[0].Unit)
			}
		}
		if m.MemorySource != nil {
			mb.Source = m.MemorySource.Type
		}
		if m.MemoryAccess != nil {
			mb.Access = m.MemoryAccess.Mode
		}
		p.Spec.MemoryBacking = mb
	},
	// What the guest's memory is made of (virtiofs' defaults filled in).
	same: func(a, b Spec) bool {
		x, y := effectiveBacking(a), effectiveBacking(b)
		return (x == nil) == (y == nil) && (x == nil || *x == *y)
	},
	// Without memory_backing on either side the change is only the memory virtiofs shares
	// imply: the filesystem family says how that goes (its live removal of the last share
	// rewrites the definition without it). Any other change restarts.
	live: func(old, next Spec, _ *libvirtxml.Domain) ([]LiveOp, string) {
		if old.MemoryBacking == nil && next.MemoryBacking == nil {
			return nil, ""
		}
		return nil, "memory_backing changes"
	},
}

func validateMemoryBacking(s *Spec) error {
	share := virtiofsShare(s.Filesystems)
	for _, c := range s.NUMACells {
		if share != "" && c.MemAccess == MemoryAccessPrivate {
			return fmt.Errorf("cpu.numa_cell %d: memory_access = private, but the virtiofs share %q needs the guest's memory shared: "+
				"set memory_access = shared or leave it out, or use driver 9p", c.ID, share)
		}
	}
	m := s.MemoryBacking
	if m == nil {
		return nil
	}
	switch {
	case m.Source != "" && m.Source != MemorySourceAnonymous && m.Source != MemorySourceMemfd && m.Source != MemorySourceFile:
		return fmt.Errorf("memory_backing: source %q is not anonymous, memfd or file", m.Source)
	case m.Access != "" && m.Access != MemoryAccessShared && m.Access != MemoryAccessPrivate:
		return fmt.Errorf("memory_backing: access %q is neither shared nor private", m.Access)
	case m.HugePageSizeKiB != 0 && !m.HugePages:
		return fmt.Errorf("memory_backing: hugepage_size_kib = %d needs hugepages = true", m.HugePageSizeKiB)
	case m.HugePageSizeKiB != 0 && (m.HugePageSizeKiB < 4 || m.HugePageSizeKiB&(m.HugePageSizeKiB-1) != 0):
		return fmt.Errorf("memory_backing: hugepage_size_kib = %d is not a page size (a power of two such as 2048 or 1048576)", m.HugePageSizeKiB)
	case m.HugePages && m.Source == MemorySourceAnonymous:
		return fmt.Errorf("memory_backing: hugepages cannot come from source = anonymous; use memfd or file, or leave source out")
	case share != "" && m.Access == MemoryAccessPrivate:
		return fmt.Errorf("memory_backing: access = private, but the virtiofs share %q needs the guest's memory shared: "+
			"set access = shared or leave it out, or use driver 9p for the share", share)
	case share != "" && m.Source == MemorySourceAnonymous && m.Access == "":
		return fmt.Errorf("memory_backing: source = anonymous with the virtiofs share %q needs access = shared", share)
	}
	return nil
}

// virtiofsShare is the tag of the first virtiofs share of fss ("" when none).
func virtiofsShare(fss []Filesystem) string {
	for _, f := range fss {
		if driverOf(f) == FSVirtiofs {
			return f.Target
		}
	}
	return ""
}

// effectiveBacking is the backing Build writes for s (nil: none).
func effectiveBacking(s Spec) *MemoryBacking {
	virtiofs := virtiofsShare(s.Filesystems) != ""
	if s.MemoryBacking == nil && !virtiofs {
		return nil
	}
	var m MemoryBacking
	if s.MemoryBacking != nil {
		m = *s.MemoryBacking
	}
	if virtiofs {
		m.Source = maxOrString(m.Source, MemorySourceMemfd)
		m.Access = maxOrString(m.Access, MemoryAccessShared)
	}
	if m == (MemoryBacking{}) {
		return nil // an empty memory_backing: libvirt drops the empty element
	}
	return &m
}

// memoryBackingXML is m as XML, keeping the allocation settings of old (not managed here).
func memoryBackingXML(old *libvirtxml.DomainMemoryBacking, m *MemoryBacking) *libvirtxml.DomainMemoryBacking {
	x := &libvirtxml.DomainMemoryBacking{}
	if old != nil {
		x.MemoryAllocation = old.MemoryAllocation
	}
	if m.HugePages {
		x.MemoryHugePages = &libvirtxml.DomainMemoryHugepages{}
		if m.HugePageSizeKiB != 0 {
			x.MemoryHugePages.Hugepages = []libvirtxml.DomainMemoryHugepage{{Size: uint(m.HugePageSizeKiB), Unit: "KiB"}}
		}
	}
	if m.NoSharePages {
		x.MemoryNosharepages = &libvirtxml.DomainMemoryNosharepages{}
	}
	if m.Locked {
		x.MemoryLocked = &libvirtxml.DomainMemoryLocked{}
	}
	if m.Source != "" {
		x.MemorySource = &libvirtxml.DomainMemorySource{Type: m.Source}
	}
	if m.Access != "" {
		x.MemoryAccess = &libvirtxml.DomainMemoryAccess{Mode: m.Access}
	}
	if m.Discard {
		x.MemoryDiscard = &libvirtxml.DomainMemoryDiscard{}
	}
	return x
}

// buildVirtiofsMemory writes the memory virtiofs shares need when memory_backing is
// unset: memfd shared memory while a virtiofs share is there (replacing any other
// backing, which libvirt_domain does not keep without memory_backing), none otherwise.
// It reports whether the domain has that backing, for the record.
func buildVirtiofsMemory(d *libvirtxml.Domain, fss []Filesystem, _ *libvirtxml.Domain) bool {
	if virtiofsShare(fss) == "" {
		d.MemoryBacking = nil
		return false
	}
	if !isVirtiofsMemory(d.MemoryBacking) {
		d.MemoryBacking = &libvirtxml.DomainMemoryBacking{
			MemorySource: &libvirtxml.DomainMemorySource{Type: MemorySourceMemfd},
			MemoryAccess: &libvirtxml.DomainMemoryAccess{Mode: MemoryAccessShared},
		}
	}
	return true
}

// isVirtiofsMemory reports whether m is exactly the backing buildVirtiofsMemory writes.
func isVirtiofsMemory(m *libvirtxml.DomainMemoryBacking) bool {
	return m != nil && m.MemorySource != nil && m.MemorySource.Type == MemorySourceMemfd && m.MemoryAccess != nil &&
		m.MemoryAccess.Mode == MemoryAccessShared && m.MemoryHugePages == nil && m.MemoryNosharepages == nil &&
		m.MemoryLocked == nil && m.MemoryAllocation == nil && m.MemoryDiscard == nil
}
