package domainxml

import (
	"fmt"
	"path/filepath"

	"libvirt.org/go/libvirtxml"
)

// Shared folders: a host directory the guest mounts by a tag, through virtiofs
// (virtiofsd, started by libvirt) or 9p (QEMU's own server).
const (
	FSVirtiofs = "virtiofs"
	FS9p       = "9p"
	// AccessPassthrough is libvirt's default access mode (the only one virtiofs has).
	AccessPassthrough = "passthrough"
	// MaxFSTag is the longest mount tag virtiofs takes (the device's tag field is 36
	// bytes); 9p allows more, but a tag that fits both keeps a share portable.
	MaxFSTag = 36
)

// Filesystem is one shared folder.
type Filesystem struct {
	Source     string // host directory, absolute
	Target     string // mount tag in the guest
	Driver     string // virtiofs (default) or 9p
	ReadOnly   bool
	AccessMode string // 9p: passthrough (default), mapped, squash; virtiofs: none
}

// driverOf is the share's driver, virtiofs when not given.
func driverOf(f Filesystem) string {
	if f.Driver == "" {
		return FSVirtiofs
	}
	return f.Driver
}

// accessOf is the share's access mode as libvirt reports it.
func accessOf(f Filesystem) string {
	if driverOf(f) == FSVirtiofs || f.AccessMode == "" {
		return AccessPassthrough
	}
	return f.AccessMode
}

var filesystemFamily = family{
	name: "filesystem",
	validate: func(s *Spec) error {
		seen := map[string]bool{}
		for _, f := range s.Filesystems {
			switch {
			case !filepath.IsAbs(f.Source):
				return fmt.Errorf("filesystem %q: source %q must be an absolute directory on the host", f.Target, f.Source)
			case f.Target == "" || len(f.Target) > MaxFSTag:
				return fmt.Errorf("filesystem on %s: target (the mount tag) must be 1 to %d bytes", f.Source, MaxFSTag)
			case seen[f.Target]:
				return fmt.Errorf("filesystem target %q is used twice: each share needs its own mount tag", f.Target)
			case driverOf(f) != FSVirtiofs && driverOf(f) != FS9p:
				return fmt.Errorf("filesystem %q: driver %q is neither virtiofs nor 9p", f.Target, f.Driver)
			case driverOf(f) == FSVirtiofs && f.AccessMode != "" && f.AccessMode != AccessPassthrough:
				return fmt.Errorf("filesystem %q: access_mode is a 9p setting (virtiofs always passes ownership through)", f.Target)
			}
			seen[f.Target] = true
		}
		return nil
	},
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		// The shared memory virtiofs needs is memory_backing.go's to write.
		d.Devices.Filesystems = buildFilesystems(d.Devices.Filesystems, s.Filesystems, s.DeviceXML)
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, rec *record) {
		if d.Devices == nil {
			return
		}
		for _, x := range d.Devices.Filesystems {
			f, ok := parseFilesystem(x)
			switch {
			case !ok:
				continue // device_xml's (untypedFilesystems)
			case p.adopting && !exactFilesystem(x), claimedByFragment(&x, p.claims(rec)):
				continue // escaped into device_xml (adopt_exact.go)
			}
			p.Spec.Filesystems = append(p.Spec.Filesystems, f)
		}
	},
	same:    sameFilesystems,
	live:    filesystemLive, // hotplug_devices.go
	untyped: untypedFilesystems,
	inexact: inexactFilesystems,
}

// untypedFilesystems: the shares no filesystem block can say (a virtiofsd socket, ram,
// block, 9p's handle driver).
func untypedFilesystems(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Filesystems {
		if !managedFilesystem(x) {
			out.Filesystems = append(out.Filesystems, x)
		}
	}
	return &out
}

// exactFilesystem says whether a share a block types comes back the same from its block:
// 9p's write policy and multidevs, virtiofs' queue and virtiofsd's binary options make it
// inexact (adopt_exact.go). A bare <driver type='path'/> is 9p's default driver either way.
func exactFilesystem(x libvirtxml.DomainFilesystem) bool {
	f, ok := parseFilesystem(x)
	if !ok {
		return false
	}
	if x.Driver != nil && *x.Driver == (libvirtxml.DomainFilesystemDriver{Type: "path"}) {
		x.Driver = nil
	}
	built := buildFilesystems(nil, []Filesystem{f}, nil)
	return len(built) == 1 && sameDevice(&x, &built[0])
}

// inexactFilesystems: the filesystem family's inexact hook.
func inexactFilesystems(l *libvirtxml.DomainDeviceList, _ *record) *libvirtxml.DomainDeviceList {
	var out libvirtxml.DomainDeviceList
	for _, x := range l.Filesystems {
		if managedFilesystem(x) && !exactFilesystem(x) {
			out.Filesystems = append(out.Filesystems, x)
		}
	}
	return &out
}

// sameFilesystems: shares compare in order, by what the guest sees.
func sameFilesystems(a, b Spec) bool {
	if len(a.Filesystems) != len(b.Filesystems) {
		return false
	}
	for i := range a.Filesystems {
		x, y := a.Filesystems[i], b.Filesystems[i]
		if filepath.Clean(x.Source) != filepath.Clean(y.Source) || x.Target != y.Target ||
			driverOf(x) != driverOf(y) || x.ReadOnly != y.ReadOnly || accessOf(x) != accessOf(y) {
			return false
		}
	}
	return true
}

// managedFilesystem reports whether a <filesystem> is one a Filesystem describes: a host
// directory (type mount) served by virtiofs or 9p's path driver. Others (ram, block,
// 9p's handle driver) are kept as they are and never read into the Spec.
func managedFilesystem(x libvirtxml.DomainFilesystem) bool {
	if x.Source == nil || x.Source.Mount == nil || x.Source.Mount.Dir == "" || x.Target == nil {
		return false
	}
	return x.Driver == nil || x.Driver.Type == "" || x.Driver.Type == "path" || x.Driver.Type == FSVirtiofs
}

func parseFilesystem(x libvirtxml.DomainFilesystem) (Filesystem, bool) {
	if !managedFilesystem(x) {
		return Filesystem{}, false
	}
	f := Filesystem{Source: x.Source.Mount.Dir, Target: x.Target.Dir, Driver: FS9p, ReadOnly: x.ReadOnly != nil}
	if x.Driver != nil && x.Driver.Type == FSVirtiofs {
		f.Driver = FSVirtiofs
	}
	if x.AccessMode != AccessPassthrough {
		f.AccessMode = x.AccessMode // libvirt's default reads as none given
	}
	return f, true
}

// buildFilesystems is the shares of fss, after the filesystems this family does not
// manage or a device_xml fragment claims; a share whose tag was there keeps its address
// and what libvirt filled in (the virtiofsd binary, its options).
func buildFilesystems(existing []libvirtxml.DomainFilesystem, fss []Filesystem, fragments []string) []libvirtxml.DomainFilesystem {
	byTag := map[string]libvirtxml.DomainFilesystem{}
	var out []libvirtxml.DomainFilesystem
	for _, e := range existing {
		if managedFilesystem(e) && !claimedByFragment(&e, fragments) {
			byTag[e.Target.Dir] = e
		} else {
			out = append(out, e)
		}
	}
	for _, f := range fss {
		x, ok := byTag[f.Target]
		if !ok || driverOf(parseFilesystemOrZero(x)) != driverOf(f) {
			x = libvirtxml.DomainFilesystem{}
		}
		x.Source = &libvirtxml.DomainFilesystemSource{Mount: &libvirtxml.DomainFilesystemSourceMount{Dir: f.Source}}
		x.Target = &libvirtxml.DomainFilesystemTarget{Dir: f.Target}
		x.AccessMode = accessOf(f)
		x.ReadOnly = nil
		if f.ReadOnly {
			x.ReadOnly = &libvirtxml.DomainFilesystemReadOnly{}
		}
		// The driver of the same kind keeps what the schema does not type (9p's wrpolicy,
		// virtiofs' queue): a domain made elsewhere loses nothing on update (#25).
		if driverOf(f) == FSVirtiofs {
			if x.Driver == nil || x.Driver.Type != FSVirtiofs {
				x.Driver = &libvirtxml.DomainFilesystemDriver{Type: FSVirtiofs}
			}
		} else {
			// 9p: libvirt's default driver is path; none is written unless the share had one.
			if x.Driver != nil && x.Driver.Type != "path" && x.Driver.Type != "" {
				x.Driver = nil
			}
			x.Binary = nil
		}
		x.Alias = nil
		out = append(out, x)
	}
	return out
}

func parseFilesystemOrZero(x libvirtxml.DomainFilesystem) Filesystem {
	f, _ := parseFilesystem(x)
	return f
}
