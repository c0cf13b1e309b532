package workflow

import (
	"context"
	"fmt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// pinningAPI is what live pinning and the balloon's statistics period ask of libvirt
// (internal/libvirt/domain_pinning.go, domain_balloon.go).
type pinningAPI interface {
	PinVCPU(ctx context.Context, id string, vcpu uint, cpumap []byte) error
	PinEmulator(ctx context.Context, id string, cpumap []byte) error
	// SetMemoryStatsPeriod makes a LiveSetMemStatsPeriod (internal/libvirt/domain_balloon.go).
	SetMemoryStatsPeriod(ctx context.Context, id string, sec uint) error
}

// pin makes a LivePinVCPU or LivePinEmulator: live and in the definition at once.
func pin(ctx context.Context, api DomainAPI, ch Change, op domainxml.LiveOp) error {
	cpumap, err := domainxml.CPUMap(op.CPUSet)
	if err != nil {
		return fmt.Errorf("pin %s %s of domain %s: %w", op.Noun, op.Device, ch.Name, err)
	}
	if op.Kind == domainxml.LivePinEmulator {
		err = api.PinEmulator(ctx, ch.ID, cpumap)
	} else {
		err = api.PinVCPU(ctx, ch.ID, op.VCPU, cpumap)
	}
	if err != nil {
		return fmt.Errorf("pin %s %s of running domain %s to host CPUs %s: %w", op.Noun, op.Device, ch.Name, op.CPUSet, err)
	}
	return nil
}
