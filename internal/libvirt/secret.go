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

// Secret usage types: what a secret is for, and so which element names its user.
const (
	SecretVolume = "volume" // a LUKS-encrypted volume, named by its path
	SecretCeph   = "ceph"   // a Ceph (rbd) client key, named freely
	SecretISCSI  = "iscsi"  // an iSCSI CHAP password, named by target
	SecretTLS    = "tls"    // a TLS key passphrase, named freely
	SecretVTPM   = "vtpm"   // a vTPM state encryption key, named freely
)

// SecretUsageTypes are the usage types libvirt_secret offers.
var SecretUsageTypes = []string{SecretVolume, SecretCeph, SecretISCSI, SecretTLS, SecretVTPM}

// SecretSpec is a libvirt secret's definition (its value is set apart).
type SecretSpec struct {
	UUID        string // empty: chosen by DefineSecret
	UsageType   string
	UsageName   string // the volume path, iSCSI target, or the name
	Description string
	Ephemeral   bool // kept in memory only (gone when libvirtd restarts)
	Private     bool // the value can never be read back
}

// secretXML is the <secret> for s.
func (s SecretSpec) secretXML() (string, error) {
	x := libvirtxml.Secret{UUID: s.UUID, Description: s.Description, Ephemeral: yesNo(s.Ephemeral), Private: yesNo(s.Private),
		Usage: &libvirtxml.SecretUsage{Type: s.UsageType}}
	switch s.UsageType {
	case SecretVolume:
		x.Usage.Volume = s.UsageName
	case SecretISCSI:
		x.Usage.Target = s.UsageName
	default:
		x.Usage.Name = s.UsageName
	}
	return x.Marshal()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// secretFromXML reads a SecretSpec from libvirt's secret XML.
func secretFromXML(text string) (*SecretSpec, error) {
	var x libvirtxml.Secret
	if err := x.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("parse secret XML: %w", err)
	}
	s := &SecretSpec{UUID: x.UUID, Description: x.Description, Ephemeral: x.Ephemeral == "yes", Private: x.Private == "yes"}
	if u := x.Usage; u != nil {
		s.UsageType = u.Type
		s.UsageName = u.Name + u.Volume + u.Target // one of them, by type
	}
	return s, nil
}

func lookupSecretOn(l *golibvirt.Libvirt, id string) (golibvirt.Secret, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return golibvirt.Secret{}, fmt.Errorf("secret id %q is not a UUID", id)
	}
	return l.SecretLookupByUUID(golibvirt.UUID(u))
}

// GetSecret reads the definition of the secret with UUID id; a missing one is
// ErrNotFound.
func (c *Client) GetSecret(ctx context.Context, id string) (*SecretSpec, error) {
	var s *SecretSpec
	err := c.Read(ctx, "read secret "+id, func(l *golibvirt.Libvirt) (err error) {
		s, err = readSecretOn(l, id)
		return err
	})
	return s, err
}

func readSecretOn(l *golibvirt.Libvirt, id string) (*SecretSpec, error) {
	sec, err := lookupSecretOn(l, id)
	if err != nil {
		return nil, err
	}
	text, err := l.SecretGetXMLDesc(sec, 0)
	if err != nil {
		return nil, err
	}
	return secretFromXML(text)
}

// SecretValue is the value of the secret with UUID id; ErrSecretPrivate for a private
// one, and (ok false) none when no value was ever set.
func (c *Client) SecretValue(ctx context.Context, id string) (value []byte, ok bool, err error) {
	err = c.Read(ctx, "read the value of secret "+id, func(l *golibvirt.Libvirt) error {
		sec, err := lookupSecretOn(l, id)
		if err != nil {
			return err
		}
		value, err = l.SecretGetValue(sec, 0)
		return err
	})
	switch {
	case HasCode(err, golibvirt.ErrNoSecret) && strings.Contains(err.Error(), "does not have a value"):
		return nil, false, nil
	case HasCode(err, golibvirt.ErrInvalidSecret) && strings.Contains(err.Error(), "private"):
		return nil, false, fmt.Errorf("%w: %w", ErrSecretPrivate, err)
	}
	return value, err == nil, err
}

// ErrSecretPrivate: libvirt never reveals a private secret's value.
var ErrSecretPrivate = errors.New("the secret is private")

// DefineSecret defines the secret s (a UUID chosen when s has none; the same UUID
// redefines an existing secret), sets its value when value is not nil, and reads it back.
// Both steps are safe to repeat (the UUID is fixed before the first), so an answer lost on
// the connection is sent again once the daemon answers. A value libvirt refuses removes a
// secret this call made: nothing is left that the caller does not know of.
func (c *Client) DefineSecret(ctx context.Context, s SecretSpec, value []byte) (*SecretSpec, error) {
	fresh := s.UUID == ""
	if fresh {
		s.UUID = uuid.NewString()
	} else if _, err := c.GetSecret(ctx, s.UUID); errors.Is(err, ErrNotFound) {
		fresh = true
	} else if err != nil {
		return nil, err
	}
	doc, err := s.secretXML()
	if err != nil {
		return nil, err
	}
	err = c.writeSettled(ctx, "define secret "+s.UUID, func(l *golibvirt.Libvirt) error {
		_, err := l.SecretDefineXML(doc, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	if value != nil {
		if err := c.SetSecretValue(ctx, s.UUID, value); err != nil {
			if fresh {
				err = errors.Join(err, c.DeleteSecret(ctx, s.UUID))
			}
			return nil, err
		}
	}
	var got *SecretSpec
	err = c.readSettled(ctx, "read secret "+s.UUID, func(l *golibvirt.Libvirt) (err error) {
		got, err = readSecretOn(l, s.UUID)
		return err
	})
	return got, err
}

// SecretExistsError: a create found a secret with the UUID or the usage asked for
// already on the host. Defining it anyway would take that secret over (the same UUID is
// a redefinition: its description, flags and value replaced), so the create refuses.
type SecretExistsError struct {
	UUID      string // the existing secret's
	UsageType string
	UsageName string
	ByUUID    bool // found by the UUID asked for (else by the usage)
}

func (e *SecretExistsError) Error() string {
	by := fmt.Sprintf("the usage %s %s", e.UsageType, e.UsageName)
	if e.ByUUID {
		by = "the UUID " + e.UUID
	}
	return fmt.Sprintf("the host has a secret with %s already (secret %s, %s %s), which this create did not make: "+
		"import it (terraform import <address> %s) instead of creating it", by, e.UUID, e.UsageType, e.UsageName, e.UUID)
}

// CreateSecret makes a new secret s with value (none when nil) and returns its UUID:
// DefineSecret, but refused with a *SecretExistsError when a secret with s's UUID (when
// set) or usage exists already, so that a create never takes over a secret it did not
// make. It does not read the secret back: the caller does (a failed read-back must not
// lose the UUID of a secret that now exists). A lost answer is sent again under the same
// UUID, which is then this call's own secret.
func (c *Client) CreateSecret(ctx context.Context, s SecretSpec, value []byte) (string, error) {
	if s.UUID == "" {
		s.UUID = uuid.NewString()
	}
	if got, err := c.GetSecret(ctx, s.UUID); err == nil {
		return "", &SecretExistsError{UUID: got.UUID, UsageType: got.UsageType, UsageName: got.UsageName, ByUUID: true}
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	if id, err := c.SecretByUsage(ctx, s.UsageType, s.UsageName); err == nil {
		return "", &SecretExistsError{UUID: id, UsageType: s.UsageType, UsageName: s.UsageName}
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	doc, err := s.secretXML()
	if err != nil {
		return "", err
	}
	err = c.writeSettled(ctx, "define secret "+s.UUID, func(l *golibvirt.Libvirt) error {
		_, err := l.SecretDefineXML(doc, 0)
		return err
	})
	if err != nil {
		return "", err
	}
	if value != nil {
		if err := c.SetSecretValue(ctx, s.UUID, value); err != nil {
			return "", errors.Join(err, c.DeleteSecret(ctx, s.UUID)) // ours: nothing is left
		}
	}
	return s.UUID, nil
}

// SetSecretValue sets the value of the secret with UUID id.
func (c *Client) SetSecretValue(ctx context.Context, id string, value []byte) error {
	return c.writeSettled(ctx, "set the value of secret "+id, func(l *golibvirt.Libvirt) error {
		sec, err := lookupSecretOn(l, id)
		if err != nil {
			return err
		}
		return l.SecretSetValue(sec, value, 0)
	})
}

// DeleteSecret undefines the secret with UUID id; one already gone is ErrNotFound.
func (c *Client) DeleteSecret(ctx context.Context, id string) error {
	return c.writeSettled(ctx, "undefine secret "+id, func(l *golibvirt.Libvirt) error {
		sec, err := lookupSecretOn(l, id)
		if err != nil {
			return err
		}
		return l.SecretUndefine(sec)
	})
}

// SecretByUsage is the UUID of the secret of usageType (SecretCeph, SecretISCSI, ...)
// named usage: a disk's <auth> may name its secret that way. A missing one is
// ErrNotFound.
func (c *Client) SecretByUsage(ctx context.Context, usageType, usage string) (string, error) {
	if _, ok := secretUsageTypes[usageType]; !ok {
		return "", fmt.Errorf("secret usage type %q is not one of %s", usageType, strings.Join(SecretUsageTypes, ", "))
	}
	var id string
	err := c.Read(ctx, "find "+usageType+" secret "+usage, func(l *golibvirt.Libvirt) (err error) {
		id, err = secretByUsageOn(l, usageType, usage)
		return err
	})
	return id, err
}

func secretByUsageOn(l *golibvirt.Libvirt, usageType, usage string) (string, error) {
	t, ok := secretUsageTypes[usageType]
	if !ok {
		return "", fmt.Errorf("secret usage type %q is not one of %s", usageType, strings.Join(SecretUsageTypes, ", "))
	}
	s, err := l.SecretLookupByUsage(int32(t), usage)
	return uuid.UUID(s.UUID).String(), err
}

var secretUsageTypes = map[string]golibvirt.SecretUsageType{SecretVolume: golibvirt.SecretUsageTypeVolume, SecretCeph: golibvirt.SecretUsageTypeCeph,
	SecretISCSI: golibvirt.SecretUsageTypeIscsi, SecretTLS: golibvirt.SecretUsageTypeTLS, SecretVTPM: golibvirt.SecretUsageTypeVtpm}
