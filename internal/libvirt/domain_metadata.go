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
