package libvirt

import (
	"context"
	"fmt"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// blockJobPoll is how often BlockCopy looks at its job while the copy catches up.
var blockJobPoll = 200 * time.Millisecond

// BlockCopyJob is one block copy: disk Disk of the running (or paused) domain Domain is
// mirrored into Dest, an image that exists already.
type BlockCopyJob struct {
	Domain  Domain // the running domain (a handle: name and UUID)
	Disk    string // its target, e.g. vda
	Dest    string // path of the image to copy into
	Format  string // Dest's format, e.g. qcow2
	Shallow bool   // only the top image: Dest must then be an overlay on the same backing file

	// DestName names Dest in messages and in a *BlockJobRunningError (default: the path),
	// e.g. "temporary volume default/web.tfexport-1a2b.raw"; Cleanup is the command that
	// removes it by hand once the job is gone ("" leaves that to the caller).
	DestName, Cleanup string
	// Refused, when set, is added to libvirt's refusal to start the copy: what to do instead.
	Refused string
	// Poll is how often the job is looked at while it catches up (default blockJobPoll).
	Poll time.Duration
	// AtCopyPoint, when set, wraps the instant the copy point is taken: it is given the
	// end of the ready job (without pivot) and must call it once, e.g. inside a freeze of
	// the guest's filesystems (FreezeDuring). When it returns without calling it, the job
	// is ended anyway and its error is returned: no copy.
	AtCopyPoint func(endJob func() error) error
}

// BlockCopy copies a disk of a running domain into job.Dest through QEMU's mirror
// (virDomainBlockCopy with REUSE_EXT): the guest keeps running; once the copy has caught
// up (libvirt calls the mirror ready), the job is ended without pivot, which leaves Dest a
// point-in-time, crash-consistent copy of the disk as it was at that moment, and the
// guest on its own disk. The job is transient (libvirt does not persist it), so a
// persistent domain may run it.
//
// QEMU runs one block job per disk. Block copies of one disk made by this process — a
// clone and an export of the same source in one apply, say — take turns under one lock
// per (daemon, domain UUID, disk); a job someone else runs on the disk is waited for
// (libvirt refuses ours with "block copy active" meanwhile).
//
// Once the copy may have started (a start whose answer was lost may have started it too)
// the job is always ended, also on failure and when ctx runs out (endBlockJob, on its own
// deadline). A job that cannot be ended may still write into Dest: the error is then a
// *BlockJobRunningError, and the caller must keep Dest. A copy whose job was not ended by
// the first abort (a lost answer, a later try) is not trusted: an error too.
func (c *Client) BlockCopy(ctx context.Context, job BlockCopyJob) error {
	dest := job.DestName
	if dest == "" {
		dest = job.Dest
	}
	name := job.Domain.Name
	op := fmt.Sprintf("block copy of disk %s of domain %s into %s", job.Disk, name, dest)
	destXML, err := copyDestXML(job.Dest, job.Format)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	flags := golibvirt.DomainBlockCopyReuseExt | golibvirt.DomainBlockCopyTransientJob
	if job.Shallow {
		flags |= golibvirt.DomainBlockCopyShallow
	}
	unlock, err := c.lockDisk(ctx, job.Domain, job.Disk)
	if err != nil {
		return fmt.Errorf("%s: waiting for another block copy of the disk by this provider to end: %w", op, err)
	}
	defer unlock()

	var last error // of the start
	err = poll.Until(ctx, poll.Options{Every: time.Second}, func(ctx context.Context) (bool, error) {
		last = c.Write(ctx, op, func(l *golibvirt.Libvirt) error {
			return l.DomainBlockCopy(job.Domain, job.Disk, destXML, nil, flags)
		})
		if HasCode(last, golibvirt.ErrBlockCopyActive) {
			return false, nil // someone else's job on the disk: wait for it to end
		}
		return last == nil, last
	})
	switch {
	case HasCode(last, golibvirt.ErrBlockCopyActive):
		return fmt.Errorf("%w (waited for another block job on disk %s of domain %s to end)", last, job.Disk, name)
	case err != nil && !IsTransport(err):
		// Refused: nothing was started.
		if job.Refused != "" {
			return fmt.Errorf("%w; %s", err, job.Refused)
		}
		return err
	}

	// From here a job may run, and it is ended whatever happens.
	end := func() (first, err error) {
		first, err = c.endBlockJob(ctx, UUIDString(job.Domain), job.Disk, op)
		if err != nil {
			err = &BlockJobRunningError{Domain: name, Disk: job.Disk, Dest: dest, Cleanup: job.Cleanup, Err: err}
		}
		return first, err
	}
	if err == nil {
		err = c.waitCopyReady(ctx, job, op)
	}
	if err != nil {
		if _, eerr := end(); eerr != nil {
			return fmt.Errorf("%w; %w", err, eerr)
		}
		return err
	}
	// Ending a ready copy without pivot leaves the copy as of this moment — when libvirt
	// accepts that first abort. A job that ended otherwise may have ended for another
	// reason too: its copy is not trusted.
	first, err := job.endAtCopyPoint(end)
	if err != nil {
		return err
	}
	if first != nil {
		return fmt.Errorf("end the %s: %w (the job was ended on a later try, so the copy is not used: try again)", op, first)
	}
	return nil
}

// endAtCopyPoint ends the ready job through AtCopyPoint when set. An AtCopyPoint that
// failed before ending the job (a freeze refused) leaves the job to end here: the copy is
// then not used, and the error is AtCopyPoint's.
func (job BlockCopyJob) endAtCopyPoint(end func() (first, err error)) (first, err error) {
	if job.AtCopyPoint == nil {
		return end()
	}
	called := false
	var endErr error
	err = job.AtCopyPoint(func() error {
		called = true
		first, endErr = end()
		return endErr
	})
	if called {
		// err wraps endErr (a *BlockJobRunningError: the caller keeps Dest) and any thaw
		// failure after it: both must reach the user.
		if err == nil {
			err = endErr
		}
		return first, err
	}
	if _, eerr := end(); eerr != nil {
		return nil, fmt.Errorf("%w; %w", err, eerr)
	}
	return nil, err
}

// copyDestXML is the <disk> a block copy writes into: a file image of the given format.
func copyDestXML(path, format string) (string, error) {
	return (&libvirtxml.DomainDisk{
		Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: path}},
		Driver: &libvirtxml.DomainDiskDriver{Type: format},
	}).Marshal()
}

// waitCopyReady polls the copy job until its mirror is ready (in sync).
func (c *Client) waitCopyReady(ctx context.Context, job BlockCopyJob, op string) error {
	every := job.Poll
	if every <= 0 {
		every = blockJobPoll
	}
	waited := true // false once the check itself failed
	err := poll.Until(ctx, poll.Options{Every: every}, func(ctx context.Context) (bool, error) {
		var found int32
		var cur, end uint64
		err := c.Read(ctx, "watch the "+op, func(l *golibvirt.Libvirt) error {
			var err error
			found, _, _, cur, end, err = l.DomainGetBlockJobInfo(job.Domain, job.Disk, 0)
			return err
		})
		switch {
		case err != nil:
			waited = false
			return false, err
		case found == 0:
			waited = false
			return false, fmt.Errorf("%s: the job ended before the copy was in sync (the domain may have stopped or the copy failed; see libvirtd's log)", op)
		}
		// libvirt reports cur < end until the mirror is ready.
		return end > 0 && cur == end, nil
	})
	if err != nil && waited {
		return fmt.Errorf("%s: %w", op, ctx.Err())
	}
	return err
}

var (
	diskLocksMu sync.Mutex
	diskLocks   = map[string]chan struct{}{}
)

// lockDisk takes the lock for block jobs on disk of domain d on this client's daemon, or
// fails when ctx ends first; it returns the release. Keyed by the domain's UUID: callers
// that know the domain by name and by UUID take the same lock.
func (c *Client) lockDisk(ctx context.Context, d Domain, disk string) (func(), error) {
	key := c.uri.String() + "|" + UUIDString(d) + "|" + disk
	diskLocksMu.Lock()
	l, ok := diskLocks[key]
	if !ok {
		l = make(chan struct{}, 1)
		diskLocks[key] = l
	}
	diskLocksMu.Unlock()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CopyDiskLive copies disk target of the running (or paused) domain domain (name or
// UUID) into dest, an existing image in format destFormat: a BlockCopy. shallow copies
// only the top image: dest must then be an overlay on the same backing file.
func (c *Client) CopyDiskLive(ctx context.Context, domain, target, dest, destFormat string, shallow bool) error {
	d, err := c.LookupDomain(ctx, domain)
	if err != nil {
		return err
	}
	return c.BlockCopy(ctx, BlockCopyJob{Domain: d, Disk: target, Dest: dest, Format: destFormat, Shallow: shallow})
}
