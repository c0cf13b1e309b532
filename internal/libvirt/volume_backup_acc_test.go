package libvirt_test

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// cancelWriter cancels the export's context at the first bytes and fails them, as a
// Ctrl-C in the middle of the download would.
type cancelWriter struct{ cancel context.CancelFunc }

func (w cancelWriter) Write([]byte) (int, error) { w.cancel(); return 0, context.Canceled }

// TestAccBackupVolume_cancelled: a backup whose download is cancelled leaves nothing: no
// temporary volume, no job, and not the checkpoint it made (no file holds that copy
// point); the previous checkpoint stays, so the next copy is incremental from it. The
// domain runs without an OS (SeaBIOS finds nothing to boot on the data disk): the backup
// API only needs QEMU running.
func TestAccBackupVolume_cancelled(t *testing.T) {
	acctest.RequireAcc(t)
	c := acctest.Client(t)
	name := acctest.RandomName("bkcancel")
	data := acctest.DataVolume(t, name+".qcow2", 64<<20, "1.1")
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", "write -P 0x5a 0 8M", data).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := c.Write(ctx, "define and start "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainDefineXML(diskGuestXML(t, acctest.DefaultDomainType(), name, data, 64, false))
		if err != nil {
			return err
		}
		return l.DomainCreate(d)
	})
	t.Cleanup(func() { acctest.RemoveDomain(t, name) })
	if err != nil {
		t.Fatal(err)
	}
	ref := libvirt.VolumeRef{Key: data}
	var full int
	first, err := c.BackupVolume(ctx, ref, libvirt.BackupOptions{Checkpoint: "tfexport-test-0",
		Open: func(bool) (io.Writer, error) { return countWriter{&full}, nil }})
	if err != nil || first.Incremental || full == 0 {
		t.Fatalf("full backup: %+v, %d bytes, %v", first, full, err)
	}

	cctx, stop := context.WithCancel(ctx)
	defer stop()
	_, err = c.BackupVolume(cctx, ref, libvirt.BackupOptions{Checkpoint: "tfexport-test-1", Since: "tfexport-test-0",
		Open: func(incremental bool) (io.Writer, error) {
			if !incremental {
				t.Error("the second backup is not incremental")
			}
			return cancelWriter{stop}, nil
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backup: %v, want context.Canceled", err)
	}
	if left := exportTemps(t, c, name); len(left) > 0 {
		t.Errorf("temporary volumes left: %v", left)
	}
	cps, err := c.Checkpoints(ctx, name, "tfexport-test-")
	if err != nil || len(cps) != 1 || cps[0] != "tfexport-test-0" {
		t.Errorf("checkpoints after the cancel: %v (%v), want only tfexport-test-0", cps, err)
	}
	var again int
	next, err := c.BackupVolume(ctx, ref, libvirt.BackupOptions{Checkpoint: "tfexport-test-1", Since: "tfexport-test-0",
		Open: func(bool) (io.Writer, error) { return countWriter{&again}, nil }})
	if err != nil || !next.Incremental || again >= full {
		t.Fatalf("incremental after the cancel: %+v, %d bytes (full %d), %v", next, again, full, err)
	}
	if _, err := c.DeleteCheckpoints(ctx, name, []string{"tfexport-test-0", "tfexport-test-1"}); err != nil {
		t.Fatal(err)
	}
	if cps, err := c.Checkpoints(ctx, name, "tfexport-test-"); err != nil || len(cps) != 0 {
		t.Fatalf("checkpoints after delete: %v (%v)", cps, err)
	}
}

// TestAccBackupVolume_cancelledInJob: a backup cancelled while libvirt's job still copies
// (the cancel comes once the domain has a job; 512 MiB of data keep it busy well past
// that) has the job aborted, and leaves no temporary volume and no checkpoint; a backup
// after it is a full copy that works. Like TestAccBackupVolume_cancelled, no OS boots.
func TestAccBackupVolume_cancelledInJob(t *testing.T) {
	acctest.RequireAcc(t)
	c := acctest.Client(t)
	name := acctest.RandomName("bkjob")
	data := acctest.DataVolume(t, name+".qcow2", 768<<20, "1.1")
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", "write -P 0x5a 0 512M", data).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var dom golibvirt.Domain
	err := c.Write(ctx, "define and start "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainDefineXML(diskGuestXML(t, acctest.DefaultDomainType(), name, data, 64, false))
		if err != nil {
			return err
		}
		dom = d
		return l.DomainCreate(d)
	})
	t.Cleanup(func() { acctest.RemoveDomain(t, name) })
	if err != nil {
		t.Fatal(err)
	}
	// jobRunning: the domain has a job now.
	jobRunning := func() bool {
		var typ int32
		_ = c.Read(ctx, "job of "+name, func(l *golibvirt.Libvirt) (err error) {
			typ, _, err = l.DomainGetJobStats(dom, 0)
			return err
		})
		return golibvirt.DomainJobType(typ) != golibvirt.DomainJobNone
	}
	ref := libvirt.VolumeRef{Key: data}
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	seen := make(chan bool, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && jctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
			if jobRunning() {
				seen <- true
				stop()
				return
			}
		}
		seen <- false
	}()
	var wrote int
	_, err = c.BackupVolume(jctx, ref, libvirt.BackupOptions{Checkpoint: "tfexport-job-0",
		Open: func(bool) (io.Writer, error) { return countWriter{&wrote}, nil }})
	stop()
	if !<-seen {
		t.Fatalf("the backup ended (%v, %d bytes) before its job was seen running: the cancel did not come during the job", err, wrote)
	}
	if !errors.Is(err, context.Canceled) || wrote != 0 {
		t.Fatalf("backup cancelled in its job: %v, %d bytes written, want context.Canceled and nothing written", err, wrote)
	}
	if jobRunning() {
		t.Error("the backup job still runs after the cancel")
	}
	if left := exportTemps(t, c, name); len(left) > 0 {
		t.Errorf("temporary volumes left: %v", left)
	}
	if cps, err := c.Checkpoints(ctx, name, "tfexport-job-"); err != nil || len(cps) != 0 {
		t.Errorf("checkpoints after the cancel: %v (%v), want none", cps, err)
	}
	var full int
	res, err := c.BackupVolume(ctx, ref, libvirt.BackupOptions{Checkpoint: "tfexport-job-0",
		Open: func(bool) (io.Writer, error) { return countWriter{&full}, nil }})
	if err != nil || res.Incremental || full < 512<<20 {
		t.Fatalf("backup after the cancel: %+v, %d bytes, %v (want a full copy of the 512 MiB written)", res, full, err)
	}
	if _, err := c.DeleteCheckpoints(ctx, name, []string{"tfexport-job-0"}); err != nil {
		t.Fatal(err)
	}
}

type countWriter struct{ n *int }

func (w countWriter) Write(b []byte) (int, error) { *w.n += len(b); return len(b), nil }
