package libvirt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// Migration of a domain from this client's daemon to another, peer to peer: the source
// daemon dials the destination itself (virDomainMigrateToURI3 with PEER2PEER, which is
// DomainMigratePerform3Params over RPC), because go-libvirt speaks only the RPC protocol
// and client-managed migration would need the Begin / Prepare / Perform / Finish /
// Confirm handshake by hand. The perform call blocks for the whole move; the job is
// watched meanwhile from another connection (migrate_job.go).

// What to do when a migration runs past MigrateOptions.Timeout.
const (
	OnTimeoutAbort    = "abort"    // cancel the job: the domain keeps running on the source
	OnTimeoutPause    = "pause"    // suspend the source so that memory stops changing and it converges
	OnTimeoutPostcopy = "postcopy" // switch to post-copy: the guest runs on the destination at once
)

// MigrateOptions say how a domain moves.
type MigrateOptions struct {
	// DestURI is the destination as the source daemon dials it (p2p); empty means the
	// destination client's own URI. They differ when the two daemons do not see the same
	// names, e.g. a socket path that exists only in the caller's mount namespace.
	DestURI string
	// MigrateURI is where the source's QEMU sends the guest's memory and disks (libvirt's
	// migrate_uri, e.g. tcp://10.0.0.2): empty lets the destination say (its qemu.conf
	// migration_host, else its hostname).
	MigrateURI string
	// CopyStorage is "none" (or empty: disks are on storage both hosts see) or "all" (the
	// disks are copied to the destination, into volumes libvirt creates there at the same
	// paths: the destination needs an active pool holding each path).
	CopyStorage string
	// BandwidthMiB caps the transfer in MiB/s (memory and disk copy); 0 is libvirt's default.
	BandwidthMiB uint64
	// Timeout, when set, bounds a live migration; then OnTimeout (default abort) acts.
	Timeout   time.Duration
	OnTimeout string
	// Progress, when set, hears of the job every ProgressEvery (default 5 s) while it runs.
	Progress      func(MigrateProgress)
	ProgressEvery time.Duration
	// Poll is how often the job is looked at (default 1 s).
	Poll time.Duration
}

// performOp names libvirt's perform call in its errors, which MigrateError prefixes with
// the domain and both hosts.
const performOp = "perform the migration"

// migrateAbortWait bounds how long a cancelled or aborted migration is waited for to end.
var migrateAbortWait = 2 * time.Minute

// MigrateDomain moves the domain named name (or by UUID) from this client's daemon to
// dest's. A running (or paused) domain migrates live, keeping its UUID, MACs and guest
// uptime: it is persistent on the destination and undefined on the source only once it
// runs there. A stopped domain moves its definition only (OFFLINE); its disks cannot be
// copied that way, so CopyStorage "all" with a stopped domain is refused before anything
// moves.
//
// On success the domain was found on dest with the same UUID, in the state it had here
// (running stays running), and gone from here. On failure the error is a *MigrateError
// saying which side holds the domain, with libvirt's message. Volumes that a failed
// storage copy created on the destination (paths that held no volume there before) are
// removed here, when the domain did not end up there: nothing half-copied is left behind.
// After a successful copy the source's volumes stay where they were: the caller removes
// them once it has what it needs (libvirt never deletes them).
func (c *Client) MigrateDomain(ctx context.Context, name string, dest *Client, opts MigrateOptions) error {
	destURI := opts.DestURI
	if destURI == "" {
		destURI = dest.URI().String()
	}
	op := fmt.Sprintf("migrate domain %s from %s to %s", name, c.URI(), destURI)
	src, err := c.readMigrationSource(ctx, name)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	flags, err := migrateFlags(src.active, src.paused, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	params := migrateParams(opts)
	var newOnDest []string // disk paths the storage copy will create volumes for on dest
	if flags&golibvirt.MigrateNonSharedDisk != 0 {
		if newOnDest, err = dest.pathsWithoutVolume(ctx, src.disks); err != nil {
			return fmt.Errorf("%s: look at the destination's volumes: %w", op, err)
		}
	}

	var outcome watchOutcome
	var perr error
	if src.active {
		job := &libvirtMigrationJob{c: c, uuid: UUIDString(src.dom)}
		done := make(chan error, 1)
		go func() {
			// On a connection of its own, outside the pool: it is held for the whole move, and
			// it must not be cut when ctx ends (the job is aborted instead, see watchMigration).
			done <- c.rpc.Dedicated(context.WithoutCancel(ctx), performOp, func(l *golibvirt.Libvirt) error {
				_, err := l.DomainMigratePerform3Params(src.dom, golibvirt.OptString{destURI}, params, nil, flags)
				return err
			})
		}()
		outcome, perr = watchMigration(ctx, job, done, opts)
	} else {
		perr = c.Write(ctx, performOp, func(l *golibvirt.Libvirt) error {
			_, err := l.DomainMigratePerform3Params(src.dom, golibvirt.OptString{destURI}, params, nil, flags)
			return err
		})
	}

	// What follows must be done also when ctx has ended (the caller gave up and the job was
	// aborted): on a context of its own.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), migrateAbortWait)
	defer cancel()
	if perr == nil {
		if perr = c.verifyMigrated(fctx, dest, src, outcome.paused); perr == nil {
			return nil
		}
	}
	merr := &MigrateError{Domain: src.dom.Name, From: c.URI().String(), To: destURI, Err: perr,
		TimedOut: outcome.timedOut, OnTimeout: outcome.action, Timeout: opts.Timeout}
	merr.Where, merr.SourceState = c.whereIs(fctx, dest, UUIDString(src.dom))
	if merr.Where == "source" && outcome.paused && merr.SourceState == "paused" {
		// Our own suspend (on_timeout = "pause") must not outlive the failed move.
		if err := c.ResumeDomain(fctx, UUIDString(src.dom)); err == nil {
			merr.SourceState = "running"
		}
	}
	if merr.Where == "source" || merr.Where == "neither" {
		merr.Removed, merr.Left = dest.removeVolumesAt(fctx, newOnDest)
	}
	return merr
}

// migrationSource is what MigrateDomain reads of the domain before it moves.
type migrationSource struct {
	dom            Domain
	active, paused bool
	disks          []string // paths of its file-backed, writable disks
}

func (c *Client) readMigrationSource(ctx context.Context, id string) (*migrationSource, error) {
	s := &migrationSource{}
	err := c.Read(ctx, "read domain "+id+" before migrating it", func(l *golibvirt.Libvirt) error {
		d, err := LookupDomainOn(l, id)
		if err != nil {
			return err
		}
		state, _, err := l.DomainGetState(d, 0)
		if err != nil {
			return err
		}
		doc, err := l.DomainGetXMLDesc(d, 0)
		if err != nil {
			return err
		}
		s.dom = d
		s.active = state == int32(golibvirt.DomainRunning) || state == int32(golibvirt.DomainPaused) ||
			state == int32(golibvirt.DomainBlocked)
		s.paused = state == int32(golibvirt.DomainPaused)
		s.disks, err = writableDiskPaths(doc)
		return err
	})
	return s, err
}

// writableDiskPaths are the paths of the file (and block) disks a storage copy moves:
// read-only disks and CD-ROMs are not copied by libvirt.
func writableDiskPaths(doc string) ([]string, error) {
	var d libvirtxml.Domain
	if err := d.Unmarshal(doc); err != nil {
		return nil, fmt.Errorf("parse domain XML: %w", err)
	}
	var out []string
	if d.Devices == nil {
		return nil, nil
	}
	for _, disk := range d.Devices.Disks {
		if disk.Source == nil || disk.ReadOnly != nil || disk.Device == "cdrom" || disk.Device == "floppy" {
			continue
		}
		switch {
		case disk.Source.File != nil && disk.Source.File.File != "":
			out = append(out, disk.Source.File.File)
		case disk.Source.Block != nil && disk.Source.Block.Dev != "":
			out = append(out, disk.Source.Block.Dev)
		}
	}
	return out, nil
}

// migrateFlags chooses libvirt's flags: always peer to peer, persistent on the destination
// and undefined on the source; LIVE for a domain that runs, OFFLINE for one that does not.
func migrateFlags(active, paused bool, o MigrateOptions) (golibvirt.DomainMigrateFlags, error) {
	copyAll := false
	switch o.CopyStorage {
	case "", "none":
	case "all":
		copyAll = true
	default:
		return 0, fmt.Errorf("copy_storage must be \"none\" or \"all\", not %q", o.CopyStorage)
	}
	switch o.OnTimeout {
	case "", OnTimeoutAbort, OnTimeoutPause, OnTimeoutPostcopy:
	default:
		return 0, fmt.Errorf("on_timeout must be %q, %q or %q, not %q", OnTimeoutAbort, OnTimeoutPause, OnTimeoutPostcopy, o.OnTimeout)
	}
	if o.Timeout < 0 {
		return 0, fmt.Errorf("the migration timeout must not be negative (%s)", o.Timeout)
	}
	flags := golibvirt.MigratePeer2peer | golibvirt.MigratePersistDest | golibvirt.MigrateUndefineSource
	if !active {
		if copyAll {
			return 0, errors.New("the domain is not running, and libvirt cannot copy the disks of a stopped domain " +
				"(an offline migration moves only its definition): start it first, or move its volumes apart and " +
				"migrate with copy_storage = \"none\"")
		}
		return flags | golibvirt.MigrateOffline, nil
	}
	flags |= golibvirt.MigrateLive
	if copyAll {
		flags |= golibvirt.MigrateNonSharedDisk
	}
	if paused {
		// Without it the destination would resume a domain the user had paused.
		flags |= golibvirt.MigratePaused
	}
	if o.Timeout > 0 && o.OnTimeout == OnTimeoutPostcopy {
		// Post-copy can only be switched to when the migration was started with it allowed.
		flags |= golibvirt.MigratePostcopy
	}
	return flags, nil
}

// migrateParams are the typed parameters of the perform call.
func migrateParams(o MigrateOptions) []golibvirt.TypedParam {
	var p []golibvirt.TypedParam
	if o.BandwidthMiB > 0 {
		p = append(p, golibvirt.TypedParam{Field: golibvirt.MigrateParamBandwidth, Value: *golibvirt.NewTypedParamValueUllong(o.BandwidthMiB)})
	}
	if o.MigrateURI != "" {
		p = append(p, golibvirt.TypedParam{Field: golibvirt.MigrateParamURI, Value: *golibvirt.NewTypedParamValueString(o.MigrateURI)})
	}
	return p
}

// MigrateError is a migration that did not complete, or whose result is not what it
// should be. Where says which side holds the domain afterwards.
type MigrateError struct {
	Domain    string
	From, To  string // the URIs
	Where     string // "source", "destination", "both", "neither" or "unknown" (a side did not answer)
	TimedOut  bool   // the migration ran past Timeout and OnTimeout's action took effect
	OnTimeout string
	Timeout   time.Duration
	// SourceState is the domain's state on the source when it is still there.
	SourceState string
	// Removed are volumes the failed storage copy had created on the destination and that
	// were removed; Left are those that could not be (with why).
	Removed, Left []string
	Err           error
}

func (e *MigrateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "migrate domain %s from %s to %s: ", e.Domain, e.From, e.To)
	if e.TimedOut {
		fmt.Fprintf(&b, "it did not finish within %s (on_timeout = %q): ", e.Timeout, e.OnTimeout)
	}
	b.WriteString(e.Err.Error())
	switch e.Where {
	case "source":
		fmt.Fprintf(&b, "; the domain is still on the source (%s)", orUnknown(e.SourceState))
		if e.SourceState == "running" {
			b.WriteString(" and keeps running there")
		}
		b.WriteString(", nothing of it is on the destination")
	case "destination":
		b.WriteString("; the domain is on the destination")
	case "both":
		fmt.Fprintf(&b, "; the domain is defined on both hosts (source: %s): check which one runs it before removing either",
			orUnknown(e.SourceState))
	case "neither":
		b.WriteString("; the domain is on neither host any more")
	default:
		b.WriteString("; where the domain is now could not be read: look on both hosts")
	}
	if len(e.Removed) > 0 {
		fmt.Fprintf(&b, "; removed what the storage copy had made on the destination: %s", strings.Join(e.Removed, ", "))
	}
	if len(e.Left) > 0 {
		fmt.Fprintf(&b, "; left on the destination, remove by hand: %s", strings.Join(e.Left, ", "))
	}
	return b.String()
}

func (e *MigrateError) Unwrap() error { return e.Err }

func orUnknown(s string) string {
	if s == "" {
		return "state unknown"
	}
	return s
}
