package libvirt_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// exportTemps lists the temporary export volumes of source in the test pool.
func exportTemps(t *testing.T, c *libvirt.Client, source string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names []string
	err := c.Read(ctx, "list volumes", func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(acctest.Pool())
		if err != nil {
			return err
		}
		if err := l.StoragePoolRefresh(p, 0); err != nil {
			return err
		}
		vols, _, err := l.StoragePoolListAllVolumes(p, 1, 0)
		if err != nil {
			return err
		}
		names = names[:0]
		for _, v := range vols {
			if strings.HasPrefix(v.Name, source) && libvirt.IsExportTemp(v.Name) {
				names = append(names, v.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// failAfter fails every write once n bytes went through, or calls cancel instead.
type failAfter struct {
	n      int
	seen   int
	cancel context.CancelFunc
}

var errDiskFull = errors.New("test: no space left on device")

func (f *failAfter) Write(b []byte) (int, error) {
	if f.seen >= f.n {
		if f.cancel != nil {
			f.cancel()
			return len(b), nil // the cancellation, not this writer, must end it
		}
		return 0, errDiskFull
	}
	f.seen += len(b)
	return len(b), nil
}

// TestAccExportVolume converts a qcow2 volume on the host (raw, through a temporary volume),
// downloads a qcow2 one as it is, and proves that a writer failing mid-stream and a
// context cancelled mid-stream both leave no temporary volume behind.
func TestAccExportVolume(t *testing.T) {
	acctest.RequireAcc(t)
	c := acctest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img := acctest.GuestImage(t)
	want, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	name := acctest.RandomName("exp") + ".qcow2"
	src, err := libvirt.OpenSource(ctx, "", img)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.UploadVolume(ctx, libvirt.VolumeSpec{Pool: acctest.Pool(), Name: name, Format: "qcow2"}, src, libvirt.UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteVolume(context.Background(), libvirt.VolumeRef{Key: info.Key}) })
	ref := libvirt.VolumeRef{Pool: acctest.Pool(), Name: name}

	// Same format, no backing file: the bytes as they are.
	var buf bytes.Buffer
	res, err := c.ExportVolume(ctx, ref, "qcow2", &buf, libvirt.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != libvirt.ExportDirect || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("qcow2 export: method %s, %d bytes, equal to the image %v", res.Method, buf.Len(), bytes.Equal(buf.Bytes(), want))
	}

	// raw: converted on the host; the same bytes qemu-img convert makes here.
	ref0 := filepath.Join(t.TempDir(), "ref.raw")
	if out, err := exec.Command("qemu-img", "convert", "-O", "raw", img, ref0).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	wantRaw, err := os.ReadFile(ref0)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	res, err = c.ExportVolume(ctx, ref, "raw", &buf, libvirt.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != libvirt.ExportConvert || sha256.Sum256(buf.Bytes()) != sha256.Sum256(wantRaw) {
		t.Fatalf("raw export: method %s, %d bytes (want %d), same as qemu-img convert %v", res.Method, buf.Len(), len(wantRaw), bytes.Equal(buf.Bytes(), wantRaw))
	}
	if left := exportTemps(t, c, name); len(left) > 0 {
		t.Fatalf("temporary volumes left after a good export: %v", left)
	}

	// The local disk fills up mid-stream: the writer's error, and nothing left on the host.
	_, err = c.ExportVolume(ctx, ref, "raw", &failAfter{n: 1 << 20}, libvirt.ExportOptions{})
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("export into a failing writer: want its error, got %v", err)
	}
	if left := exportTemps(t, c, name); len(left) > 0 {
		t.Fatalf("temporary volumes left after a failed export: %v", left)
	}

	// Cancelled mid-stream (Ctrl-C, a timeout).
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	_, err = c.ExportVolume(cctx, ref, "raw", &failAfter{n: 1 << 20, cancel: ccancel}, libvirt.ExportOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled export: want context.Canceled, got %v", err)
	}
	if left := exportTemps(t, c, name); len(left) > 0 {
		t.Fatalf("temporary volumes left after a cancelled export: %v", left)
	}
}

// TestAccExportVolume_runningDomain exports the disk of a running domain (a block copy
// into a temporary volume: qemu-img cannot open an image QEMU holds) to raw and qcow2, and
// cancels one export mid-stream: the copy job ends, the temporary volume goes, the domain
// keeps running on its own disk. The guest need not boot for this: QEMU holds the image
// from its start, so it runs from a disk with nothing to boot.
func TestAccExportVolume_runningDomain(t *testing.T) {
	acctest.RequireAcc(t)
	c := acctest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	name := acctest.RandomName("exp")
	const size = 32 << 20
	info, err := c.CreateVolume(ctx, libvirt.VolumeSpec{Pool: acctest.Pool(), Name: name + ".qcow2", Format: "qcow2", Capacity: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteVolume(context.Background(), libvirt.VolumeRef{Key: info.Key}) })
	xml := diskGuestXML(t, "qemu", name, info.Path, 64, false)
	err = c.Write(ctx, "define and start "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainDefineXML(xml)
		if err != nil {
			return err
		}
		return l.DomainCreate(d)
	})
	t.Cleanup(func() {
		_ = c.Write(context.Background(), "remove "+name, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(name)
			if err != nil {
				return err
			}
			_ = l.DomainDestroy(d)
			return l.DomainUndefine(d)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := libvirt.VolumeRef{Key: info.Key}
	for _, format := range []string{"raw", "qcow2"} {
		var buf bytes.Buffer
		res, err := c.ExportVolume(ctx, ref, format, &buf, libvirt.ExportOptions{})
		if err != nil {
			t.Fatalf("%s export of a running domain's disk: %v", format, err)
		}
		if res.Method != libvirt.ExportBlockCopy || res.Domain != name {
			t.Fatalf("%s export: method %s domain %q, want a block copy through %s", format, res.Method, res.Domain, name)
		}
		if format == "raw" && buf.Len() != size {
			t.Fatalf("raw export is %d bytes, want %d", buf.Len(), size)
		}
		if format == "qcow2" && !bytes.HasPrefix(buf.Bytes(), []byte("QFI\xfb")) {
			t.Fatalf("qcow2 export does not start with the qcow2 magic")
		}
	}
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	_, err = c.ExportVolume(cctx, ref, "raw", &failAfter{n: 1 << 20, cancel: ccancel}, libvirt.ExportOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled export: want context.Canceled, got %v", err)
	}
	if left := exportTemps(t, c, name); len(left) > 0 {
		t.Fatalf("temporary volumes left: %v", left)
	}
	var state int32
	err = c.Read(ctx, "state of "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		state, _, err = l.DomainGetState(d, 0)
		if err != nil {
			return err
		}
		// No block job may be left on the disk.
		found, _, _, _, _, err := l.DomainGetBlockJobInfo(d, "vda", 0)
		if err == nil && found != 0 {
			return errors.New("a block job is still running on vda")
		}
		return err
	})
	if err != nil || state != int32(golibvirt.DomainRunning) {
		t.Fatalf("domain after the exports: state %d, %v; want running, no block job", state, err)
	}
}
