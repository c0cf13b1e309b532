package acctest

import (
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"
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

// SecretValue is the value libvirt keeps for the secret id (ok false: none set).
func SecretValue(t testing.TB, id string) (value []byte, ok bool, err error) {
	return Client(t).SecretValue(Ctx(t), id)
}

// SetSecretValue changes the value of the secret id behind Terraform's back.
func SetSecretValue(t testing.TB, id string, value []byte) error {
	return Client(t).SetSecretValue(Ctx(t), id, value)
}
