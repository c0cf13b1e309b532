package libvirt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
)

// quiescedCreate is what a quiesced create sent: the snapshot's name and XML, the
// domain's live XML just before, and the overlay files it asked for.
type quiescedCreate struct {
	name, doc, before string
	overlays          []string
}

// quiescedCreateFailed is the outcome of a quiesced create that libvirt answered with an
// error after it was sent. libvirt freezes, snapshots and thaws in that one call, and a
// thaw that fails fails the whole call after the snapshot was taken: the overlays exist
// and the guest writes into them. libvirt 9.0 then also drops the snapshot's metadata
// (qemuSnapshotCreateXML removes the object of a create that failed), which would leave
// the domain on overlays that no snapshot owns and no delete ever commits. So:
//   - a snapshot of that name now (the name was free just before) is this create's;
//   - none, with the domain's disks on this create's overlays: taken, its metadata lost;
//     it is defined again (REDEFINE, from the XML sent and the domain before), so it is a
//     snapshot like any other (deleted by a block commit);
//   - neither: nothing was taken, libvirt's refusal in the user's words.
//
// A snapshot taken was taken frozen (consistent). The guest is thawed once more: when that
// works the snapshot is the result; when it does not, the snapshot is returned with the
// error (the provider keeps it in state, tainted, so the next apply replaces it).
func (c *Client) quiescedCreateFailed(ctx context.Context, d Domain, q quiescedCreate, err error) (*Snapshot, error) {
	s, rerr := c.readSnapshotSettled(ctx, d, q.name)
	if errors.Is(rerr, ErrNotFound) {
		s, rerr = c.redefineLostSnapshot(ctx, d, q)
	}
	switch {
	case rerr != nil:
		return nil, fmt.Errorf("%w; whether snapshot %s was taken could not be checked either (%v): check with `virsh snapshot-list %s` "+
			"and `virsh domblklist %s` (disks on overlays named <image>.tfsnap-%s mean it was)", err, q.name, rerr, d.Name, d.Name, q.name)
	case s == nil:
		return nil, quiesceError(d.Name, err) // not taken: the usual refusal
	}
	if terr := c.thawNow(ctx, d, nil); terr != nil { // no log here: the snapshot API takes none
		return s, fmt.Errorf("%w; snapshot %s was taken all the same (with the filesystems frozen) and is kept: "+
			"once the guest is thawed, the next apply replaces it; %w", err, q.name, terr)
	}
	return s, nil
}

// redefineLostSnapshot defines snapshot q again when the domain's disks are on q's
// overlays and libvirt has no snapshot of that name; nil (and no error) when they are not
// (nothing was taken).
func (c *Client) redefineLostSnapshot(ctx context.Context, d Domain, q quiescedCreate) (*Snapshot, error) {
	var s *Snapshot
	op := fmt.Sprintf("define again snapshot %s of domain %s (taken, its metadata dropped by libvirt)", q.name, d.Name)
	err := c.Write(ctx, op, func(l *golibvirt.Libvirt) error {
		live, err := l.DomainGetXMLDesc(d, 0)
		if err != nil {
			return err
		}
		on, err := onOverlays(live, q.overlays)
		if err != nil || !on {
			return err
		}
		doc, err := redefineXML(q)
		if err != nil {
			return err
		}
		if _, err := l.DomainSnapshotCreateXML(d, doc, uint32(golibvirt.DomainSnapshotCreateRedefine|golibvirt.DomainSnapshotCreateCurrent)); err != nil {
			return err
		}
		s, err = readSnapshotOn(l, d, q.name)
		return err
	})
	return s, err
}

// onOverlays reports whether a disk of the domain whose live XML is domXML is on one of
// overlays.
func onOverlays(domXML string, overlays []string) (bool, error) {
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(domXML); err != nil {
		return false, fmt.Errorf("parse domain XML: %w", err)
	}
	if dom.Devices == nil {
		return false, nil
	}
	for _, disk := range dom.Devices.Disks {
		if disk.Source != nil && disk.Source.File != nil && slices.Contains(overlays, disk.Source.File.File) {
			return true, nil
		}
	}
	return false, nil
}

// redefineXML is the <domainsnapshot> that defines q again as libvirt would have kept it:
// the disk-only snapshot of a running domain, with the domain as it was before.
func redefineXML(q quiescedCreate) (string, error) {
	var x libvirtxml.DomainSnapshot
	if err := x.Unmarshal(q.doc); err != nil {
		return "", fmt.Errorf("parse snapshot XML: %w", err)
	}
	dom, err := domainxml.UnmarshalDomain(q.before)
	if err != nil {
		return "", fmt.Errorf("parse domain XML: %w", err)
	}
	// A redefine needs the creation time libvirt would have stamped (it refuses one
	// without): now, within the second of the create.
	x.State, x.Domain, x.CreationTime = "disk-snapshot", dom, strconv.FormatInt(time.Now().Unix(), 10)
	return x.Marshal()
}
