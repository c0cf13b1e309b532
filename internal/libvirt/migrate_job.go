package libvirt

import (
	"context"
	"errors"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
)

// MigrateProgress is one look at a running migration job (virDomainGetJobStats).
type MigrateProgress struct {
	Elapsed time.Duration // since the job started
	// Data* count everything the job moves, in bytes: memory and, with a storage copy, disks.
	DataTotal, DataProcessed, DataRemaining uint64
	MemoryRemaining, DiskRemaining          uint64
	// MemoryBps and DiskBps are libvirt's current transfer rates, bytes per second; Rate is
	// their sum, or when libvirt reports none (it gives no disk_bps for the storage copy
	// here) the rate measured between two looks at the job.
	MemoryBps, DiskBps, Rate uint64
	// Phase is "" while the guest runs on the source, "paused" once on_timeout suspended it,
	// "postcopy" once it runs on the destination and the rest of its memory follows.
	Phase string
}

// String is the progress as a log line says it.
func (p MigrateProgress) String() string {
	s := fmt.Sprintf("%s of %s left (memory %s, disks %s) at %s/s, %s in",
		mib(p.DataRemaining), mib(p.DataTotal), mib(p.MemoryRemaining), mib(p.DiskRemaining),
		mib(p.Rate), p.Elapsed.Round(time.Second))
	if p.Phase != "" {
		s += " (" + p.Phase + ")"
	}
	return s
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// jobProgress reads libvirt's job statistics; active is false when no job runs (not yet,
// or no more).
func jobProgress(typ int32, params []golibvirt.TypedParam) (p MigrateProgress, active bool) {
	active = typ == int32(golibvirt.DomainJobBounded) || typ == int32(golibvirt.DomainJobUnbounded)
	for _, tp := range params {
		v, ok := tp.Value.I.(uint64)
		if !ok {
			continue
		}
		switch tp.Field {
		case golibvirt.DomainJobTimeElapsed:
			p.Elapsed = time.Duration(v) * time.Millisecond
		case golibvirt.DomainJobDataTotal:
			p.DataTotal = v
		case golibvirt.DomainJobDataProcessed:
			p.DataProcessed = v
		case golibvirt.DomainJobDataRemaining:
			p.DataRemaining = v
		case golibvirt.DomainJobMemoryRemaining:
			p.MemoryRemaining = v
		case golibvirt.DomainJobDiskRemaining:
			p.DiskRemaining = v
		case golibvirt.DomainJobMemoryBps:
			p.MemoryBps = v
		case golibvirt.DomainJobDiskBps:
			p.DiskBps = v
		}
	}
	return p, active
}

// migrationJob is what watchMigration does to a running migration: an interface so that
// the timeout logic is tested without a daemon (migrate_test.go).
type migrationJob interface {
	progress(ctx context.Context) (MigrateProgress, bool, error)
	abort(ctx context.Context) error
	suspend(ctx context.Context) error
	startPostCopy(ctx context.Context) error
}

// libvirtMigrationJob is the migration job of the domain uuid on c's daemon, reached on
// pool connections while the perform call holds its own.
type libvirtMigrationJob struct {
	c    *Client
	uuid string
}

func (j *libvirtMigrationJob) progress(ctx context.Context) (p MigrateProgress, active bool, err error) {
	err = j.c.Read(ctx, "read the migration job of domain "+j.uuid, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, j.uuid)
		if err != nil {
			return err
		}
		typ, params, err := l.DomainGetJobStats(d, 0)
		p, active = jobProgress(typ, params)
		return err
	})
	return p, active, err
}

func (j *libvirtMigrationJob) abort(ctx context.Context) error {
	return j.c.onDomain(ctx, "abort the migration of", j.uuid, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainAbortJob(d)
	})
}

func (j *libvirtMigrationJob) suspend(ctx context.Context) error {
	return j.c.SuspendDomain(ctx, j.uuid)
}

func (j *libvirtMigrationJob) startPostCopy(ctx context.Context) error {
	return j.c.onDomain(ctx, "switch to post-copy the migration of", j.uuid, func(l *golibvirt.Libvirt, d Domain) error {
		return l.DomainMigrateStartPostCopy(d, 0)
	})
}

// watchOutcome is what watchMigration did besides waiting.
type watchOutcome struct {
	timedOut bool   // the timeout passed and its action took effect
	action   string // the on_timeout action tried
	paused   bool   // the source domain was suspended by it
}

// watchMigration waits for the perform call (done) while it looks at the job every
// o.Poll: it reports progress every o.ProgressEvery, and once o.Timeout has passed it
// acts once as o.OnTimeout says. When ctx ends first, the job is aborted (the domain stays
// on the source) and its end waited for, up to migrateAbortWait: a migration is never
// left running behind the caller's back.
func watchMigration(ctx context.Context, job migrationJob, done <-chan error, o MigrateOptions) (watchOutcome, error) {
	every, poll := o.ProgressEvery, o.Poll
	if every <= 0 {
		every = 5 * time.Second
	}
	if poll <= 0 {
		poll = time.Second
	}
	var out watchOutcome
	var actionErr error
	var prev *MigrateProgress // the last look at the job, for the rate
	start := time.Now()
	lastReport := start
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil && actionErr != nil {
				// The job failed on its own: the timeout's action did not take (often because
				// the job was already failing, e.g. post-copy refused at the start).
				out.timedOut = false
				err = fmt.Errorf("%w (and the %s on timeout failed: %w)", err, out.action, actionErr)
			}
			return out, err
		case <-ctx.Done():
			return out, abortAndWait(ctx, job, done)
		case now := <-tick.C:
			if o.Progress != nil {
				if p, active, err := job.progress(ctx); err == nil && active {
					p.Rate = p.MemoryBps + p.DiskBps
					if p.Rate == 0 && prev != nil && p.Elapsed > prev.Elapsed && p.DataProcessed >= prev.DataProcessed {
						p.Rate = uint64(float64(p.DataProcessed-prev.DataProcessed) / (p.Elapsed - prev.Elapsed).Seconds())
					}
					prev = &p
					switch {
					case out.action == OnTimeoutPostcopy && actionErr == nil:
						p.Phase = "postcopy"
					case out.paused:
						p.Phase = "paused"
					}
					if now.Sub(lastReport) >= every {
						o.Progress(p)
						lastReport = now
					}
				}
			}
			if o.Timeout > 0 && !out.timedOut && now.Sub(start) >= o.Timeout {
				out.timedOut = true
				out.action = o.OnTimeout
				if out.action == "" {
					out.action = OnTimeoutAbort
				}
				// An action that fails because the job has just ended is harmless: done says
				// how it ended. Otherwise the job goes on, and its end still decides.
				switch out.action {
				case OnTimeoutAbort:
					actionErr = job.abort(ctx)
				case OnTimeoutPause:
					if actionErr = job.suspend(ctx); actionErr == nil {
						out.paused = true
					}
				case OnTimeoutPostcopy:
					actionErr = job.startPostCopy(ctx)
				}
			}
		}
	}
}

// abortAndWait aborts the job because the caller gave up, and waits for it to end.
func abortAndWait(ctx context.Context, job migrationJob, done <-chan error) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), migrateAbortWait)
	defer cancel()
	aerr := job.abort(actx)
	select {
	case err := <-done:
		if err == nil {
			return nil // it completed before the abort took: the domain moved
		}
		return fmt.Errorf("%w: the migration was aborted (%v)", ctx.Err(), err)
	case <-actx.Done():
		msg := fmt.Sprintf("the migration job did not end within %s of its abort; it may still run", migrateAbortWait)
		if aerr != nil {
			return fmt.Errorf("%w: %s (abort: %w)", ctx.Err(), msg, aerr)
		}
		return fmt.Errorf("%w: %s", ctx.Err(), msg)
	}
}

// verifyMigrated checks a migration libvirt called done: the domain is on dest with the
// same UUID and name, persistent, in the state it had (a domain that on_timeout = "pause"
// suspended is resumed there), and gone from c.
func (c *Client) verifyMigrated(ctx context.Context, dest *Client, src *migrationSource, pausedByUs bool) error {
	id := UUIDString(src.dom)
	var name, state string
	var persistent int32
	err := dest.readSettled(ctx, "look up the migrated domain "+id, func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		s, _, err := l.DomainGetState(d, 0)
		if err != nil {
			return err
		}
		name, state = d.Name, DomainStateName(s)
		persistent, err = l.DomainIsPersistent(d)
		return err
	})
	if err != nil {
		return fmt.Errorf("libvirt reported the migration done, but the domain (uuid %s) cannot be read on the destination: %w", id, err)
	}
	if state == "paused" && pausedByUs {
		if err := dest.ResumeDomain(ctx, id); err != nil {
			return fmt.Errorf("the domain moved while suspended (on_timeout = \"pause\") and could not be resumed on the destination: %w", err)
		}
		state = "running"
	}
	want := "running"
	switch {
	case !src.active:
		want = "shutoff"
	case src.paused:
		want = "paused"
	}
	var problems []string
	if name != src.dom.Name {
		problems = append(problems, fmt.Sprintf("it is named %q there", name))
	}
	if persistent != 1 {
		problems = append(problems, "it is not persistent there")
	}
	if state != want {
		problems = append(problems, fmt.Sprintf("it is %s there, not %s", state, want))
	}
	serr := c.readSettled(ctx, "look up the migrated domain "+id+" on the source", func(l *golibvirt.Libvirt) error {
		_, err := LookupDomainOn(l, id)
		return err
	})
	switch {
	case serr == nil:
		problems = append(problems, "it is still defined on the source")
	case !errors.Is(serr, ErrNotFound):
		problems = append(problems, fmt.Sprintf("the source could not be asked whether it is gone there (%v)", serr))
	}
	if len(problems) > 0 {
		return fmt.Errorf("libvirt reported the migration done, but %s", joinProblems(problems))
	}
	return nil
}

func joinProblems(p []string) string {
	switch len(p) {
	case 1:
		return p[0]
	default:
		s := p[0]
		for _, x := range p[1 : len(p)-1] {
			s += ", " + x
		}
		return s + " and " + p[len(p)-1]
	}
}

// whereIs says which side holds the domain uuid now ("source", "destination", "both",
// "neither", "unknown") and its state on the source when it is there.
func (c *Client) whereIs(ctx context.Context, dest *Client, id string) (where, sourceState string) {
	look := func(cl *Client, side string) (found bool, state string, err error) {
		err = cl.readSettled(ctx, "look up domain "+id+" on the "+side, func(l *golibvirt.Libvirt) error {
			d, err := LookupDomainOn(l, id)
			if err != nil {
				return err
			}
			s, _, err := l.DomainGetState(d, 0)
			state = DomainStateName(s)
			return err
		})
		if errors.Is(err, ErrNotFound) {
			return false, "", nil
		}
		return err == nil, state, err
	}
	onSrc, sourceState, serr := look(c, "source")
	onDest, _, derr := look(dest, "destination")
	switch {
	case serr != nil || derr != nil:
		if onSrc {
			return "source", sourceState // the destination did not answer; the source holds it at least
		}
		return "unknown", ""
	case onSrc && onDest:
		return "both", sourceState
	case onSrc:
		return "source", sourceState
	case onDest:
		return "destination", ""
	}
	return "neither", ""
}

// pathsWithoutVolume are those of paths that no volume of c's daemon has: what a storage
// copy will create there.
func (c *Client) pathsWithoutVolume(ctx context.Context, paths []string) ([]string, error) {
	var out []string
	err := c.Read(ctx, "look up volumes by path", func(l *golibvirt.Libvirt) error {
		out = out[:0]
		for _, p := range paths {
			_, err := l.StorageVolLookupByPath(p)
			switch {
			case err == nil:
			case isNotFound(err):
				out = append(out, p)
			default:
				return err
			}
		}
		return nil
	})
	return out, err
}

// removeVolumesAt deletes the volumes at paths on c's daemon, if there are any: what a
// failed storage copy left there. It reports what it removed and what it could not.
func (c *Client) removeVolumesAt(ctx context.Context, paths []string) (removed, left []string) {
	for _, p := range paths {
		gone := false
		err := c.Write(ctx, "delete volume "+p, func(l *golibvirt.Libvirt) error {
			v, err := l.StorageVolLookupByPath(p)
			if err != nil {
				if isNotFound(err) {
					gone = true
					return nil
				}
				return err
			}
			return l.StorageVolDelete(v, 0)
		})
		switch {
		case err != nil:
			left = append(left, fmt.Sprintf("%s (%v)", p, err))
		case !gone:
			removed = append(removed, p)
		}
	}
	return removed, left
}
