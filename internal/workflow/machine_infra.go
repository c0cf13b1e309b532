package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Readiness reasons of a cluster's infrastructure, as Cluster API conditions spell them.
const (
	ReasonInfrastructureMissing  = "InfrastructureMissing"
	ReasonInfrastructureInactive = "InfrastructureInactive"
)

// InfraAPI is what checking a cluster's infrastructure asks of libvirt.
type InfraAPI interface {
	NetworkActive(ctx context.Context, name string) (bool, error)
	PoolActive(ctx context.Context, name string) (bool, error)
}

// Readiness says whether the objects a cluster's machines need are there and running.
type Readiness struct {
	Ready   bool
	Reason  string // "" when ready
	Message string // names the missing or inactive objects and what to do
}

// CheckInfrastructure looks up a network and storage pools: all must exist and be active.
// Missing objects win over inactive ones in the reason; the message names every problem.
// A transport error is returned as an error, never as a reason.
func CheckInfrastructure(ctx context.Context, api InfraAPI, network string, pools ...string) (*Readiness, error) {
	var missing, inactive []string
	look := func(kind, name, start string, active func(context.Context, string) (bool, error)) error {
		on, err := active(ctx, name)
		switch {
		case errors.Is(err, libvirt.ErrNotFound):
			missing = append(missing, fmt.Sprintf("%s %q does not exist", kind, name))
		case err != nil:
			return err
		case !on:
			inactive = append(inactive, fmt.Sprintf("%s %q is inactive (start it: virsh %s %s)", kind, name, start, name))
		}
		return nil
	}
	if err := look("network", network, "net-start", api.NetworkActive); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, name := range pools {
		if seen[name] {
			continue
		}
		seen[name] = true
		if err := look("storage pool", name, "pool-start", api.PoolActive); err != nil {
			return nil, err
		}
	}
	r := &Readiness{Ready: len(missing)+len(inactive) == 0}
	switch {
	case len(missing) > 0:
		r.Reason = ReasonInfrastructureMissing
	case len(inactive) > 0:
		r.Reason = ReasonInfrastructureInactive
	}
	r.Message = strings.Join(append(missing, inactive...), "; ")
	if r.Ready {
		r.Message = fmt.Sprintf("network %q and storage pools %q are active", network, pools)
	}
	return r, nil
}
