package libvirt

import (
	"context"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// SetDomainMetadata sets a domain's title or description (what), on the running domain
// and in its definition at once; an empty value removes it. No restart needed.
func (c *Client) SetDomainMetadata(ctx context.Context, id, what, value string) error {
	var typ golibvirt.DomainMetadataType
	switch what {
	case "title":
		typ = golibvirt.DomainMetadataTitle
	case "description":
		typ = golibvirt.DomainMetadataDescription
	default:
		return fmt.Errorf("domain metadata %q is not a title or description", what)
	}
	var v golibvirt.OptString
	if value != "" {
		v = golibvirt.OptString{value}
	}
	return c.onDomain(ctx, "set the "+what+" of", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainSetMetadata(d, int32(typ), v, nil, nil, golibvirt.DomainAffectLive|golibvirt.DomainAffectConfig)
	})
}

// DomainMetadata is, by domain UUID, the <metadata> element of namespace ns of every
// persistent domain's definition that has one (libvirt_domains lists the tags in it).
func (c *Client) DomainMetadata(ctx context.Context, ns string) (map[string]string, error) {
	out := map[string]string{}
	err := c.Read(ctx, "read the metadata of the domains", func(l *golibvirt.Libvirt) error {
		clear(out)
		doms, _, err := l.ConnectListAllDomains(1, golibvirt.ConnectListDomainsPersistent)
		if err != nil {
			return err
		}
		for _, d := range doms {
			text, err := l.DomainGetMetadata(d, int32(golibvirt.DomainMetadataElement), golibvirt.OptString{ns}, golibvirt.DomainAffectConfig)
			switch {
			case err == nil:
				out[UUIDString(d)] = text
			case HasCode(classify("", "", err), golibvirt.ErrNoDomainMetadata), HasCode(classify("", "", err), golibvirt.ErrNoDomain):
			default:
				return err
			}
		}
		return nil
	})
	return out, err
}
