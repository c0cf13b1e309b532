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

// AddSweepers registers sweepers that remove what failed tests left on the test host:
// every domain, volume, network and pool whose name starts with NamePrefix. Run them
// with `make sweep` (go test ./internal/provider -sweep=local).
func AddSweepers() {
	resource.AddTestSweepers("libvirt_domain", &resource.Sweeper{Name: "libvirt_domain", F: sweepDomains})
	resource.AddTestSweepers("libvirt_volume", &resource.Sweeper{Name: "libvirt_volume", F: sweepVolumes, Dependencies: []string{"libvirt_domain"}})
	resource.AddTestSweepers("libvirt_network", &resource.Sweeper{Name: "libvirt_network", F: sweepNetworks, Dependencies: []string{"libvirt_domain"}})
	resource.AddTestSweepers("libvirt_pool", &resource.Sweeper{Name: "libvirt_pool", F: sweepPools, Dependencies: []string{"libvirt_volume"}})
}

func sweepClient() (*libvirt.Client, context.Context, context.CancelFunc, error) {
	c, err := libvirt.NewClient(libvirt.Config{URI: URI(), MaxConnections: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	return c, ctx, cancel, err
}

func ours(name string) bool { return strings.HasPrefix(name, NamePrefix) }

func sweepDomains(string) error {
	c, ctx, cancel, err := sweepClient()
	defer cancel()
	if err != nil {
		return err
	}
	var doms []golibvirt.Domain
	if err := c.Read(ctx, "list domains", func(l *golibvirt.Libvirt) error {
		doms, _, err = l.ConnectListAllDomains(1, 0)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, d := range doms {
		if !ours(d.Name) {
			continue
		}
		err := c.Write(ctx, "remove domain "+d.Name, func(l *golibvirt.Libvirt) error {
			_ = l.DomainDestroy(d) // stopped domains answer "not running"
			return l.DomainUndefineFlags(d, golibvirt.DomainUndefineManagedSave|golibvirt.DomainUndefineSnapshotsMetadata|
				golibvirt.DomainUndefineNvram|golibvirt.DomainUndefineCheckpointsMetadata)
		})
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func sweepVolumes(string) error {
	c, ctx, cancel, err := sweepClient()
	defer cancel()
	if err != nil {
		return err
	}
	var pools []golibvirt.StoragePool
	if err := c.Read(ctx, "list pools", func(l *golibvirt.Libvirt) error {
		pools, _, err = l.ConnectListAllStoragePools(1, golibvirt.ConnectListStoragePoolsActive)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, p := range pools {
		var vols []golibvirt.StorageVol
		if err := c.Read(ctx, "list volumes of pool "+p.Name, func(l *golibvirt.Libvirt) error {
			_ = l.StoragePoolRefresh(p, 0)
			vols, _, err = l.StoragePoolListAllVolumes(p, 1, 0)
			return err
		}); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, v := range vols {
			// libvirt_cluster_machine names its seed cloudinit-<domain>.iso.
			if !ours(v.Name) && !ours(strings.TrimPrefix(v.Name, "cloudinit-")) {
				continue
			}
			err := c.Write(ctx, fmt.Sprintf("delete volume %s/%s", p.Name, v.Name), func(l *golibvirt.Libvirt) error {
				return l.StorageVolDelete(v, 0)
			})
			if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func sweepNetworks(string) error {
	c, ctx, cancel, err := sweepClient()
	defer cancel()
	if err != nil {
		return err
	}
	var nets []golibvirt.Network
	if err := c.Read(ctx, "list networks", func(l *golibvirt.Libvirt) error {
		nets, _, err = l.ConnectListAllNetworks(1, 0)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, n := range nets {
		if !ours(n.Name) {
			continue
		}
		err := c.Write(ctx, "remove network "+n.Name, func(l *golibvirt.Libvirt) error {
			_ = l.NetworkDestroy(n) // inactive networks answer "not running"
			return l.NetworkUndefine(n)
		})
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func sweepPools(string) error {
	c, ctx, cancel, err := sweepClient()
	defer cancel()
	if err != nil {
		return err
	}
	var pools []golibvirt.StoragePool
	if err := c.Read(ctx, "list pools", func(l *golibvirt.Libvirt) error {
		pools, _, err = l.ConnectListAllStoragePools(1, 0)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, p := range pools {
		if !ours(p.Name) {
			continue
		}
		err := c.Write(ctx, "remove pool "+p.Name, func(l *golibvirt.Libvirt) error {
			_ = l.StoragePoolDestroy(p) // inactive pools answer "not running"
			return l.StoragePoolUndefine(p)
		})
		if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
