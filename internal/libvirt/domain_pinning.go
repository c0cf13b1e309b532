package libvirt

import (
	"context"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// Pinning a running domain's vCPUs and emulator threads to host CPUs, live and in its
// persistent definition at once. cpumap is a bitmap of host CPUs (bit n of byte n/8 for
// CPU n; domainxml.CPUMap).

// PinVCPU pins vCPU vcpu of domain id to the host CPUs in cpumap.
func (c *Client) PinVCPU(ctx context.Context, id string, vcpu uint, cpumap []byte) error {
	return c.onDomain(ctx, fmt.Sprintf("pin vCPU %d of", vcpu), id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainPinVcpuFlags(d, uint32(vcpu), cpumap, uint32(golibvirt.DomainAffectLive|golibvirt.DomainAffectConfig))
	})
}

// PinEmulator pins the emulator threads of domain id to the host CPUs in cpumap.
func (c *Client) PinEmulator(ctx context.Context, id string, cpumap []byte) error {
	return c.onDomain(ctx, "pin the emulator threads of", id, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainPinEmulator(d, cpumap, golibvirt.DomainAffectLive|golibvirt.DomainAffectConfig)
	})
}
