package libvirt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// Checkpoints: libvirt's record of a point in time of a domain's disks (a dirty bitmap
// per disk in the qcow2 image, plus metadata), which the backup API uses to copy only the
// blocks written since. An incremental export makes one per link and removes them again.

// backupDisks are the targets of the domain's disks a backup or checkpoint can name:
// device disk (cdroms and floppies have no bitmaps; libvirt refuses them in the list).
func backupDisks(dom *libvirtxml.Domain) []string {
	var out []string
	if dom.Devices == nil {
		return nil
	}
	for _, d := range dom.Devices.Disks {
		if d.Target != nil && (d.Device == "" || d.Device == "disk") {
			out = append(out, d.Target.Dev)
		}
	}
	return out
}

// checkpointXML names a checkpoint of disk alone (a bitmap on it); the domain's other
// disks are listed with checkpoint='no', since libvirt otherwise adds every disk it can.
func checkpointXML(name, disk string, disks []string) (string, error) {
	cp := libvirtxml.DomainCheckpoint{Name: name, Description: "made by terraform-provider-libvirt (libvirt_volume_export, incremental)",
		Disks: &libvirtxml.DomainCheckpointDisks{}}
	for _, d := range disks {
		mode := "no"
		if d == disk {
			mode = "bitmap"
		}
		cp.Disks.Disks = append(cp.Disks.Disks, libvirtxml.DomainCheckpointDisk{Name: d, Checkpoint: mode})
	}
	return cp.Marshal()
}

// backupXML is a push-mode backup of disk alone into the qcow2 file target (which exists:
// REUSE_EXTERNAL), incremental since the checkpoint since ("" for a full copy).
func backupXML(disk, target, since string, disks []string) (string, error) {
	b := libvirtxml.DomainBackup{Incremental: since, Push: &libvirtxml.DomainBackupPush{Disks: &libvirtxml.DomainBackupPushDisks{}}}
	for _, d := range disks {
		pd := libvirtxml.DomainBackupPushDisk{Name: d, Backup: "no"}
		if d == disk {
			pd.Backup = "yes"
			pd.Driver = &libvirtxml.DomainBackupDiskDriver{Type: "qcow2"}
			pd.Target = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: target}}
		}
		b.Push.Disks.Disks = append(b.Push.Disks.Disks, pd)
	}
	return b.Marshal()
}

// Checkpoints lists the names of the checkpoints of domain (a name or UUID) that start
// with prefix, oldest first. A domain that is gone is ErrNotFound.
func (c *Client) Checkpoints(ctx context.Context, domain, prefix string) ([]string, error) {
	var names []string
	err := c.Read(ctx, "list checkpoints of domain "+domain, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, domain)
		if err != nil {
			return err
		}
		cps, _, err := l.DomainListAllCheckpoints(d, 1, 0)
		if err != nil {
			return err
		}
		for _, cp := range cps {
			if strings.HasPrefix(cp.Name, prefix) {
				names = append(names, cp.Name)
			}
		}
		return nil
	})
	// libvirt lists in no order; the names end in the link number, which orders them.
	slices.SortFunc(names, func(a, b string) int { return cmpLink(a, b) })
	return names, err
}

// cmpLink orders names that differ in a trailing number by that number.
func cmpLink(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// HasCheckpoint reports whether domain has the checkpoint name; a domain that is gone has
// none (false, nil). Any other failure is an error: it must not start a new chain.
func (c *Client) HasCheckpoint(ctx context.Context, domain, name string) (bool, error) {
	err := c.Read(ctx, "look up checkpoint "+name+" of domain "+domain, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, domain)
		if err != nil {
			return err
		}
		_, err = l.DomainCheckpointLookupByName(d, name, 0)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// DeleteCheckpoints removes the named checkpoints of domain (a name or UUID), newest
// first, with their bitmaps. A domain or checkpoint that is gone is nothing to do. When
// libvirt refuses to touch the bitmaps (a domain that is not running, on some versions),
// the metadata alone is removed and the returned note says that the bitmap stays in the
// image (harmless: QEMU keeps it disabled; `qemu-img bitmap --remove` drops it).
func (c *Client) DeleteCheckpoints(ctx context.Context, domain string, names []string) (notes []string, err error) {
	todo := slices.Clone(names)
	slices.SortFunc(todo, func(a, b string) int { return -cmpLink(a, b) })
	err = c.Write(ctx, "delete checkpoints of domain "+domain, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, domain)
		if errors.Is(classify("", "", err), ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, name := range todo {
			cp, err := l.DomainCheckpointLookupByName(d, name, 0)
			if errors.Is(classify("", "", err), ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			err = l.DomainCheckpointDelete(cp, 0)
			if HasCode(classify("", "", err), golibvirt.ErrOperationInvalid) || HasCode(classify("", "", err), golibvirt.ErrOperationUnsupported) {
				notes = append(notes, fmt.Sprintf("checkpoint %s of domain %s: only its metadata was removed (%v); its bitmap stays in the disk image", name, d.Name, err))
				err = l.DomainCheckpointDelete(cp, golibvirt.DomainCheckpointDeleteMetadataOnly)
			}
			if err != nil && !errors.Is(classify("", "", err), ErrNotFound) {
				return fmt.Errorf("delete checkpoint %s of domain %s: %w", name, d.Name, err)
			}
		}
		return nil
	})
	return notes, err
}

// DropCheckpoint deletes the checkpoint name of domain that marks a copy point no file
// holds (the copy was made, but writing its file failed afterwards), so that the next
// incremental copy starts from the last good one. It runs on a deadline of its own: the
// caller's may be what ran out. A checkpoint or domain that is gone is nothing to do.
func (c *Client) DropCheckpoint(ctx context.Context, domain, name string) error {
	return c.dropCheckpoint(ctx, domain, name)
}
