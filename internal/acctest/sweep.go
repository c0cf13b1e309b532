package acctest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// AddSweepers registers sweepers that remove what failed tests left on the test hosts:
// every domain, volume, network and pool whose name starts with NamePrefix (and the
// cloudinit-tfacc-* seeds of cluster machines), on the main host and, when it is up
// (LIBVIRT_TEST_URI_B set), on the second host b as well. Run them with `make sweep`
// (go test ./internal/provider -sweep=local).
//
// LIBVIRT_TEST_SWEEP_PREFIX narrows a sweep to names under a longer prefix (it must start
// with NamePrefix): a sweep that cannot touch the objects of tests running meanwhile.
func AddSweepers() {
	resource.AddTestSweepers("libvirt_domain", &resource.Sweeper{Name: "libvirt_domain", F: sweepDomains})
	resource.AddTestSweepers("libvirt_volume", &resource.Sweeper{Name: "libvirt_volume", F: sweepVolumes, Dependencies: []string{"libvirt_domain"}})
	resource.AddTestSweepers("libvirt_network", &resource.Sweeper{Name: "libvirt_network", F: sweepNetworks, Dependencies: []string{"libvirt_domain"}})
	resource.AddTestSweepers("libvirt_pool", &resource.Sweeper{Name: "libvirt_pool", F: sweepPools, Dependencies: []string{"libvirt_volume"}})
}

// sweepURIs are the hosts a sweep cleans: the main test host, and b when it is up.
func sweepURIs() []string {
	if b := URIB(); b != "" {
		return []string{URI(), b}
	}
	return []string{URI()}
}

// sweepPrefix is what the names a sweep removes start with.
func sweepPrefix() (string, error) {
	p := Env("LIBVIRT_TEST_SWEEP_PREFIX", NamePrefix)
	if !strings.HasPrefix(p, NamePrefix) {
		return "", fmt.Errorf("LIBVIRT_TEST_SWEEP_PREFIX %q does not start with %q: a sweep removes test objects only", p, NamePrefix)
	}
	return p, nil
}

func ours(prefix, name string) bool {
	return strings.HasPrefix(name, prefix) || strings.HasPrefix(name, "cloudinit-"+prefix)
}

// sweep lists objects of one kind on every host of sweepURIs and removes those that are
// ours; an object that went away meanwhile is not an error. One host's failure does not
// stop the others' sweep.
func sweep[T any](kind string, list func(*golibvirt.Libvirt) ([]T, error), name func(T) string, remove func(*golibvirt.Libvirt, T) error) error {
	prefix, err := sweepPrefix()
	if err != nil {
		return err
	}
	var errs []error
	for _, uri := range sweepURIs() {
		if err := sweepHost(uri, prefix, kind, list, name, remove); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", uri, err))
		}
	}
	return errors.Join(errs...)
}

func sweepHost[T any](uri, prefix, kind string, list func(*golibvirt.Libvirt) ([]T, error), name func(T) string, remove func(*golibvirt.Libvirt, T) error) error {
	c, err := libvirt.NewClient(libvirt.Config{URI: uri, MaxConnections: 2})
	if err != nil {
		return err
	}
	defer c.CloseIdle()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var items []T
	if err := c.Read(ctx, "list "+kind+"s", func(l *golibvirt.Libvirt) (err error) {
		items, err = list(l)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, it := range items {
		if !ours(prefix, name(it)) {
			continue
		}
		err := c.Write(ctx, fmt.Sprintf("remove %s %s", kind, name(it)), func(l *golibvirt.Libvirt) error { return remove(l, it) })
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func sweepDomains(string) error {
	return sweep("domain",
		func(l *golibvirt.Libvirt) ([]golibvirt.Domain, error) {
			d, _, err := l.ConnectListAllDomains(1, 0)
			return d, err
		},
		func(d golibvirt.Domain) string { return d.Name },
		func(l *golibvirt.Libvirt, d golibvirt.Domain) error {
			_ = l.DomainDestroy(d) // stopped domains answer "not running"
			return l.DomainUndefineFlags(d, libvirt.DomainUndefineAll)
		})
}

// poolVolume is a volume with the pool it was listed in, for messages.
type poolVolume struct {
	pool string
	vol  golibvirt.StorageVol
}

func sweepVolumes(string) error {
	return sweep("volume",
		func(l *golibvirt.Libvirt) ([]poolVolume, error) {
			pools, _, err := l.ConnectListAllStoragePools(1, golibvirt.ConnectListStoragePoolsActive)
			if err != nil {
				return nil, err
			}
			var out []poolVolume
			for _, p := range pools {
				_ = l.StoragePoolRefresh(p, 0) // volumes written behind libvirt's back
				vols, _, err := l.StoragePoolListAllVolumes(p, 1, 0)
				if err != nil {
					return nil, err
				}
				for _, v := range vols {
					out = append(out, poolVolume{p.Name, v})
				}
			}
			return out, nil
		},
		func(v poolVolume) string { return v.vol.Name },
		func(l *golibvirt.Libvirt, v poolVolume) error { return l.StorageVolDelete(v.vol, 0) })
}

func sweepNetworks(string) error {
	return sweep("network",
		func(l *golibvirt.Libvirt) ([]golibvirt.Network, error) {
			n, _, err := l.ConnectListAllNetworks(1, 0)
			return n, err
		},
		func(n golibvirt.Network) string { return n.Name },
		func(l *golibvirt.Libvirt, n golibvirt.Network) error {
			_ = l.NetworkDestroy(n) // inactive networks answer "not running"
			return l.NetworkUndefine(n)
		})
}

func sweepPools(string) error {
	return sweep("pool",
		func(l *golibvirt.Libvirt) ([]golibvirt.StoragePool, error) {
			p, _, err := l.ConnectListAllStoragePools(1, 0)
			return p, err
		},
		func(p golibvirt.StoragePool) string { return p.Name },
		func(l *golibvirt.Libvirt, p golibvirt.StoragePool) error {
			_ = l.StoragePoolDestroy(p) // inactive pools answer "not running"
			return l.StoragePoolUndefine(p)
		})
}
