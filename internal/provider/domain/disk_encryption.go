package domain

// The domain's (domain_disks.go is its only user): it left resource_volume_encryption.go when
// the volume moved to storage/, and goes to the domain's disk file when the domain moves.

import (
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// diskEncryption is a volume's encryption as a domain disk writes it; nil when the
// volume is plain or its secret is unknown (then the definition keeps what it has).
func diskEncryption(e *libvirt.VolumeEncryption) *domainxml.DiskEncryption {
	if e == nil || e.Secret == "" {
		return nil
	}
	return &domainxml.DiskEncryption{Format: e.Format, Secret: e.Secret}
}
