package libvirt

import (
	"context"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// SetMemoryStatsPeriod sets how often (seconds; 0 stops it) the balloon driver of domain
// id collects the guest's memory statistics, live and in its persistent definition.
func (c *Client) SetMemoryStatsPeriod(ctx context.Context, id string, sec uint) error {
	return c.onDomain(ctx, fmt.Sprintf("set the memory statistics period (%d s) of", sec), id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainSetMemoryStatsPeriod(d, int32(sec), golibvirt.DomainMemLive|golibvirt.DomainMemConfig)
	})
}
