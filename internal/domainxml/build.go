package domainxml

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// Build returns the domain definition for s. With base nil it is a fresh definition with
// the defaults users expect; otherwise s is merged onto a copy of base (the domain's
// current definition): what s controls is replaced, the rest is kept, and a device that
// stays the same device (a disk on the same target, a NIC with the same MAC) keeps its
// address and any settings the user does not manage. Every family writes its part.
func Build(base *libvirtxml.Domain, s Spec) (*libvirtxml.Domain, error) {
	s = withDiskDefaults(s)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var d *libvirtxml.Domain
	if base == nil {
		d = fresh(&s)
	} else {
		var err error
		if d, err = clone(base); err != nil {
			return nil, err
		}
	}
	if d.Devices == nil {
		d.Devices = &libvirtxml.DomainDeviceList{}
	}
	d.ID = nil
	d.Type, d.Name = s.Type, s.Name
	if s.UUID != "" {
		d.UUID = s.UUID
	}
	for _, f := range families {
		if err := f.build(d, &s, base); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return d, nil
}

// Marshal is Build's result as XML text.
func Marshal(d *libvirtxml.Domain) (string, error) { return d.Marshal() }

// fresh is what a new definition starts from: the arch's features (x86: ACPI, the
// power button for graceful shutdowns, and APIC; arch.go) and CPU, and a pty serial console.
func fresh(s *Spec) *libvirtxml.Domain {
	port0 := uint(0)
	return &libvirtxml.Domain{
		Features: defaultFeatures(s),
		CPU:      DefaultCPU(s.Arch, s.Type),
		Devices: &libvirtxml.DomainDeviceList{
			Serials: []libvirtxml.DomainSerial{{
				Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
				Target: &libvirtxml.DomainSerialTarget{Port: &port0},
			}},
			Consoles: []libvirtxml.DomainConsole{{
				Source: &libvirtxml.DomainChardevSource{Pty: &libvirtxml.DomainChardevSourcePty{}},
				Target: &libvirtxml.DomainConsoleTarget{Type: "serial", Port: &port0},
			}},
		},
	}
}

// clone is a deep copy of a definition.
func clone(d *libvirtxml.Domain) (*libvirtxml.Domain, error) {
	text, err := d.Marshal()
	if err != nil {
		return nil, fmt.Errorf("copy domain definition: %w", err)
	}
	var c libvirtxml.Domain
	if err := c.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("copy domain definition: %w", err)
	}
	return &c, nil
}

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }
