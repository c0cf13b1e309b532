package libvirt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt/rpc"
	"github.com/kvmforge/terraform-provider-libvirt/internal/poll"
)

// BackupOptions say what BackupVolume copies.
type BackupOptions struct {
	// Checkpoint is the checkpoint the backup makes (the copy point of this export).
	Checkpoint string
	// Since is the checkpoint of the previous export: only the blocks written after it are
	// copied. "" copies the whole disk. A Since the domain no longer has gives a full copy
	// and BackupResult.Restarted says why.
	Since string
	// Quiesce freezes the guest's filesystems (FreezeDuring) for the instant the backup
	// job starts, which is its copy point; an agent that does not answer fails the copy
	// before anything is made.
	Quiesce bool
	// Open gives the writer for the copy once it is known whether the copy is incremental
	// (an incremental one must name its backing file; a full one must not).
	Open func(incremental bool) (io.Writer, error)
	Log  func(msg string, fields map[string]any)
	// Poll is how often the job is asked whether it has ended (default 200 ms).
	Poll time.Duration
}

// BackupResult says what BackupVolume did.
type BackupResult struct {
	DomainUUID, DomainName, Disk string
	Incremental                  bool   // only the blocks since opts.Since
	Quiesced                     bool   // the guest's filesystems were frozen at the copy point
	Restarted                    string // why a full copy was taken although Since was asked
	TempVolume                   string // <pool>/<name>, removed again
	Job                          time.Duration
	Bytes                        uint64 // bytes of the qcow2 written
}

// BackupVolume copies a qcow2 volume that a running (or paused) domain has open as a disk
// through libvirt's backup API in push mode: QEMU writes the disk as it is at this instant
// (crash-consistent) into a temporary qcow2 volume in the same pool, and a checkpoint is
// made at that same instant for the next, incremental copy. An incremental copy holds
// only the clusters written since Since; all others are unallocated, so that a backing
// file shows through them. The temporary volume is downloaded into Open's writer and
// removed, also on failure and cancel; a job still running then is aborted, and the
// checkpoint of a copy that did not complete is deleted again.
func (c *Client) BackupVolume(ctx context.Context, ref VolumeRef, opts BackupOptions) (res *BackupResult, err error) {
	logf := logOrNop(opts.Log)
	var info *VolumeInfo
	var user *VolumeUser
	var disks []string
	var compat string
	err = c.Read(ctx, "look up volume "+ref.String(), func(l *golibvirt.Libvirt) error {
		v, i, u, err := volumeAndUser(l, ref)
		if err != nil {
			return err
		}
		info, user = i, u
		if compat, err = volumeCompat(l, v); err != nil || user == nil {
			return err
		}
		doc, err := l.DomainGetXMLDesc(user.Domain, 0)
		if err != nil {
			return err
		}
		var x libvirtxml.Domain
		if err := x.Unmarshal(doc); err != nil {
			return fmt.Errorf("parse live XML of domain %s: %w", user.Domain.Name, err)
		}
		disks = backupDisks(&x)
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case exportFormat(info.Format) != "qcow2":
		return nil, fmt.Errorf("volume %s/%s is %s: incremental exports need a qcow2 volume (its checkpoints are bitmaps in the image)",
			info.Pool, info.Name, exportFormat(info.Format))
	case compat == "" || compat == "0.10":
		// libvirt names the level of a version 3 image ("1.1") whenever it has read the
		// file; a version 2 one shows none after a pool refresh, "0.10" before.
		return nil, fmt.Errorf("volume %s/%s is a version 2 qcow2 image (compat 0.10), which cannot hold the dirty bitmaps of checkpoints: "+
			"upgrade it while no domain runs on it (`qemu-img amend -f qcow2 -o compat=1.1 %s`)", info.Pool, info.Name, info.Path)
	case user == nil:
		return nil, fmt.Errorf("volume %s/%s is not a disk of a running domain: incremental exports copy through the domain "+
			"(libvirt's backup API needs a running or paused domain); start it, or set incremental = false", info.Pool, info.Name)
	}
	dom := user.Domain
	if opts.Quiesce {
		if err := c.requireAgent(ctx, dom); err != nil {
			return nil, err
		}
	}
	// One backup job per domain at a time (libvirt refuses a second): two exports of its
	// disks in one apply (two chains, a week closing as the next starts) take turns.
	release, err := lockBackups(ctx, UUIDString(dom))
	if err != nil {
		return nil, err
	}
	defer release()
	res = &BackupResult{DomainUUID: UUIDString(dom), DomainName: dom.Name, Disk: user.Target, Incremental: opts.Since != ""}
	if res.Incremental {
		ok, err := c.HasCheckpoint(ctx, res.DomainUUID, opts.Since)
		if err != nil {
			return nil, err
		}
		if !ok {
			res.Incremental = false
			res.Restarted = fmt.Sprintf("domain %s has no checkpoint %s (the previous export's) any more", dom.Name, opts.Since)
		}
	}
	w, err := opts.Open(res.Incremental)
	if err != nil {
		return nil, err
	}
	tmp := VolumeSpec{Pool: info.Pool, Name: tempVolumeName(info.Name, "qcow2"), Format: "qcow2", Capacity: info.Capacity}
	res.TempVolume = tmp.String()
	jobRunning := false
	defer func() {
		if jobRunning {
			return // removeTemp under a job that still writes would fail anyway; the error says what to do
		}
		if derr := c.removeTemp(ctx, tmp); derr != nil && err == nil {
			err = derr
		}
	}()
	vol, path, err := c.createTemp(ctx, tmp)
	if err != nil {
		return nil, err
	}
	since := ""
	if res.Incremental {
		since = opts.Since
	}
	bx, err := backupXML(user.Target, path, since, disks)
	if err != nil {
		return nil, err
	}
	cx, err := checkpointXML(opts.Checkpoint, user.Target, disks)
	if err != nil {
		return nil, err
	}
	logf("starting a backup job", map[string]any{"domain": dom.Name, "disk": user.Target, "checkpoint": opts.Checkpoint,
		"incremental_since": since, "temporary_volume": tmp.String()})
	start := time.Now()
	begin := func() error {
		return c.Write(ctx, fmt.Sprintf("begin backup of disk %s of domain %s", user.Target, dom.Name), func(l *golibvirt.Libvirt) error {
			return l.DomainBackupBegin(dom, bx, golibvirt.OptString{cx}, golibvirt.DomainBackupBeginReuseExternal)
		})
	}
	if opts.Quiesce {
		// The copy point is the job's start: QEMU copies what is overwritten after it
		// before the write lands, so the frozen instant is the begin call alone.
		err = c.FreezeDuring(ctx, dom, logf, begin)
		res.Quiesced = err == nil
	} else {
		err = begin()
	}
	if err == nil {
		err = c.waitBackup(ctx, dom, opts.Poll)
	}
	res.Job = time.Since(start)
	if err != nil {
		// The checkpoint marks a copy point that no file holds: the next export must not
		// start from it. The job may still run (a lost answer, a cancel).
		if aerr := c.abortBackup(ctx, dom); aerr != nil {
			jobRunning = true
			return nil, fmt.Errorf("%w; and the backup job could not be aborted (%v): abort it with `virsh domjobabort %s`, "+
				"then remove `virsh vol-delete --pool %s %s` and `virsh checkpoint-delete %s %s`", err, aerr, dom.Name, tmp.Pool, tmp.Name, dom.Name, opts.Checkpoint)
		}
		if derr := c.dropCheckpoint(ctx, res.DomainUUID, opts.Checkpoint); derr != nil {
			err = fmt.Errorf("%w; and its checkpoint could not be removed (remove it with `virsh checkpoint-delete %s %s`): %v", err, dom.Name, opts.Checkpoint, derr)
		}
		return nil, err
	}
	logf("backup job completed; downloading the temporary volume", map[string]any{"temporary_volume": tmp.String(), "job_ms": res.Job.Milliseconds()})
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fw := &failWriter{w: w, cancel: cancel}
	err = fw.cause(c.DownloadVolume(dctx, VolumeRef{Key: vol.Key}, fw))
	res.Bytes = fw.count()
	if err != nil {
		// The checkpoint exists but the file does not: drop it, so the next try is full
		// from the previous checkpoint again.
		if derr := c.dropCheckpoint(ctx, res.DomainUUID, opts.Checkpoint); derr != nil {
			err = fmt.Errorf("%w; and checkpoint %s could not be removed: %v", err, opts.Checkpoint, derr)
		}
		return nil, err
	}
	return res, nil
}

// backupTurns holds, per domain UUID, a channel of one slot: whoever holds it runs the
// domain's backup job. Process-wide: every resource of an apply runs in one provider
// process.
var backupTurns sync.Map

// lockBackups waits (bounded by ctx) for the domain's turn and returns its release.
func lockBackups(ctx context.Context, uuid string) (func(), error) {
	v, _ := backupTurns.LoadOrStore(uuid, make(chan struct{}, 1))
	turn, _ := v.(chan struct{})
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for another backup of the domain to end: %w", ctx.Err())
	}
}

// dropCheckpoint deletes the checkpoint of a copy that failed, on a deadline of its own
// (the caller's may be what ran out).
func (c *Client) dropCheckpoint(ctx context.Context, domain, name string) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rpc.SettleBudget)
	defer cancel()
	_, err := c.DeleteCheckpoints(dctx, domain, []string{name})
	return err
}

// volumeCompat is the qcow2 compatibility level libvirt reports for v ("0.10" is version
// 2, "1.1" version 3; "" for other formats).
func volumeCompat(l *golibvirt.Libvirt, v golibvirt.StorageVol) (string, error) {
	doc, err := l.StorageVolGetXMLDesc(v, 0)
	if err != nil {
		return "", err
	}
	var x libvirtxml.StorageVolume
	if err := x.Unmarshal(doc); err != nil {
		return "", fmt.Errorf("parse volume XML of %s: %w", v.Name, err)
	}
	if x.Target == nil {
		return "", nil
	}
	return x.Target.Compat, nil
}

// waitBackup waits for the domain's backup job to end and says how it ended: libvirt
// keeps the statistics of the last completed job, which carry its error message.
func (c *Client) waitBackup(ctx context.Context, dom golibvirt.Domain, every time.Duration) error {
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	var ended int32
	var params []golibvirt.TypedParam
	err := poll.Until(ctx, poll.Options{Every: every, Max: 2 * time.Second, Factor: 1.5}, func(ctx context.Context) (bool, error) {
		var typ int32
		err := c.Read(ctx, "backup job of domain "+dom.Name, func(l *golibvirt.Libvirt) (err error) {
			if typ, _, err = l.DomainGetJobStats(dom, 0); err != nil || golibvirt.DomainJobType(typ) != golibvirt.DomainJobNone {
				return err
			}
			ended, params, err = l.DomainGetJobStats(dom, golibvirt.DomainJobStatsCompleted)
			return err
		})
		if err != nil {
			return false, err
		}
		return golibvirt.DomainJobType(typ) == golibvirt.DomainJobNone, nil
	})
	if err != nil {
		return err
	}
	if golibvirt.DomainJobType(ended) == golibvirt.DomainJobCompleted {
		return nil
	}
	msg := "no reason given"
	for _, p := range params {
		if s, ok := p.Value.I.(string); ok && p.Field == golibvirt.DomainJobErrmsg {
			msg = s
		}
	}
	return fmt.Errorf("the backup job of domain %s failed (job state %d): %s", dom.Name, ended, msg)
}

// abortBackup ends a backup job that may still run, on a deadline of its own (the
// caller's may be what ran out), and waits until libvirt reports no job.
func (c *Client) abortBackup(ctx context.Context, dom golibvirt.Domain) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rpc.SettleBudget)
	defer cancel()
	return poll.Until(actx, poll.Options{Every: 250 * time.Millisecond, Max: rpc.SettleWaitMax}, func(actx context.Context) (bool, error) {
		var typ int32
		err := c.Write(actx, "abort backup job of domain "+dom.Name, func(l *golibvirt.Libvirt) (err error) {
			if typ, _, err = l.DomainGetJobStats(dom, 0); err != nil || golibvirt.DomainJobType(typ) == golibvirt.DomainJobNone {
				return err
			}
			return l.DomainAbortJob(dom)
		})
		switch {
		case errors.Is(err, ErrNotFound):
			return true, nil // the domain is gone, and its job with it
		case err != nil && (IsTransport(err) || HasCode(err, golibvirt.ErrOperationInvalid)):
			return false, nil // try again: the connection, or "no job" racing the abort
		case err != nil:
			return false, err
		}
		return golibvirt.DomainJobType(typ) == golibvirt.DomainJobNone, nil
	})
}
