package provider_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// Growing volumes in place, and how volumes behave under load and faults.

func growConfig(name string, capacity int64) string {
	return acctest.ProviderBlock("") + volumeHCL("disk", name, attr("capacity_bytes", capacity))
}

func TestAccVolume_growInPlace(t *testing.T) {
	name := acctest.RandomName("vol")
	var id string
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config:           growConfig(name, 1<<20),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("libvirt_volume.disk", "capacity_bytes", strconv.Itoa(1<<20)),
					resource.TestCheckResourceAttr("libvirt_volume.disk", "format", "qcow2"),
					func(s *terraform.State) error {
						id = s.RootModule().Resources["libvirt_volume.disk"].Primary.ID
						return nil
					},
				),
			},
			importStep("libvirt_volume.disk", acctest.Pool()+"/"+name, volumeImportIgnore...),
			{
				Config:           growConfig(name, 3<<20),
				ConfigPlanChecks: acctest.Does("libvirt_volume.disk", acctest.Update),
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						if got := s.RootModule().Resources["libvirt_volume.disk"].Primary.ID; got != id {
							return fmt.Errorf("id changed from %s to %s: the volume was replaced, not grown", id, got)
						}
						return nil
					},
					acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
						if v.Capacity != 3<<20 || v.Key != id {
							return fmt.Errorf("libvirt says key %s capacity %d, want %s and %d", v.Key, v.Capacity, id, 3<<20)
						}
						return nil
					}),
				),
			},
			{
				Config:      growConfig(name, 2<<20),
				PlanOnly:    true,
				ExpectError: acctest.Wrapped(`Volume cannot shrink.*is 3145728 bytes; capacity_bytes = 2097152 would shrink it.*Set capacity_bytes to 3145728 or more`),
			},
		},
	})
}

// TestAccVolume_growOnline grows the disk of a running domain through the resource: the
// domain is made directly with libvirt (the tiny guest on a qcow2 overlay the test's
// Terraform config owns), then capacity_bytes is raised.
func TestAccVolume_growOnline(t *testing.T) {
	base, disk, dom := acctest.RandomName("vol"), acctest.RandomName("vol"), acctest.RandomName("grow")
	const grown = 32 << 20
	var domID int32
	config := func(capacity ...string) string {
		return acctest.ProviderBlock("") +
			volumeHCL("base", base, attr("source_file", acctest.GuestImage(t))) +
			volumeHCL("disk", disk, append([]string{attr("backing_volume", hcl("libvirt_volume.base.id"))}, capacity...)...)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.VolumesGone(base, disk),
			acctest.CheckGone(map[string]acctest.Lookup{"domain " + dom: acctest.DomainLookup(dom)}),
		),
		Steps: []resource.TestStep{
			{
				Config:           config(),
				ConfigPlanChecks: acctest.Plans(),
			},
			{
				PreConfig: func() {
					info, err := acctest.VolumeInfo(t, acctest.Pool(), disk)
					if err != nil {
						t.Fatal(err)
					}
					domID = acctest.DefineGuest(t, dom, info.Path, true)
					// Let the guest boot and its agent answer, so the in-guest step runs too.
					acctest.WaitForAgent(t, dom)
				},
				Config:           config(attr("capacity_bytes", grown)),
				ConfigPlanChecks: acctest.Does("libvirt_volume.disk", acctest.Update),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("libvirt_volume.disk", "capacity_bytes", strconv.Itoa(grown)),
					func(*terraform.State) error {
						id, capacity, err := acctest.DiskSize(t, dom, "vda")
						switch {
						case err != nil:
							return err
						case id != domID:
							return fmt.Errorf("domain id %d, was %d: the domain was restarted", id, domID)
						case capacity != grown:
							return fmt.Errorf("the running domain sees vda as %d bytes, want %d", capacity, grown)
						}
						return nil
					},
					func(*terraform.State) error {
						// The guest itself sees the new size, and the resource's in-guest
						// step found nothing to grow (the tiny guest never mounts its disk).
						out, err := acctest.GuestExec(t, dom, "/bin/cat", "/sys/block/vda/size")
						if err != nil {
							return fmt.Errorf("read the disk size in the guest: %w", err)
						}
						if out != strconv.Itoa(grown/512) {
							return fmt.Errorf("the guest sees vda as %s sectors, want %d", out, grown/512)
						}
						out, err = acctest.GuestGrowFilesystem(t, dom, "vda")
						if err != nil || !strings.Contains(out, "/dev/vda is not mounted: no filesystem to grow") {
							return fmt.Errorf("in-guest grow: %v %q", err, out)
						}
						return nil
					},
					acctest.CheckVolume(t, acctest.Pool(), disk, func(v *libvirt.VolumeInfo) error {
						if v.Capacity != grown {
							return fmt.Errorf("libvirt says the volume is %d bytes, want %d", v.Capacity, grown)
						}
						return nil
					}),
				),
			},
			{
				// The domain goes before Terraform deletes the volumes.
				PreConfig:        func() { acctest.RemoveDomain(t, dom) },
				Config:           config(attr("capacity_bytes", grown)),
				ConfigPlanChecks: acctest.Plans(),
			},
		},
	})
}

// TestAccVolume_readKeepsStateOnTransportError: a refresh whose connection hangs fails
// with a diagnostic and keeps the volume in state; it is not mistaken for "gone".
func TestAccVolume_readKeepsStateOnTransportError(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	config := proxiedProvider(proxy.Addr, attr("max_connections", 1)) + volumeHCL("v", name, attr("capacity_bytes", 1048576), `timeouts {
    read = "5s"
  }`)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: sameConfig(config,
			resource.TestStep{ConfigPlanChecks: acctest.Plans()},
			resource.TestStep{
				PreConfig:   proxy.Freeze,
				ExpectError: acctest.Wrapped(`Unable to read volume ` + acctest.Pool() + "/" + name + `.*look up volume`),
			},
			// Had the failed refresh dropped the volume from state, this plan would want to
			// create it (a PlanOnly step fails on any non-empty plan).
			resource.TestStep{PreConfig: func() { proxy.Thaw(); proxy.Cut() }, PlanOnly: true},
			resource.TestStep{
				ConfigPlanChecks: acctest.Plans(),
				// The volume the failed refresh kept in state is the one on the host.
				Check: acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
					if v.Capacity != 1048576 {
						return fmt.Errorf("volume %s has %d bytes on the host, want 1048576", name, v.Capacity)
					}
					return nil
				}),
			},
		),
	})
}

// TestAccVolume_streamsLargeSource uploads a 256 MiB raw image generated on the fly by a
// local HTTP server, with its checksum, and samples the test process's heap (the
// provider runs in it) meanwhile: the image is streamed, never held whole. Serial: a
// parallel test's allocations (the compressed-image server holds its images) would be
// counted too.
func TestAccVolume_streamsLargeSource(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	const size = 256 << 20
	block := bytes.Repeat([]byte("tfacc-stream-0123456789abcdef\n"), 1<<15) // ~960 KiB
	write := func(w io.Writer) error {
		for left := size; left > 0; {
			n := min(left, len(block))
			if _, err := w.Write(block[:n]); err != nil {
				return err
			}
			left -= n
		}
		return nil
	}
	h := sha256.New()
	_ = write(h)
	sum := hex.EncodeToString(h.Sum(nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_ = write(w)
	}))
	t.Cleanup(srv.Close)

	var peak atomic.Uint64
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var ms runtime.MemStats
	stopSampling := acctest.Sample(20*time.Millisecond, func() {
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > peak.Load() {
			peak.Store(ms.HeapAlloc)
		}
	})
	t.Cleanup(stopSampling)
	config := acctest.ProviderBlock("") + volumeHCL("big", name,
		attr("source_url", srv.URL+"/big.img"), attr("source_checksum", "sha256:"+sum), attr("format", "raw"))
	acctest.RunSerial(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{{
			Config:            config,
			ConfigPlanChecks:  acctest.Plans(),
			ConfigStateChecks: acctest.State("libvirt_volume.big", "capacity_bytes", int64(size)),
			Check: resource.ComposeTestCheckFunc(func(*terraform.State) error {
				stopSampling()
				grew := int64(peak.Load()) - int64(base.HeapAlloc)
				t.Logf("heap: %d MiB before, peak %d MiB during the 256 MiB upload", base.HeapAlloc>>20, peak.Load()>>20)
				if grew > 96<<20 {
					return fmt.Errorf("heap grew by %d MiB during a 256 MiB upload: the image was buffered", grew>>20)
				}
				return nil
			},
				// Streamed whole: the volume on the host holds every byte the server sent.
				volumeHolds(t, name, size, sum)),
		}},
	})
}
