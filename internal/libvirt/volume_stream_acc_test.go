package libvirt_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// TestAccDownloadVolume_manyTimes downloads a small volume 120 times, two at a time, and
// wants every copy whole. Against libvirt 9.0 about one StorageVolDownload in a hundred
// ends early or wedges its connection; DownloadVolume must resume and never return
// short data.
func TestAccDownloadVolume_manyTimes(t *testing.T) {
	acctest.RequireAcc(t)
	c := acctest.Client(t)
	ctx := context.Background()
	vd := "#cloud-config\npackages: []\n"
	img, _, err := cloudinit.BuildISO(cloudinit.Seed{MetaData: "instance-id: i-dl\n", VendorData: &vd})
	if err != nil {
		t.Fatal(err)
	}
	name := acctest.RandomName("dl")
	info, err := c.UploadBytes(ctx, libvirt.VolumeSpec{Pool: acctest.Pool(), Name: name, Format: "raw"}, "test image", img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.DeleteVolume(context.Background(), libvirt.VolumeRef{Key: info.Key}); err != nil {
			t.Errorf("delete %s: %v", name, err)
		}
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	slow := 0
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				var buf bytes.Buffer
				dctx, cancel := context.WithTimeout(ctx, time.Minute)
				start := time.Now()
				err := c.DownloadVolume(dctx, libvirt.VolumeRef{Pool: acctest.Pool(), Name: name}, &buf)
				cancel()
				if err != nil || !bytes.Equal(buf.Bytes(), img) {
					t.Errorf("download %d/%d: %d of %d bytes, equal %v, err %v", g, i, buf.Len(), len(img), bytes.Equal(buf.Bytes(), img), err)
				}
				if time.Since(start) > 3*time.Second {
					mu.Lock()
					slow++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("120 downloads whole; %d of them had to resume", slow)
}
