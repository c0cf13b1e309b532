package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// CloneShutdownTimeout is how long a clone may take to shut down (running = false,
// delete) before it is forced off.
const CloneShutdownTimeout = 30 * time.Second

// UpdateClone changes what a clone lets change in place: its current vCPUs and memory
// (0: as they are), within the ceilings it kept from its source, and whether it runs.
// Through Apply: live on a running clone, else in the definition.
func UpdateClone(ctx context.Context, api DomainAPI, id, name string, vcpu uint, mib uint64, running bool) error {
	st, err := api.GetDomainStatus(ctx, id)
	if err != nil {
		return err
	}
	var cur libvirtxml.Domain
	if err := cur.Unmarshal(st.XML); err != nil {
		return fmt.Errorf("parse the definition of clone %s: %w", name, err)
	}
	// The ceilings stay what the clone kept from its source: only the current values move.
	old := domainxml.Sizing(&cur)
	old.MaxVCPU, old.MaxMemoryKiB = old.EffectiveMaxVCPU(), old.EffectiveMaxMemoryKiB()
	next := old
	if vcpu != 0 {
		next.VCPU = vcpu
	}
	if mib != 0 && mib != domainxml.MiBOf(old.MemoryKiB) { // a clone's memory_mib is the KiB rounded down: unchanged, they stay
		next.MemoryKiB = mib * domainxml.KiBPerMiB
	}
	_, err = Apply(ctx, api, Change{ID: id, Name: name, Old: old, New: next, Running: running,
		ShutdownTimeout: CloneShutdownTimeout, Redefine: SizingOnly(next)})
	return err
}

// CloneDeleteAPI is what deleting a clone asks of libvirt.
type CloneDeleteAPI interface {
	GetDomainStatus(ctx context.Context, id string) (*libvirt.DomainStatus, error)
	ShutdownDomain(ctx context.Context, id string, timeout time.Duration) (bool, error)
	UndefineDomain(ctx context.Context, id string) error
	DeleteVolume(ctx context.Context, ref libvirt.VolumeRef) error
}

// DeleteClone removes a clone: its domain (with its varstore) and the disks it owns, as
// the record in its definition names them, and known (the disks the state remembers,
// for a domain already gone). Only volumes named as the clone's own disks
// (<name>-<target>.qcow2) are ever deleted: never a source's. An object already gone
// counts as deleted; every other failure is returned.
func DeleteClone(ctx context.Context, api CloneDeleteAPI, id, name string, known []domainxml.CloneMetaDisk, log Logf) error {
	disks := map[string]domainxml.CloneMetaDisk{} // by key
	for _, d := range known {
		disks[d.Key] = d
	}
	st, err := api.GetDomainStatus(ctx, id)
	switch {
	case err == nil:
		var d libvirtxml.Domain
		if d.Unmarshal(st.XML) == nil {
			if meta, ok := domainxml.ParseCloneMeta(&d); ok {
				for _, md := range meta.Disks {
					disks[md.Key] = md
				}
			}
		}
		if _, err := api.ShutdownDomain(ctx, id, CloneShutdownTimeout); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			return err
		}
		if err := api.UndefineDomain(ctx, id); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			return err
		}
	case !errors.Is(err, libvirt.ErrNotFound):
		return err
	}
	var errs []error
	for key, d := range disks {
		if key == "" || !strings.HasPrefix(d.Name, name+"-") || !strings.HasSuffix(d.Name, ".qcow2") {
			log.log("not deleting a volume that is not named as this clone's disk", map[string]any{"key": key, "name": d.Name})
			continue
		}
		// The pool tells "gone" from "in a stopped pool".
		if err := api.DeleteVolume(ctx, libvirt.VolumeRef{Key: key, Pool: d.Pool}); err != nil && !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, fmt.Errorf("delete disk %s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}
