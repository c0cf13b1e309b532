package domainxml

import (
	"errors"
	"fmt"
	"path/filepath"

	"libvirt.org/go/libvirtxml"
)

// Firmware chosen by hand (os.loader, os.nvram): a <loader> path (and its variable store)
// instead of libvirt's firmware auto-selection. A pflash loader is UEFI firmware (firmware
// = "uefi" says so), a rom one BIOS. Only a definition without auto-selection (no <os
// firmware>) has a loader that is the user's: the one libvirt picks for firmware = "uefi"
// is its own and never read. A change restarts a running domain.

// Loader types (<loader type>).
const (
	LoaderROM    = "rom"
	LoaderPflash = "pflash"
)

// Loader is a hand-chosen <loader>; nil keeps what the definition has, one with an empty
// Path takes a hand-chosen loader (and its nvram) away.
type Loader struct {
	Path string
	Type string // rom (libvirt's default, also for "") or pflash
	// Readonly and Secure: nil leaves them to libvirt.
	Readonly, Secure *bool
}

// NVRam is a hand-chosen loader's variable store; nil or empty fields leave them to
// libvirt (a path of its own under its nvram directory; the template it finds for the
// loader).
type NVRam struct {
	Path, Template string
}

// LoaderTypes are the values os.loader.type takes.
var LoaderTypes = []string{LoaderROM, LoaderPflash}

var loaderFamily = family{
	name:     "loader",
	validate: ValidateLoader,
	// After the os family, which wrote the auto-selection this replaces.
	build: func(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error {
		l := s.Loader
		switch {
		case l == nil:
		case l.Path != "":
			d.OS.Firmware, d.OS.FirmwareInfo = "", nil
			d.OS.Loader = &libvirtxml.DomainLoader{Path: l.Path, Type: l.Type}
			if l.Readonly != nil {
				d.OS.Loader.Readonly = yesNo(*l.Readonly)
			}
			if l.Secure != nil {
				d.OS.Loader.Secure = yesNo(*l.Secure)
			}
			d.OS.NVRam = nil // libvirt's, unless set
			if n := s.NVRam; n != nil && (n.Path != "" || n.Template != "") {
				d.OS.NVRam = &libvirtxml.DomainNVRam{NVRam: n.Path, Template: n.Template}
			}
		case base != nil && handLoader(base.OS) != nil && d.OS.Firmware == "":
			d.OS.Loader, d.OS.NVRam = nil, nil // back to the default BIOS
		case base != nil && handLoader(base.OS) != nil:
			d.OS.Loader, d.OS.NVRam = nil, nil // auto-selection picks its own
		}
		return nil
	},
	parse: func(d *libvirtxml.Domain, p *Parsed, _ *record) {
		p.Spec.Loader = handLoader(d.OS)
		if p.Spec.Loader != nil && d.OS.NVRam != nil {
			n := &NVRam{Path: d.OS.NVRam.NVRam, Template: d.OS.NVRam.Template}
			if n.Path == "" && d.OS.NVRam.Source != nil && d.OS.NVRam.Source.File != nil {
				n.Path = d.OS.NVRam.Source.File.File
			}
			p.Spec.NVRam = n
		}
	},
	// What the new spec leaves empty (nil flags, the nvram) is libvirt's and matches anything.
	same: func(a, b Spec) bool {
		if b.Loader == nil {
			return true
		}
		x, y := Loader{}, *b.Loader
		if a.Loader != nil {
			x = *a.Loader
		}
		if y.Path == "" || x.Path == "" {
			return x.Path == y.Path
		}
		flag := func(have, want *bool) bool { return want == nil || have != nil && *have == *want }
		if x.Path != y.Path || loaderType(x.Type) != loaderType(y.Type) || !flag(x.Readonly, y.Readonly) || !flag(x.Secure, y.Secure) {
			return false
		}
		n, m := NVRam{}, NVRam{}
		if a.NVRam != nil {
			n = *a.NVRam
		}
		if b.NVRam != nil {
			m = *b.NVRam
		}
		return (m.Path == "" || m.Path == n.Path) && (m.Template == "" || m.Template == n.Template)
	},
}

// ValidateLoader checks a hand-chosen loader against the rest of the spec: absolute
// paths, a type libvirt knows that agrees with firmware, no Secure Boot request (that
// is auto-selection's), and no nvram without a loader.
func ValidateLoader(s *Spec) error {
	l := s.Loader
	if l == nil || l.Path == "" {
		if s.NVRam != nil && (s.NVRam.Path != "" || s.NVRam.Template != "") {
			return errors.New("os.nvram is a hand-chosen loader's variable store: set os.loader too, or remove os.nvram " +
				"(firmware = \"uefi\" gives the domain a varstore of its own)")
		}
		return nil
	}
	for _, f := range []struct{ name, v string }{{"os.loader.path", l.Path}, {"os.nvram.path", nvramField(s, true)}, {"os.nvram.template", nvramField(s, false)}} {
		if f.v != "" && !filepath.IsAbs(f.v) {
			return fmt.Errorf("%s must be an absolute path on the host, got: %s", f.name, f.v)
		}
	}
	switch t := loaderType(l.Type); {
	case t != LoaderROM && t != LoaderPflash:
		return fmt.Errorf("os.loader.type = %q: must be %q or %q", l.Type, LoaderROM, LoaderPflash)
	case t == LoaderPflash && normFirmware(s.Firmware) != FirmwareUEFI:
		return errors.New("os.loader.type = \"pflash\" is UEFI firmware: set firmware = \"uefi\" (firmware says what the loader is)")
	case t == LoaderROM && normFirmware(s.Firmware) != FirmwareBIOS:
		return errors.New("firmware = \"uefi\" with a hand-chosen os.loader needs its type = \"pflash\" (a rom loader is BIOS firmware)")
	}
	if s.SecureBoot != nil && s.SecureBoot.Enabled {
		return errors.New("os.secure_boot asks libvirt's firmware auto-selection for a secure build; with a hand-chosen os.loader " +
			"set os.loader.secure = true (and features.smm = true) instead")
	}
	return nil
}

func nvramField(s *Spec, path bool) string {
	switch {
	case s.NVRam == nil:
		return ""
	case path:
		return s.NVRam.Path
	}
	return s.NVRam.Template
}

func loaderType(t string) string {
	if t == "" {
		return LoaderROM
	}
	return t
}

// handLoader is the definition's loader when the user chose it, else nil: not with
// auto-selection (<os firmware>, or the <firmware> features a live definition keeps of it).
func handLoader(os *libvirtxml.DomainOS) *Loader {
	if os == nil || os.Firmware != "" || os.FirmwareInfo != nil || os.Loader == nil || os.Loader.Path == "" {
		return nil
	}
	l := &Loader{Path: os.Loader.Path, Type: os.Loader.Type}
	yes := func(v string) *bool {
		if v == "" {
			return nil
		}
		b := v == xmlYes
		return &b
	}
	l.Readonly, l.Secure = yes(os.Loader.Readonly), yes(os.Loader.Secure)
	return l
}
