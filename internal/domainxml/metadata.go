package domainxml

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// The provider's records in a domain's <metadata>. libvirt keeps one element per XML
// namespace there for each application; this provider keeps up to three, each written
// and read by SetMetadata and GetMetadata only (encoding/xml does every escape):
//   - MetadataNS "domain": libvirt_domain's own references for disks, the cloud-init seed
//     and the Ignition config, so that Read and import give back what the configuration
//     says;
//   - CloneMetadataNS "clone": libvirt_clone's record of a clone (source, mode, disks it
//     owns);
//   - MachineMetadataNS "machine": libvirt_cluster_machine's inputs.
//
// Elements are written in the default-namespace form <domain xmlns="...">. Older
// versions wrote a prefixed form (<kvmforge:domain xmlns:kvmforge="...">): both read
// the same, and writing one replaces the other.
const (
	MetadataNS        = "https://github.com/kvmforge/terraform-provider-libvirt/domain/1"
	CloneMetadataNS   = "https://github.com/kvmforge/terraform-provider-libvirt/clone/1"
	MachineMetadataNS = "https://github.com/kvmforge/terraform-provider-libvirt/cluster-machine/1"
)

// SetMetadata puts v, encoded by encoding/xml as element local of namespace ns, into d's
// <metadata> in place of any element of that name; v nil removes it. Other applications'
// elements are kept as they are.
func SetMetadata(d *libvirtxml.Domain, ns, local string, v any) error {
	inner := ""
	if d.Metadata != nil {
		inner = d.Metadata.XML
	}
	rest, err := withoutElement(inner, ns, local)
	if err != nil {
		return err
	}
	if v != nil {
		var b strings.Builder
		enc := xml.NewEncoder(&b)
		if err := enc.EncodeElement(v, xml.StartElement{Name: xml.Name{Space: ns, Local: local}}); err != nil {
			return fmt.Errorf("encode %s metadata: %w", local, err)
		}
		if err := enc.Flush(); err != nil {
			return err
		}
		rest += b.String()
	}
	if strings.TrimSpace(rest) == "" {
		d.Metadata = nil
	} else {
		d.Metadata = &libvirtxml.DomainMetadata{XML: rest}
	}
	return nil
}

// GetMetadata decodes element local of namespace ns from d's <metadata> into v. It
// reports whether the element is there; content that does not parse is an error.
func GetMetadata(d *libvirtxml.Domain, ns, local string, v any) (bool, error) {
	if d.Metadata == nil {
		return false, nil
	}
	dec := tokenDecoder(d.Metadata.XML)
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("parse domain metadata: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 && t.Name.Space == ns && t.Name.Local == local {
				if err := dec.DecodeElement(v, &t); err != nil {
					return false, fmt.Errorf("parse the %s element of domain metadata: %w", local, err)
				}
				return true, nil
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
}

// withoutElement is metadata content without its top-level elements ns:local, every
// other element kept byte for byte (text between elements is dropped).
func withoutElement(inner, ns, local string) (string, error) {
	dec := tokenDecoder(inner)
	var rest strings.Builder
	depth := 0
	start := int64(0)
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return inner, fmt.Errorf("parse domain metadata: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				start = before
				if t.Name.Space == ns && t.Name.Local == local {
					if err := dec.Skip(); err != nil {
						return inner, fmt.Errorf("parse domain metadata: %w", err)
					}
					continue
				}
			}
			depth++
		case xml.EndElement:
			depth--
			if depth == 0 {
				rest.WriteString(inner[start:dec.InputOffset()])
			}
		}
	}
	return rest.String(), nil
}
