package libvirt

import (
	"context"
	"errors"
	"fmt"
	"strings"

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

// volumeSecretLookups is what encryptionWithSecret asks of a connection
// (*golibvirt.Libvirt).
type volumeSecretLookups interface {
	SecretLookupByUUID(UUID golibvirt.UUID) (golibvirt.Secret, error)
	SecretLookupByUsage(UsageType int32, UsageID string) (golibvirt.Secret, error)
	ConnectListAllDomains(NeedResults int32, Flags golibvirt.ConnectListAllDomainsFlags) ([]golibvirt.Domain, uint32, error)
	DomainGetXMLDesc(Dom golibvirt.Domain, Flags golibvirt.DomainXMLFlags) (string, error)
}

// encryptionWithSecret is the encryption of a volume's target (at path) with its
// secret; nil when the volume is plain. The secret is, in this order:
//
//  1. the one libvirt's volume XML names, when that secret exists. libvirt names the secret
//     the volume was created with until its pool is refreshed (any client's refresh, an
//     upload's, a daemon restart), then the volume secret whose usage is the path; it
//     keeps naming a secret that was undefined meanwhile until the next refresh.
//  2. the volume secret whose usage names the path (libvirt's own rule after a refresh).
//  3. the secret the domains that use the volume name for it: a disk on an encrypted
//     volume carries its <encryption> (the provider writes it there), and domain
//     definitions outlive pool refreshes and restarts. Only when they all name the same
//     one, and it exists.
//
// Without 3, what a read (an import above all) said depended on whether a pool refresh
// had happened since the volume was made: the secret before, none after, for a volume
// whose secret's usage is not its path (a secret shared by several volumes, a usage that
// names the path another way). Secret is "" when none of them tells.
func encryptionWithSecret(l volumeSecretLookups, t *libvirtxml.StorageVolumeTarget, path string) (*VolumeEncryption, error) {
	e := volumeEncryption(t)
	if e == nil {
		return nil, nil
	}
	if e.Secret != "" {
		ok, err := volumeSecretExists(l, e.Secret)
		if err != nil || ok {
			return e, err
		}
		e.Secret = "" // undefined since: libvirt names it until the next refresh
	}
	s, err := l.SecretLookupByUsage(int32(golibvirt.SecretUsageTypeVolume), path)
	switch {
	case err == nil:
		e.Secret = uuid.UUID(s.UUID).String()
		return e, nil
	case !isNotFound(err):
		return nil, err
	}
	e.Secret, err = secretOfDomainDisks(l, path)
	return e, err
}

// volumeSecretExists reports whether the secret with UUID id exists.
func volumeSecretExists(l volumeSecretLookups, id string) (bool, error) {
	u, perr := uuid.Parse(id)
	if perr != nil {
		return false, nil //nolint:nilerr // not a UUID libvirt could have a secret under: no such secret
	}
	_, err := l.SecretLookupByUUID(golibvirt.UUID(u))
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, err
}

// secretOfDomainDisks is the secret the domains' disks on the file path name for its
// encryption: "" when no disk there names one, when they name different ones, or when it
// does not exist. A domain that goes away during the look is passed over.
func secretOfDomainDisks(l volumeSecretLookups, path string) (string, error) {
	doms, _, err := l.ConnectListAllDomains(1, 0)
	if err != nil {
		return "", err
	}
	found := ""
	for _, d := range doms {
		doc, err := l.DomainGetXMLDesc(d, golibvirt.DomainXMLInactive)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		if !strings.Contains(doc, path) {
			continue // most domains: no need to parse them
		}
		var x libvirtxml.Domain
		if err := x.Unmarshal(doc); err != nil {
			return "", fmt.Errorf("parse the XML of domain %s: %w", d.Name, err)
		}
		for _, id := range diskSecretsAt(&x, path) {
			if found != "" && found != id {
				return "", nil // disagreement: none of them is taken for the volume's
			}
			found = id
		}
	}
	if found == "" {
		return "", nil
	}
	if ok, err := volumeSecretExists(l, found); err != nil || !ok {
		return "", err
	}
	return found, nil
}

// diskSecretsAt lists the secret UUIDs the disks of x on the file path name for their
// encryption (in <source>, where libvirt writes it, or directly under <disk>).
func diskSecretsAt(x *libvirtxml.Domain, path string) []string {
	var ids []string
	if x.Devices == nil {
		return nil
	}
	for _, disk := range x.Devices.Disks {
		src := disk.Source
		if src == nil || src.File == nil || src.File.File != path {
			continue
		}
		for _, enc := range []*libvirtxml.DomainDiskEncryption{src.Encryption, disk.Encryption} {
			if enc == nil {
				continue
			}
			for _, s := range enc.Secrets {
				if s.UUID != "" {
					ids = append(ids, strings.ToLower(s.UUID))
				}
			}
		}
	}
	return ids
}
