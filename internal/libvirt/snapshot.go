package libvirt

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// Snapshot is what libvirt records about one domain snapshot.
type Snapshot struct {
	DomainUUID   string
	DomainName   string
	Name         string
	Description  string
	CreationTime time.Time
	State        string // the domain's state when taken: running, paused, shutoff
	Memory       bool   // the guest's RAM is part of it (memory snapshot='internal')
	// Overlays are the overlay files of an external disk-only snapshot (a quiesced one of
	// a running domain); none for an internal snapshot.
	Overlays []string
}

// SnapshotSpec is a snapshot to take.
type SnapshotSpec struct {
	Name        string
	Description string
	// Memory: an internal snapshot of a running domain with its RAM. Otherwise an
	// internal, disk-only snapshot of a shut-off domain: libvirt 9.0 can revert and
	// delete internal snapshots, not external disk-only ones.
	Memory bool
	// Quiesce freezes the guest's filesystems through its agent while the snapshot is
	// taken. Of a running domain that is an external disk-only snapshot (qcow2 overlays
	// next to the disks, snapshot_external.go); of a shut-off domain the usual internal
	// disk-only one (nothing runs that could write). Not with Memory.
	Quiesce bool
}

// SnapshotXML is the <domainsnapshot> libvirt is asked to create for s.
func (s SnapshotSpec) SnapshotXML() (string, error) {
	x := libvirtxml.DomainSnapshot{Name: s.Name, Description: s.Description}
	if s.Memory {
		x.Memory = &libvirtxml.DomainSnapshotMemory{Snapshot: "internal"}
	}
	return x.Marshal()
}

// snapshotFromXML builds a Snapshot from libvirt's snapshot XML.
func snapshotFromXML(d Domain, text string) (*Snapshot, error) {
	var x libvirtxml.DomainSnapshot
	if err := x.Unmarshal(text); err != nil {
		return nil, fmt.Errorf("parse snapshot XML: %w", err)
	}
	s := &Snapshot{
		DomainUUID:  UUIDString(d),
		DomainName:  d.Name,
		Name:        x.Name,
		Description: x.Description,
		State:       x.State,
		Memory:      x.Memory != nil && x.Memory.Snapshot == "internal",
		Overlays:    snapshotOverlays(&x),
	}
	if x.CreationTime != "" {
		secs, err := strconv.ParseInt(x.CreationTime, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: creationTime %q: %w", x.Name, x.CreationTime, err)
		}
		s.CreationTime = time.Unix(secs, 0).UTC()
	}
	return s, nil
}

func readSnapshotOn(l *golibvirt.Libvirt, d Domain, name string) (*Snapshot, error) {
	snap, err := l.DomainSnapshotLookupByName(d, name, 0)
	if err != nil {
		return nil, err
	}
	text, err := l.DomainSnapshotGetXMLDesc(snap, 0)
	if err != nil {
		return nil, err
	}
	return snapshotFromXML(d, text)
}

// GetSnapshot reads snapshot name of domain domainID (UUID or name). A missing domain or
// a missing snapshot is ErrNotFound.
func (c *Client) GetSnapshot(ctx context.Context, domainID, name string) (*Snapshot, error) {
	var s *Snapshot
	err := c.Read(ctx, fmt.Sprintf("read snapshot %s of domain %s", name, domainID), func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, domainID)
		if err != nil {
			return err
		}
		s, err = readSnapshotOn(l, d, name)
		return err
	})
	return s, err
}

// ErrSnapshotState is returned when the domain is not in the state the kind of snapshot
// needs (memory: running or paused; disk-only: shut off).
var ErrSnapshotState = errors.New("domain state does not allow this kind of snapshot")

// snapshotAttempts bounds how often CreateSnapshot sends the create again after an
// answer lost with a snapshot found not taken.
const snapshotAttempts = 3

// CreateSnapshot takes an atomic internal snapshot of domain domainID and reads it back.
// A memory snapshot needs a running (or paused) domain; a disk-only one a shut-off
// domain. All of the domain's writable disks must be qcow2.
//
// Taking a snapshot is not idempotent: sent again after it landed, it is refused ("already
// exists"). So the name is checked free just before the create, on the same connection,
// and when the create's answer is lost (a daemon restart, a dropped link) the snapshot is
// looked up once the daemon answers again (readSettled): there, it is the one this call
// took; not there, the create is sent again. A snapshot of that name that was there
// before is never taken for this one: the create is not sent then. A snapshot returned
// with an error was taken all the same (a quiesced one whose guest did not thaw after:
// quiescedCreateFailed).
func (c *Client) CreateSnapshot(ctx context.Context, domainID string, spec SnapshotSpec) (*Snapshot, error) {
	doc, err := spec.SnapshotXML()
	if err != nil {
		return nil, err
	}
	var d Domain
	var state int32
	var live string
	err = c.Read(ctx, "read domain "+domainID, func(l *golibvirt.Libvirt) error {
		var err error
		if d, err = LookupDomainOn(l, domainID); err != nil {
			return err
		}
		if state, _, err = l.DomainGetState(d, 0); err != nil || !spec.Quiesce {
			return err
		}
		live, err = l.DomainGetXMLDesc(d, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	flags := golibvirt.DomainSnapshotCreateAtomic
	var overlays []string
	switch name := DomainStateName(state); {
	case spec.Quiesce && spec.Memory:
		return nil, fmt.Errorf("%w: quiesce makes a disk-only snapshot: set memory = false", ErrSnapshotState)
	case spec.Quiesce && name == "running":
		if doc, overlays, err = externalSnapshotXML(spec, live); err != nil {
			return nil, err
		}
		flags = externalSnapshotFlags
	case spec.Quiesce && name != "shutoff":
		return nil, fmt.Errorf("%w: a quiesced snapshot needs the guest agent of a running domain (or a shut-off domain, "+
			"which needs no freeze), domain %s is %s: resume it", ErrSnapshotState, d.Name, name)
	case spec.Memory && name != "running" && name != "paused":
		return nil, fmt.Errorf("%w: a memory snapshot includes the guest's RAM and needs a running domain, domain %s is %s: start it or set memory = false", ErrSnapshotState, d.Name, name)
	case !spec.Memory && !spec.Quiesce && name != "shutoff":
		return nil, fmt.Errorf("%w: a disk-only snapshot is an internal qcow2 snapshot of a shut-off domain (libvirt 9.0 cannot revert external disk-only snapshots), domain %s is %s: stop it first, set memory = true, or "+
			"quiesce = true for an external snapshot of the running domain", ErrSnapshotState, d.Name, name)
	}
	op := fmt.Sprintf("create snapshot %s of domain %s", spec.Name, d.Name)
	for attempt := 1; ; attempt++ {
		sent, taken := false, false
		err = c.Write(ctx, op, func(l *golibvirt.Libvirt) error {
			_, lerr := l.DomainSnapshotLookupByName(d, spec.Name, 0)
			if lerr == nil {
				taken = true
				return nil
			}
			if !errors.Is(classify(op, "", lerr), ErrNotFound) {
				return lerr
			}
			sent = true
			_, err := l.DomainSnapshotCreateXML(d, doc, uint32(flags))
			return err
		})
		switch {
		case taken:
			return nil, fmt.Errorf("%s: domain %s has a snapshot named %s already (made outside this configuration?): "+
				"import it (terraform import <address> %s/%s) or choose another name", op, d.Name, spec.Name, UUIDString(d), spec.Name)
		case err == nil:
			return c.readSnapshotSettled(ctx, d, spec.Name)
		case !IsTransport(err) || !sent:
			// libvirt's answer, or a create never sent (nothing was taken).
			if flags&golibvirt.DomainSnapshotCreateQuiesce != 0 {
				if !sent {
					return nil, quiesceError(d.Name, err)
				}
				return c.quiescedCreateFailed(ctx, d, quiescedCreate{name: spec.Name, doc: doc, before: live, overlays: overlays}, err)
			}
			if spec.Memory && strings.Contains(err.Error(), "pflash") {
				// Measured on libvirt 9.0: "internal snapshots of a VM with pflash based
				// firmware are not supported". Say what the user can do instead.
				return nil, fmt.Errorf("%w (domain %s boots UEFI firmware, whose nvram QEMU keeps outside the qcow2 images: shut it off and take a disk-only snapshot with memory = false)", err, d.Name)
			}
			return nil, err
		}
		// The answer was lost: the name was free just before, so a snapshot of that name
		// now is the one this call took.
		s, rerr := c.readSnapshotSettled(ctx, d, spec.Name)
		switch {
		case rerr == nil:
			return s, nil
		case !errors.Is(rerr, ErrNotFound):
			return nil, fmt.Errorf("%w; whether the snapshot was taken could not be checked either (%v): check with "+
				"`virsh snapshot-list %s`, then delete it or import it (terraform import <address> %s/%s)",
				err, rerr, d.Name, UUIDString(d), spec.Name)
		case attempt == snapshotAttempts || ctx.Err() != nil:
			return nil, fmt.Errorf("%w (gave up after %d attempts; no snapshot %s was taken)", err, attempt, spec.Name)
		}
		// Not taken: send it again.
	}
}

// readSnapshotSettled reads a snapshot just taken, waiting for the daemon to answer again
// when the connection fails.
func (c *Client) readSnapshotSettled(ctx context.Context, d Domain, name string) (*Snapshot, error) {
	var s *Snapshot
	err := c.readSettled(ctx, fmt.Sprintf("read snapshot %s of domain %s", name, d.Name), func(l *golibvirt.Libvirt) error {
		var err error
		s, err = readSnapshotOn(l, d, name)
		return err
	})
	return s, err
}

// DeleteSnapshot deletes snapshot name of domain domainID (its metadata and, for an
// internal snapshot, its data in the qcow2 images; an external one is committed back
// into the images below its overlays, which libvirt then removes). A missing domain or
// snapshot is ErrNotFound.
func (c *Client) DeleteSnapshot(ctx context.Context, domainID, name string) error {
	var overlays []string
	var pools map[string]bool
	err := c.Write(ctx, fmt.Sprintf("delete snapshot %s of domain %s", name, domainID), func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, domainID)
		if err != nil {
			return err
		}
		s, err := readSnapshotOn(l, d, name)
		if err != nil {
			return err
		}
		overlays = s.Overlays
		pools = overlayPools(l, overlays)
		snap, err := l.DomainSnapshotLookupByName(d, name, 0)
		if err != nil {
			return err
		}
		return l.DomainSnapshotDelete(snap, 0)
	})
	if err != nil || len(overlays) == 0 {
		return err
	}
	return removeOverlays(ctx, c, pools, overlays)
}

// RevertSnapshot reverts domain domainID to snapshot name: the disks, and for a memory
// snapshot the RAM, come back as recorded, and so does the run state (a memory snapshot
// resumes running, a shut-off one leaves the domain shut off).
func (c *Client) RevertSnapshot(ctx context.Context, domainID, name string) error {
	return c.Write(ctx, fmt.Sprintf("revert domain %s to snapshot %s", domainID, name), func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, domainID)
		if err != nil {
			return err
		}
		snap, err := l.DomainSnapshotLookupByName(d, name, 0)
		if err != nil {
			return err
		}
		if err := refuseExternalRevert(l, d, snap); err != nil {
			return err
		}
		return l.DomainRevertToSnapshot(snap, 0)
	})
}
