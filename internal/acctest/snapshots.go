package acctest

import (
	"context"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// SnapshotLookup finds snapshot snap of domain dom (by name), for CheckGone.
func SnapshotLookup(dom, snap string) Lookup {
	return func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(dom)
		if err != nil {
			return err
		}
		_, err = l.DomainSnapshotLookupByName(d, snap, 0)
		return err
	}
}

// SnapshotIsCurrent reports whether snapshot snap is domain dom's current one.
func SnapshotIsCurrent(t testing.TB, dom, snap string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var current int32
	err := Client(t).Read(ctx, "is snapshot "+snap+" current", func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(dom)
		if err != nil {
			return err
		}
		s, err := l.DomainSnapshotLookupByName(d, snap, 0)
		if err != nil {
			return err
		}
		current, err = l.DomainSnapshotIsCurrent(s, 0)
		return err
	})
	return current == 1, err
}
