package acctest

import (
	"context"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// SecretLookup finds a secret by UUID.
func SecretLookup(id string) Lookup {
	return func(l *golibvirt.Libvirt) error {
		u, err := uuid.Parse(id)
		if err != nil {
			return err
		}
		_, err = l.SecretLookupByUUID(golibvirt.UUID(u))
		return err
	}
}

// VolumeSecretLookup finds the volume secret whose usage is the volume path path: it
// needs no UUID, so it asks also after an apply that failed before state had one.
func VolumeSecretLookup(path string) Lookup {
	return func(l *golibvirt.Libvirt) error {
		_, err := l.SecretLookupByUsage(int32(golibvirt.SecretUsageTypeVolume), path)
		return err
	}
}

// SecretValue is the value libvirt keeps for the secret id (ok false: none set).
func SecretValue(t testing.TB, id string) (value []byte, ok bool, err error) {
	return Client(t).SecretValue(Ctx(t), id)
}

// SetSecretValue changes the value of the secret id behind Terraform's back.
func SetSecretValue(t testing.TB, id string, value []byte) error {
	return Client(t).SetSecretValue(Ctx(t), id, value)
}

// DefineSecret defines a secret of usage type usage for name with UUID id directly in
// libvirt (behind Terraform's back); it is removed when the test ends.
func DefineSecret(t testing.TB, id, usage, name string) {
	t.Helper()
	if _, err := Client(t).DefineSecret(Ctx(t), libvirt.SecretSpec{UUID: id, UsageType: usage, UsageName: name}, nil); err != nil {
		t.Fatalf("define secret %s: %v", id, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = Client(t).DeleteSecret(ctx, id)
	})
}
