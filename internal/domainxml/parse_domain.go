package domainxml

import (
	"fmt"

	"libvirt.org/go/libvirtxml"
)

// ParseDomain reads a domain definition as libvirt returns it.
func ParseDomain(text string) (*libvirtxml.Domain, error) {
	d, err := UnmarshalDomain(text)
	if err != nil {
		return nil, fmt.Errorf("parse domain XML: %w", err)
	}
	return d, nil
}
