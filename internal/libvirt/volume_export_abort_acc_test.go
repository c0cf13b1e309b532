package libvirt_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// bootExportGuest uploads the tiny guest image as a volume and boots a domain from it
// (vda); both are removed when the test ends. It returns the domain's name and the
// volume's key.
func bootExportGuest(t *testing.T, c *libvirt.Client) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := acctest.RandomName("expabort")
	src, err := libvirt.OpenSource(ctx, "", acctest.GuestImage(t))
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.UploadVolume(ctx, libvirt.VolumeSpec{Pool: acctest.Pool(), Name: name + ".qcow2", Format: "qcow2"}, src, libvirt.UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteVolume(context.Background(), libvirt.VolumeRef{Key: info.Key}) })
	xml := diskGuestXML(t, acctest.DefaultDomainType(), name, info.Path, 128, true)
	err = c.Write(ctx, "define and start "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainDefineXML(xml)
		if err != nil {
			return err
		}
		return l.DomainCreate(d)
	})
	t.Cleanup(func() {
		// Whatever a failed run left: the job, the temporary volumes, the domain.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "remove "+name, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(name)
			if err != nil {
				return err
			}
			_ = l.DomainBlockJobAbort(d, "vda", 0)
			_ = l.DomainDestroy(d)
			return l.DomainUndefine(d)
		})
		for _, v := range exportTemps(t, c, name) {
			_ = c.DeletePoolVolume(ctx, acctest.Pool(), v)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return name, info.Key
}

// blockJobOn reports whether libvirt shows a block job on vda of domain name (asked over
// the test's own connection, not the faulty one).
func blockJobOn(t *testing.T, c *libvirt.Client, name string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var found int32
	err := c.Read(ctx, "block job of "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		found, _, _, _, _, err = l.DomainGetBlockJobInfo(d, "vda", 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found != 0
}

// abortJobAtEnd ends whatever block job a failed subtest left on vda of domain name, and
// its temporary volumes, so that the next subtest does not wait for it.
func abortJobAtEnd(t *testing.T, c *libvirt.Client, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Write(ctx, "abort block job of "+name, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(name)
			if err != nil {
				return err
			}
			return l.DomainBlockJobAbort(d, "vda", 0)
		})
		for _, v := range exportTemps(t, c, name) {
			_ = c.DeletePoolVolume(ctx, acctest.Pool(), v)
		}
	})
}

// TestAccExportVolume_abortFails: the export of a running guest's disk (a block copy
// into a temporary volume) cannot end its copy job, because every abort is lost with its
// connection on the way to the daemon (the calls never arrive).
//
//   - The aborts get through after two losses: the export retries until the job is gone,
//     fails naming the job (the copy is not trusted), and removes the temporary volume.
//   - They never get through within the budget: the export fails naming the domain, the
//     disk and the temporary volume, and keeps that volume while the job still mirrors
//     into it; the commands the error gives then end the job and remove the volume.
//
// Before the fix the failed abort was swallowed and the temporary volume deleted while
// QEMU still mirrored into it.
func TestAccExportVolume_abortFails(t *testing.T) {
	acctest.RequireAcc(t)
	direct := acctest.Client(t)
	name, key := bootExportGuest(t, direct)
	proxy := acctest.StartCallProxy(t, "127.0.0.1:16509")
	c := newClient(t, libvirt.Config{URI: proxy.URI()})
	ref := libvirt.VolumeRef{Key: key}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("retried", func(t *testing.T) {
		abortJobAtEnd(t, direct, name)
		libvirt.SetBlockJobAbortBudget(t, time.Minute)
		cuts := proxy.CutCalls(acctest.ProcDomainBlockJobAbort, 2)
		before := proxy.Hits(acctest.ProcDomainBlockJobAbort)
		var buf bytes.Buffer
		_, err := c.ExportVolume(ctx, ref, "raw", &buf, libvirt.ExportOptions{})
		select {
		case <-cuts:
		default:
			t.Fatalf("no abort was cut: the test proved nothing (export: %v)", err)
		}
		t.Logf("export: %v", err)
		if err == nil || !strings.Contains(err.Error(), "block copy of disk vda of domain "+name) {
			t.Fatalf("want an error naming the block copy job of vda of %s, got %v", name, err)
		}
		if n := proxy.Hits(acctest.ProcDomainBlockJobAbort) - before; n < 3 {
			t.Errorf("%d aborts sent; want the two lost ones and one more", n)
		}
		if blockJobOn(t, direct, name) {
			t.Fatalf("a block job still runs on vda of %s after the export returned", name)
		}
		if left := exportTemps(t, direct, name); len(left) > 0 {
			t.Fatalf("temporary volumes left after the job was ended: %v", left)
		}
	})

	t.Run("never", func(t *testing.T) {
		abortJobAtEnd(t, direct, name)
		libvirt.SetBlockJobAbortBudget(t, 5*time.Second)
		proxy.CutCalls(acctest.ProcDomainBlockJobAbort, -1)
		t.Cleanup(func() { proxy.Allow(acctest.ProcDomainBlockJobAbort) })
		tmpName := name + ".tfexport-abortfails.raw"
		var buf bytes.Buffer
		_, err := c.ExportVolume(ctx, ref, "raw", &buf, libvirt.ExportOptions{TempName: tmpName})
		t.Logf("export: %v", err)
		if !blockJobOn(t, direct, name) {
			t.Fatalf("no block job on vda of %s: the aborts were to be lost", name)
		}
		if left := exportTemps(t, direct, name); !slices.Equal(left, []string{tmpName}) {
			t.Errorf("temporary volumes %v while the job still mirrors into %s: it must be kept", left, tmpName)
		}
		var running *libvirt.BlockJobRunningError
		if !errors.As(err, &running) {
			t.Fatalf("want a BlockJobRunningError, got %v", err)
		}
		for _, s := range []string{name, "vda", acctest.Pool() + "/" + tmpName,
			"virsh blockjob " + name + " vda --abort", "virsh vol-delete --pool " + acctest.Pool() + " " + tmpName} {
			if !strings.Contains(err.Error(), s) {
				t.Fatalf("the error does not say %q: %v", s, err)
			}
		}

		// What the error says to do by hand works.
		proxy.Allow(acctest.ProcDomainBlockJobAbort)
		for _, m := range regexp.MustCompile("`(virsh [^`]+)`").FindAllStringSubmatch(err.Error(), -1) {
			args := append([]string{"-c", acctest.URI()}, strings.Fields(m[1])[1:]...)
			if out, err := exec.Command("virsh", args...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", m[1], err, out)
			}
		}
		if blockJobOn(t, direct, name) {
			t.Fatalf("a block job still runs on vda of %s after `virsh blockjob --abort`", name)
		}
		if left := exportTemps(t, direct, name); len(left) > 0 {
			t.Fatalf("temporary volumes left after `virsh vol-delete`: %v", left)
		}
		// And the disk exports again.
		buf.Reset()
		if _, err := c.ExportVolume(ctx, ref, "raw", &buf, libvirt.ExportOptions{}); err != nil {
			t.Fatalf("export after the job was ended by hand: %v", err)
		}
	})
}
