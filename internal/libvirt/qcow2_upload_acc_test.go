package libvirt_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// TestAccUploadVolume_refusesExternalDataFile: a qcow2 image whose header names an
// external data file (qemu-img create -o data_file=...) would have QEMU open a host file
// of the image's choosing; the upload is refused before any volume is made, naming the
// source and the way out.
func TestAccUploadVolume_refusesExternalDataFile(t *testing.T) {
	acctest.RequireAcc(t)
	c := acctest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	img := filepath.Join("..", "qcow2", "testdata", "datafile.qcow2.head")
	src, err := libvirt.OpenSource(ctx, "", img)
	if err != nil {
		t.Fatal(err)
	}
	name := acctest.RandomName("datafile") + ".qcow2"
	info, err := c.UploadVolume(ctx, libvirt.VolumeSpec{Pool: acctest.Pool(), Name: name, Format: "qcow2"}, src, libvirt.UploadOptions{})
	if err == nil {
		_ = c.DeleteVolume(context.Background(), libvirt.VolumeRef{Key: info.Key})
		t.Fatalf("an image with an external data file was uploaded into %s", info.Path)
	}
	if !errors.Is(err, qcow2.ErrUnsafe) || !strings.Contains(err.Error(), img) || !strings.Contains(err.Error(), "qemu-img convert") {
		t.Fatalf("err = %v, want ErrUnsafe naming %s and qemu-img convert", err, img)
	}
	if _, err := c.VolumeInfo(ctx, libvirt.VolumeRef{Pool: acctest.Pool(), Name: name}); !errors.Is(err, libvirt.ErrNotFound) {
		t.Fatalf("volume %s after the refused upload: %v, want not found", name, err)
	}
}
