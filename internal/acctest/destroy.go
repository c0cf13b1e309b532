package acctest

import (
	"context"
	"errors"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Lookup asks libvirt for one object and returns its error (nil when it exists).
type Lookup func(l *golibvirt.Libvirt) error

// DomainLookup, VolumeLookup, NetworkLookup and PoolLookup find objects by name.
func DomainLookup(name string) Lookup {
	return func(l *golibvirt.Libvirt) error { _, err := l.DomainLookupByName(name); return err }
}

func VolumeLookup(pool, name string) Lookup {
	return func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(pool)
		if err != nil {
			return err
		}
		_, err = l.StorageVolLookupByName(p, name)
		return err
	}
}

func NetworkLookup(name string) Lookup {
	return func(l *golibvirt.Libvirt) error { _, err := l.NetworkLookupByName(name); return err }
}

func PoolLookup(name string) Lookup {
	return func(l *golibvirt.Libvirt) error { _, err := l.StoragePoolLookupByName(name); return err }
}

// HostCheck is a step Check (or CheckDestroy) that asks the host, not the state: check
// reads libvirt, the guest or the files itself.
func HostCheck(check func() error) resource.TestCheckFunc {
	return func(*terraform.State) error { return check() }
}

// CheckGone is a CheckDestroy that asks libvirt directly that every named object is gone:
// a lookup must answer "not found" — any other error fails the check too, since an
// unreachable daemon proves nothing.
func CheckGone(objects map[string]Lookup) resource.TestCheckFunc {
	return func(*terraform.State) error {
		return checkGone(URI(), objects)
	}
}

// CheckGoneOn is CheckGone for the objects of several hosts, by URI: a test of many hosts
// asks each host's libvirt.
func CheckGoneOn(byURI map[string]map[string]Lookup) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var errs []error
		for uri, objects := range byURI {
			if err := checkGone(uri, objects); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", uri, err))
			}
		}
		return errors.Join(errs...)
	}
}

func checkGone(uri string, objects map[string]Lookup) error {
	c, err := libvirt.NewClient(libvirt.Config{URI: uri, MaxConnections: 2})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for what, lookup := range objects {
		err := c.Read(ctx, "look up "+what, lookup)
		switch {
		case err == nil:
			errs = append(errs, fmt.Errorf("%s still exists on the host after destroy", what))
		case !errors.Is(err, libvirt.ErrNotFound):
			errs = append(errs, fmt.Errorf("cannot tell whether %s is gone: %w", what, err))
		}
	}
	return errors.Join(errs...)
}

// VolumeKeyLookup finds a volume by its key (a dir pool's: the path).
func VolumeKeyLookup(key string) Lookup {
	return func(l *golibvirt.Libvirt) error { _, err := l.StorageVolLookupByKey(key); return err }
}
