package libvirt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// A quiesced snapshot of a running domain is an external disk-only one: libvirt's
// VIR_DOMAIN_SNAPSHOT_CREATE_QUIESCE needs DISK_ONLY, and QEMU takes a disk-only snapshot
// of a running guest only as new qcow2 overlays (the images below then hold the snapshot).
// libvirt 9.0 deletes such a snapshot (a block commit of each overlay back into its image,
// running or shut off, measured) but reverts it only from 9.9.

// externalSnapshotFlags: disk-only, filesystems frozen by the guest agent around it,
// all disks or none.
const externalSnapshotFlags = golibvirt.DomainSnapshotCreateDiskOnly | golibvirt.DomainSnapshotCreateQuiesce |
	golibvirt.DomainSnapshotCreateAtomic

// revertExternalVersion is the first libvirt (major*1e6+minor*1e3) that reverts external
// snapshots.
const revertExternalVersion = 9_009_000

// ErrExternalRevert is a revert to an external snapshot that this libvirt cannot do.
var ErrExternalRevert = errors.New("this libvirt cannot revert an external snapshot")

// externalSnapshotXML is the <domainsnapshot> of a quiesced snapshot named spec.Name of
// the running domain whose live XML is domXML: every writable file disk gets an overlay
// next to its image (domainxml.SnapshotOverlayPath), read-only disks (cdrom, seed ISO)
// and shareable ones are left out. A writable disk that is not a file (a block device, a
// network or pool volume source) is refused rather than left out of the snapshot.
func externalSnapshotXML(spec SnapshotSpec, domXML string) (string, []string, error) {
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(domXML); err != nil {
		return "", nil, fmt.Errorf("parse domain XML: %w", err)
	}
	x := libvirtxml.DomainSnapshot{Name: spec.Name, Description: spec.Description,
		Memory: &libvirtxml.DomainSnapshotMemory{Snapshot: "no"}, Disks: &libvirtxml.DomainSnapshotDisks{}}
	var overlays []string
	if dom.Devices != nil {
		for _, d := range dom.Devices.Disks {
			if d.Target == nil {
				continue
			}
			sd := libvirtxml.DomainSnapshotDisk{Name: d.Target.Dev, Snapshot: "no"}
			writable := (d.Device == "" || d.Device == "disk") && d.ReadOnly == nil && d.Shareable == nil
			switch {
			case !writable:
			case d.Source == nil || d.Source.File == nil || d.Source.File.File == "":
				return "", nil, fmt.Errorf("disk %s of domain %s is not a file image (a block device, network or pool volume source): "+
					"a quiesced snapshot puts a qcow2 overlay file next to each writable disk and cannot cover it; "+
					"snapshot the shut-off domain instead (quiesce = false)", d.Target.Dev, dom.Name)
			default:
				p := domainxml.SnapshotOverlayPath(d.Source.File.File, spec.Name)
				sd.Snapshot, sd.Driver = "external", &libvirtxml.DomainDiskDriver{Type: "qcow2"}
				sd.Source = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: p}}
				overlays = append(overlays, p)
			}
			x.Disks.Disks = append(x.Disks.Disks, sd)
		}
	}
	if len(overlays) == 0 {
		return "", nil, fmt.Errorf("domain %s has no writable disk to snapshot", dom.Name)
	}
	doc, err := x.Marshal()
	return doc, overlays, err
}

// snapshotOverlays is the overlay files of an external snapshot's XML (none for an
// internal one).
func snapshotOverlays(x *libvirtxml.DomainSnapshot) []string {
	var out []string
	if x.Disks == nil {
		return nil
	}
	for _, d := range x.Disks.Disks {
		if d.Snapshot == "external" && d.Source != nil && d.Source.File != nil {
			out = append(out, d.Source.File.File)
		}
	}
	return out
}

// quiesceError is libvirt's refusal of a quiesced snapshot in the user's words: an agent
// that is missing or silent says what the guest needs (as FreezeDuring does).
func quiesceError(domain string, err error) error {
	if agentMissing(err) {
		return freezeError(domain, err)
	}
	return err
}

// refuseExternalRevert is ErrExternalRevert when snapshot snap of domain d is external
// and the daemon's libvirt is older than 9.9: checked before the revert, so nothing is
// half done.
func refuseExternalRevert(l *golibvirt.Libvirt, d Domain, snap golibvirt.DomainSnapshot) error {
	text, err := l.DomainSnapshotGetXMLDesc(snap, 0)
	if err != nil {
		return err
	}
	var x libvirtxml.DomainSnapshot
	if err := x.Unmarshal(text); err != nil {
		return fmt.Errorf("parse snapshot XML: %w", err)
	}
	overlays := snapshotOverlays(&x)
	if len(overlays) == 0 {
		return nil
	}
	v, err := l.ConnectGetLibVersion()
	if err != nil || v >= revertExternalVersion {
		return err
	}
	return fmt.Errorf("%w: snapshot %s of domain %s is external (a quiesced snapshot of the running domain: its disks run on "+
		"the overlays %s), and libvirt %d.%d reverts external snapshots only from 9.9; nothing was changed. "+
		"To go back to it: shut the domain off and restore the images below the overlays by hand, or use snapshots "+
		"libvirt can revert here (memory = true of the running domain, or a disk-only one of the shut-off domain)",
		ErrExternalRevert, x.Name, d.Name, strings.Join(overlays, ", "), v/1_000_000, v/1000%1000)
}

// removeOverlays makes sure the overlay files of a deleted external snapshot are gone:
// libvirt's delete (the block commit) removes them itself, measured on 9.0; one left in a
// pool is deleted, and the pools that listed them are refreshed. Best effort on pool
// refresh (libvirt refuses one while another upload into the pool runs).
func removeOverlays(ctx context.Context, c *Client, pools map[string]bool, overlays []string) error {
	var errs []error
	for pool := range pools {
		_ = c.Write(ctx, "refresh pool "+pool, func(l *golibvirt.Libvirt) error {
			p, err := l.StoragePoolLookupByName(pool)
			if err != nil {
				return err
			}
			return l.StoragePoolRefresh(p, 0)
		})
	}
	for _, o := range overlays {
		err := c.Write(ctx, "delete snapshot overlay "+o, func(l *golibvirt.Libvirt) error {
			v, err := l.StorageVolLookupByPath(o)
			if err != nil {
				return err
			}
			return l.StorageVolDelete(v, 0)
		})
		if err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, fmt.Errorf("the snapshot is deleted but its overlay %s is left (remove it by hand): %w", o, err))
		}
	}
	return errors.Join(errs...)
}

// overlayPools is the pools, by name, that hold the overlays or the images below them
// (looked up before the delete): the overlays are files in the images' directories.
func overlayPools(l *golibvirt.Libvirt, overlays []string) map[string]bool {
	pools := map[string]bool{}
	for _, o := range overlays {
		for _, p := range []string{o, domainxml.SnapshotOverlayBase(o)} {
			v, err := l.StorageVolLookupByPath(p)
			if err != nil {
				continue
			}
			if pool, err := l.StoragePoolLookupByVolume(v); err == nil {
				pools[pool.Name] = true
			}
		}
	}
	return pools
}
