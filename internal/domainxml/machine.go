package domainxml

import "libvirt.org/go/libvirtxml"

// MachineMeta is what libvirt_cluster_machine records in its domain's <metadata>: the
// machine's inputs that the host does not otherwise keep, so that import gives back what
// the configuration says.
type MachineMeta struct {
	Namespace  string `xml:"namespace,attr"`
	Name       string `xml:"name,attr"`
	Network    string `xml:"network,attr"`
	BasePool   string `xml:"base-pool,attr"`
	DomainPool string `xml:"domain-pool,attr"`
	Image      string `xml:"image,attr"`
}

// SetMachineMeta writes the machine's record into d's metadata.
func SetMachineMeta(d *libvirtxml.Domain, m MachineMeta) error {
	return SetMetadata(d, MachineMetadataNS, "machine", m)
}

// ParseMachineMeta reads the machine's record; ok is false for a domain
// libvirt_cluster_machine did not make (or whose record does not parse).
func ParseMachineMeta(d *libvirtxml.Domain) (*MachineMeta, bool) {
	var m MachineMeta
	if ok, err := GetMetadata(d, MachineMetadataNS, "machine", &m); !ok || err != nil {
		return nil, false
	}
	return &m, true
}
