package domain

import (
	"testing"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

func TestDiskEncryption(t *testing.T) {
	const id = "6b1c3a5e-0d4f-4c2a-9e1b-1234567890ab"
	if diskEncryption(&libvirt.VolumeEncryption{Format: "luks"}) != nil {
		t.Error("a disk gets an encryption without a secret")
	}
	if e := diskEncryption(&libvirt.VolumeEncryption{Format: "luks", Secret: id}); *e != (domainxml.DiskEncryption{Format: "luks", Secret: id}) {
		t.Errorf("disk encryption %+v", e)
	}
}
