package domainxml

import "libvirt.org/go/libvirtxml"

// The record: what libvirt_domain keeps in the domain's <metadata> (MetadataNS,
// "domain"): the user's own references for disks, the cloud-init seed and the Ignition
// config, so Read (and import of a domain this provider made) gives back exactly what
// the configuration says, not only the paths libvirt knows.

type record struct {
	Disks     []recordDisk     `xml:"disk"`
	CloudInit *recordCloudInit `xml:"cloudinit"`
	Ignition  *recordIgnition  `xml:"ignition"`
	// VirtiofsMemory: the memory backing is the one Build added for virtiofs shares.
	VirtiofsMemory *struct{} `xml:"virtiofs-memory"`
	// DeviceXML: the device_xml fragments as the user wrote them (device_xml.go).
	DeviceXML []string `xml:"device-xml"`
	// ExtraXML: the extra_xml fragments as the user wrote them (extra_xml.go).
	ExtraXML []string `xml:"extra-xml"`
	// Tags are libvirt_domain's tags (describe.go).
	Tags []recordTag `xml:"tag"`
}

type recordDisk struct {
	Target string `xml:"target,attr"`
	Volume string `xml:"volume,attr"`
	Path   string `xml:"path,attr"`
}

type recordCloudInit struct {
	Target string `xml:"target,attr"`
	ID     string `xml:"id,attr"`
	Path   string `xml:"path,attr"`
}

type recordIgnition struct {
	ID   string `xml:"id,attr"`
	Path string `xml:"path,attr"`
}

// recordFamily writes the record last, once the disks have their targets.
var recordFamily = family{
	name:     "record",
	validate: func(*Spec) error { return nil },
	build: func(d *libvirtxml.Domain, s *Spec, _ *libvirtxml.Domain) error {
		return writeRecord(d, *s)
	},
	parse:  func(*libvirtxml.Domain, *Parsed, *record) {}, // read first, by FromDomain
	same:   func(Spec, Spec) bool { return true },         // references change no device
	derive: deriveRecord,
}

// deriveRecord writes a clone's record: its own disks (the volume keys) and seed (after
// the disk family chose its target), no Ignition config (ignition.go drops it); what
// else the source's record says (tags, device_xml fragments, the memory backing added
// for virtiofs) describes the clone's copy as well and stays.
func deriveRecord(d *libvirtxml.Domain, s *CloneSpec) error {
	rec := readRecord(d)
	rec.Disks, rec.CloudInit, rec.Ignition = nil, nil, nil
	for _, cd := range s.Disks {
		if cd.Key != "" {
			rec.Disks = append(rec.Disks, recordDisk{Target: cd.Target, Volume: cd.Key, Path: cd.Path})
		}
	}
	if ci := s.CloudInit; ci != nil {
		rec.CloudInit = &recordCloudInit{Target: ci.Target, ID: ci.ID, Path: ci.Path}
	}
	return setRecord(d, rec)
}

// readRecord is the record of d; an empty one when there is none or it does not parse
// (the definition alone then says what it can).
func readRecord(d *libvirtxml.Domain) *record {
	rec := &record{}
	if ok, err := GetMetadata(d, MetadataNS, "domain", rec); !ok || err != nil {
		return &record{}
	}
	return rec
}

// writeRecord writes the record for s (none when s references nothing), keeping other
// applications' elements.
func writeRecord(d *libvirtxml.Domain, s Spec) error {
	rec := record{Tags: recordTags(s, readRecord(d).Tags)}
	for _, dk := range s.Disks {
		if dk.VolumeID != "" {
			rec.Disks = append(rec.Disks, recordDisk{Target: dk.Target, Volume: dk.VolumeID, Path: dk.Path})
		}
	}
	if ci := s.CloudInit; ci != nil {
		rec.CloudInit = &recordCloudInit{Target: ci.Target, ID: ci.ID, Path: ci.Path}
	}
	if g := s.Ignition; g != nil {
		rec.Ignition = &recordIgnition{ID: g.ID, Path: g.Path}
	}
	if s.virtiofsMemory {
		rec.VirtiofsMemory = &struct{}{}
	}
	rec.DeviceXML, rec.ExtraXML = s.DeviceXML, s.ExtraXML
	return setRecord(d, &rec)
}

// setRecord writes rec into d's metadata, or takes the record away when it is empty.
func setRecord(d *libvirtxml.Domain, rec *record) error {
	if len(rec.Disks) == 0 && rec.CloudInit == nil && rec.Ignition == nil && rec.VirtiofsMemory == nil && len(rec.Tags) == 0 &&
		len(rec.DeviceXML) == 0 && len(rec.ExtraXML) == 0 {
		return SetMetadata(d, MetadataNS, "domain", nil)
	}
	return SetMetadata(d, MetadataNS, "domain", rec)
}
