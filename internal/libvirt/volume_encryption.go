package libvirt

import (
	"context"
	"errors"
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
	"libvirt.org/go/libvirtxml"
)

// EncryptionLUKS is the one volume encryption format offered: LUKS, which libvirt 9.0
// writes as a LUKS image for a raw volume and as qcow2's own LUKS encryption for a
// qcow2 one (qemu-img does both; the passphrase comes from the secret).
const EncryptionLUKS = "luks"

// VolumeEncryption is how a volume is encrypted: its format and the libvirt secret
// (UUID, usage type volume) whose value is the passphrase.
type VolumeEncryption struct {
	Format string
	Secret string // "" when libvirt does not say (see volumeEncryption)
}

// encryptionXML is the <encryption> of a volume's target.
func (e *VolumeEncryption) encryptionXML() *libvirtxml.StorageEncryption {
	if e == nil {
		return nil
	}
	x := &libvirtxml.StorageEncryption{Format: e.Format}
	if e.Secret != "" {
		x.Secret = &libvirtxml.StorageEncryptionSecret{Type: "passphrase", UUID: e.Secret}
	}
	return x
}

// volumeEncryption reads a volume target's <encryption>. libvirt keeps the secret it was
// created with until the pool is refreshed (a restart of libvirtd does that); a refresh
// probes the file, which tells that it is LUKS but not the secret, and libvirt then finds
// the secret only by its usage (a volume secret whose usage_name is the volume's path).
// So Secret may be empty for an encrypted volume.
func volumeEncryption(t *libvirtxml.StorageVolumeTarget) *VolumeEncryption {
	if t == nil || t.Encryption == nil || t.Encryption.Format == "" || t.Encryption.Format == "default" {
		return nil
	}
	e := &VolumeEncryption{Format: t.Encryption.Format}
	if t.Encryption.Secret != nil {
		e.Secret = t.Encryption.Secret.UUID
	}
	return e
}

// checkEncryptionSecret makes sure the secret a volume's encryption names exists and is
// a volume secret, so that the error names it (qemu-img's own would not say which).
func (c *Client) checkEncryptionSecret(ctx context.Context, spec VolumeSpec) error {
	e := spec.Encryption
	if e == nil {
		return nil
	}
	if e.Format != EncryptionLUKS {
		return fmt.Errorf("volume %s: encryption format %q is not supported: use %q", spec, e.Format, EncryptionLUKS)
	}
	s, err := c.GetSecret(ctx, e.Secret)
	switch {
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("volume %s: encryption secret_id %s names no libvirt secret (see `virsh secret-list`; "+
			"use the id of a libvirt_secret with usage_type = \"volume\"): %v", spec, e.Secret, err) // not ErrNotFound: the pool is there
	case err != nil:
		return fmt.Errorf("volume %s: look up encryption secret %s: %w", spec, e.Secret, err)
	case s.UsageType != SecretVolume:
		return fmt.Errorf("volume %s: encryption secret %s is a %q secret (usage %q); a volume's passphrase is a "+
			"libvirt_secret with usage_type = \"volume\"", spec, e.Secret, s.UsageType, s.UsageName)
	}
	return nil
}

// VolumeSecretFor is the UUID of the volume secret whose usage names path (how libvirt
// itself finds a volume's secret after a pool refresh), "" when there is none.
func (c *Client) VolumeSecretFor(ctx context.Context, path string) (string, error) {
	id, err := c.SecretByUsage(ctx, SecretVolume, path)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	return id, err
}

// refuseEncrypted refuses encryption for a volume made in a way that cannot keep it: an
// upload writes the image's bytes over the LUKS header libvirt made, and an encrypted
// overlay would need its backing chain's secrets in every domain that uses it.
func refuseEncrypted(spec VolumeSpec, how string) error {
	if spec.Encryption == nil {
		return nil
	}
	return fmt.Errorf("volume %s: encryption is not possible for %s: make the volume plain, then copy it into an "+
		"encrypted one with clone_from", spec, how)
}

// encryptionWithSecret is the encryption of a volume's target (at path) with its
// secret: the one libvirt reports, else the volume secret whose usage names the path
// (libvirt's own rule after a pool refresh), else none (Secret ""); nil when the volume
// is plain.
func encryptionWithSecret(l *golibvirt.Libvirt, t *libvirtxml.StorageVolumeTarget, path string) (*VolumeEncryption, error) {
	e := volumeEncryption(t)
	if e == nil || e.Secret != "" {
		return e, nil
	}
	s, err := l.SecretLookupByUsage(int32(golibvirt.SecretUsageTypeVolume), path)
	switch {
	case isNotFound(err):
		return e, nil // encrypted, with a secret no one can tell
	case err != nil:
		return nil, err
	}
	e.Secret = uuid.UUID(s.UUID).String()
	return e, nil
}
