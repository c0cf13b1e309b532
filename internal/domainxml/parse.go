package domainxml

import (
	"fmt"
	"slices"

	"libvirt.org/go/libvirtxml"
)

// Parsed is what Parse reads from a domain's XML: the user-controlled Spec, and runtime
// facts of a live definition.
type Parsed struct {
	Spec Spec
	// ID is the running domain's id (nil when not running or for an inactive definition).
	ID *int
	// GraphicsPort is the live VNC/SPICE port (0 when unknown, e.g. not running).
	GraphicsPort int
	// AgentConnected says the guest agent channel is connected (live XML only).
	AgentConnected bool
	// NVRAM is the path of the domain's UEFI variable store, when libvirt reports it.
	NVRAM string
	// Escaped are device_xml fragments for the devices no family types and no fragment
	// of the record holds (device_xml_adopt.go): what an import writes into device_xml.
	Escaped []string
	// adopting: read for an import (ParseForImport, adopt_exact.go).
	adopting bool
	// fragments: device_xml fragments of the prior state (ParseKnowing): the devices they
	// claim are device_xml's, not a family's.
	fragments []string
}

// claims are the device_xml fragments that claim devices from the families: the
// record's (what the last apply wrote) and the prior state's.
func (p *Parsed) claims(rec *record) []string {
	if len(p.fragments) == 0 {
		return rec.DeviceXML
	}
	return append(slices.Clip(rec.DeviceXML), p.fragments...)
}

// Parse reads a domain definition.
func Parse(text string) (*Parsed, error) {
	d, err := UnmarshalDomain(text)
	if err != nil {
		return nil, fmt.Errorf("parse domain XML: %w", err)
	}
	return FromDomain(d)
}

// ParseLive reads what a refresh wants from a running domain's live XML and nothing
// else: the console (graphics family) and the guest agent's state (agent family). The
// persistent definition is what Parse reads; running every family over the live XML as
// well would parse the domain twice for two values.
func ParseLive(text string) (*Parsed, error) {
	var d libvirtxml.Domain
	if err := d.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("parse live domain XML: %w", err)
	}
	p := &Parsed{ID: d.ID}
	graphicsFamily.parse(&d, p, nil)
	agentFamily.parse(&d, p, nil)
	return p, nil
}

// FromDomain reads a parsed definition, family by family. Only what the user controls
// goes into Spec; values libvirt chooses are read as they are (MACs, machine) and
// compared loosely by the families' same.
func FromDomain(d *libvirtxml.Domain) (*Parsed, error) { return fromDomain(d, false) }

func fromDomain(d *libvirtxml.Domain, adopting bool) (*Parsed, error) {
	p := &Parsed{ID: d.ID, adopting: adopting}
	p.read(d)
	return p, nil
}

// read runs every family's parse over d into p.
func (p *Parsed) read(d *libvirtxml.Domain) {
	p.Spec.Name, p.Spec.UUID, p.Spec.Type = d.Name, d.UUID, d.Type
	rec := readRecord(d)
	for _, f := range families {
		f.parse(d, p, rec)
	}
}
