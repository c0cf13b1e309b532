package libvirt

import (
	"context"
	"errors"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Readiness reasons of a cluster's infrastructure, as Cluster API conditions spell them.
const (
	ReasonInfrastructureMissing  = "InfrastructureMissing"
	ReasonInfrastructureInactive = "InfrastructureInactive"
)

// Readiness says whether the objects a cluster's machines need are there and running.
type Readiness struct {
	Ready   bool
	Reason  string // "" when ready
	Message string // names the missing or inactive objects and what to do
}

// CheckInfrastructure looks up a network and storage pools: all must exist and be active.
// Missing objects win over inactive ones in the reason; the message names every problem.
// A transport error is returned as an error, never as a reason.
func (c *Client) CheckInfrastructure(ctx context.Context, network string, pools ...string) (*Readiness, error) {
	var missing, inactive []string
	err := c.Read(ctx, "check cluster infrastructure", func(l *golibvirt.Libvirt) error {
		missing, inactive = nil, nil
		n, err := l.NetworkLookupByName(network)
		switch {
		case isNotFound(err):
			missing = append(missing, fmt.Sprintf("network %q does not exist", network))
		case err != nil:
			return err
		default:
			active, err := l.NetworkIsActive(n)
			if err != nil {
				return err
			}
			if active != 1 {
				inactive = append(inactive, fmt.Sprintf("network %q is inactive (start it: virsh net-start %s)", network, network))
			}
		}
		seen := map[string]bool{}
		for _, name := range pools {
			if seen[name] {
				continue
			}
			seen[name] = true
			p, err := l.StoragePoolLookupByName(name)
			switch {
			case isNotFound(err):
				missing = append(missing, fmt.Sprintf("storage pool %q does not exist", name))
				continue
			case err != nil:
				return err
			}
			active, err := l.StoragePoolIsActive(p)
			if err != nil {
				return err
			}
			if active != 1 {
				inactive = append(inactive, fmt.Sprintf("storage pool %q is inactive (start it: virsh pool-start %s)", name, name))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r := &Readiness{Ready: len(missing)+len(inactive) == 0}
	switch {
	case len(missing) > 0:
		r.Reason = ReasonInfrastructureMissing
	case len(inactive) > 0:
		r.Reason = ReasonInfrastructureInactive
	}
	r.Message = joinSentences(append(missing, inactive...))
	if r.Ready {
		r.Message = fmt.Sprintf("network %q and storage pools %q are active", network, pools)
	}
	return r, nil
}

func isNotFound(err error) bool { return errors.Is(classify("", "", err), ErrNotFound) }

func joinSentences(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}
