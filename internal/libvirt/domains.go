package libvirt

import (
	"context"
	"sort"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// DomainSummary is one domain of a host listing.
type DomainSummary struct {
	Name       string
	UUID       string
	State      string
	Persistent bool
	Autostart  bool
}

// ListDomains lists every domain on the host (running and defined), sorted by name, in
// one round of calls per domain for state and autostart.
func (c *Client) ListDomains(ctx context.Context) ([]DomainSummary, error) {
	var out []DomainSummary
	err := c.Read(ctx, "list domains", func(l *golibvirt.Libvirt) error {
		out = nil
		doms, _, err := l.ConnectListAllDomains(1, 0)
		if err != nil {
			return err
		}
		for _, d := range doms {
			state, _, err := l.DomainGetState(d, 0)
			if HasCode(classify("", "", err), golibvirt.ErrNoDomain) {
				continue // undefined while we listed
			}
			if err != nil {
				return err
			}
			persistent, err := l.DomainIsPersistent(d)
			if err != nil && !HasCode(classify("", "", err), golibvirt.ErrNoDomain) {
				return err
			}
			autostart, err := l.DomainGetAutostart(d)
			if err != nil && !HasCode(classify("", "", err), golibvirt.ErrNoDomain) {
				return err
			}
			out = append(out, DomainSummary{
				Name: d.Name, UUID: UUIDString(d), State: DomainStateName(state),
				Persistent: persistent == 1, Autostart: autostart == 1,
			})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}
