package provider_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// emptyPlanAfterApply is what every step must show: a second plan changes nothing.
var emptyPlanAfterApply = resource.ConfigPlanChecks{
	PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
}

// imageVirtualSize reads the tiny guest image's virtual size from its qcow2 header.
func imageVirtualSize(t *testing.T, p string) int64 {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	head := make([]byte, qcow2.HeaderSize)
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	h, err := qcow2.Probe(head)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return int64(h.VirtualSize)
}

func fileSHA256(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// volumeInfo asks libvirt directly about pool/name.
func volumeInfo(t *testing.T, pool, name string) (*libvirt.VolumeInfo, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return acctest.Client(t).VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: name})
}

// checkVolume is a step check that asks libvirt about a volume and runs fn on it.
func checkVolume(t *testing.T, pool, name string, fn func(*libvirt.VolumeInfo) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		info, err := volumeInfo(t, pool, name)
		if err != nil {
			return fmt.Errorf("volume %s/%s on the host: %w", pool, name, err)
		}
		return fn(info)
	}
}

// requireGone fails unless libvirt answers "not found" for pool/name.
func requireGone(t *testing.T, pool, name string) {
	t.Helper()
	_, err := volumeInfo(t, pool, name)
	if !errors.Is(err, libvirt.ErrNotFound) {
		t.Fatalf("volume %s/%s: want it gone from the host, lookup says %v", pool, name, err)
	}
}

func volumeGone(names ...string) resource.TestCheckFunc {
	m := map[string]acctest.Lookup{}
	for _, n := range names {
		m["volume "+acctest.Pool()+"/"+n] = acctest.VolumeLookup(acctest.Pool(), n)
	}
	return acctest.CheckGone(m)
}

var volumeImportIgnore = []string{"source_url", "source_file", "backing_volume", "clone_from", "source_checksum", "timeouts"}

func TestAccVolume_sourceFile(t *testing.T) {
	name := acctest.RandomName("vol")
	var img string
	var size int64
	resource.Test(t, resource.TestCase{
		PreCheck: func() {
			acctest.RequireAcc(t)
			img = acctest.GuestImage(t)
			size = imageVirtualSize(t, img)
		},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(name),
		Steps: []resource.TestStep{
			{
				Config: func() string {
					return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "base" {
  name        = %q
  pool        = %q
  source_file = %q
}
`, name, acctest.Pool(), acctest.GuestImage(t))
				}(),
				ConfigPlanChecks: emptyPlanAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("libvirt_volume.base", tfjsonpath.New("format"), knownvalue.StringExact("qcow2")),
					statecheck.ExpectKnownValue("libvirt_volume.base", tfjsonpath.New("path"), knownvalue.StringRegexp(regexp.MustCompile("/"+name+"$"))),
					statecheck.ExpectKnownValue("libvirt_volume.base", tfjsonpath.New("allocation_bytes"), knownvalue.NotNull()),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						// The qcow2 header's virtual size, not the file's length.
						return resource.TestCheckResourceAttr("libvirt_volume.base", "capacity_bytes", strconv.FormatInt(size, 10))(s)
					},
					checkVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
						if v.Format != "qcow2" || int64(v.Capacity) != size {
							return fmt.Errorf("libvirt says format %q capacity %d, want qcow2 and %d", v.Format, v.Capacity, size)
						}
						if st, _ := os.Stat(img); int64(v.Capacity) == st.Size() {
							return fmt.Errorf("capacity %d is the file length, not the virtual size", v.Capacity)
						}
						return nil
					}),
				),
			},
			{
				ResourceName:            "libvirt_volume.base",
				ImportState:             true,
				ImportStateId:           acctest.Pool() + "/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: volumeImportIgnore,
			},
			{
				// By key, too.
				ResourceName:            "libvirt_volume.base",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: volumeImportIgnore,
			},
		},
	})
}

func TestAccVolume_overlayAndClone(t *testing.T) {
	base, overlay, clone := acctest.RandomName("vol"), acctest.RandomName("vol"), acctest.RandomName("vol")
	var basePath string
	config := func() string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "base" {
  name        = %[1]q
  pool        = %[4]q
  source_file = %[5]q
}

resource "libvirt_volume" "overlay" {
  name           = %[2]q
  pool           = %[4]q
  backing_volume = libvirt_volume.base.id
}

resource "libvirt_volume" "clone" {
  name       = %[3]q
  pool       = %[4]q
  clone_from = libvirt_volume.overlay.id
  format     = "qcow2"
}
`, base, overlay, clone, acctest.Pool(), acctest.GuestImage(t))
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(base, overlay, clone),
		Steps: []resource.TestStep{
			{
				Config:           config(),
				ConfigPlanChecks: emptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPair("libvirt_volume.overlay", "capacity_bytes", "libvirt_volume.base", "capacity_bytes"),
					resource.TestCheckResourceAttrPair("libvirt_volume.clone", "capacity_bytes", "libvirt_volume.base", "capacity_bytes"),
					checkVolume(t, acctest.Pool(), base, func(v *libvirt.VolumeInfo) error { basePath = v.Path; return nil }),
					checkVolume(t, acctest.Pool(), overlay, func(v *libvirt.VolumeInfo) error {
						if v.Format != "qcow2" || v.Backing != basePath {
							return fmt.Errorf("overlay: format %q backing %q, want qcow2 backed by %q", v.Format, v.Backing, basePath)
						}
						return nil
					}),
					checkVolume(t, acctest.Pool(), clone, func(v *libvirt.VolumeInfo) error {
						if v.Format != "qcow2" || v.Backing != "" {
							return fmt.Errorf("clone: format %q backing %q, want a flat qcow2", v.Format, v.Backing)
						}
						// A full copy holds the image's data itself.
						if v.Allocation < 1<<20 {
							return fmt.Errorf("clone allocation %d bytes: the data was not copied", v.Allocation)
						}
						return nil
					}),
				),
			},
			{
				ResourceName:            "libvirt_volume.overlay",
				ImportState:             true,
				ImportStateId:           acctest.Pool() + "/" + overlay,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: volumeImportIgnore,
			},
			{
				ResourceName:            "libvirt_volume.clone",
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: volumeImportIgnore,
			},
		},
	})
}

// imageServer serves the tiny guest image on 127.0.0.1. With cut set, it announces the
// whole length, sends half the body and drops the connection.
func imageServer(t *testing.T, img string, cut bool) *httptest.Server {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Header().Set("Content-Type", "application/octet-stream")
		if !cut {
			_, _ = w.Write(b)
			return
		}
		_, _ = w.Write(b[:len(b)/2])
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func urlConfig(name, url, checksum string) string {
	sum := ""
	if checksum != "" {
		sum = fmt.Sprintf("source_checksum = %q", checksum)
	}
	return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "img" {
  name       = %q
  pool       = %q
  source_url = %q
  %s
}
`, name, acctest.Pool(), url, sum)
}

func TestAccVolume_sourceURL(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	img := acctest.GuestImage(t)
	size := imageVirtualSize(t, img)
	sum := fileSHA256(t, img)
	srv := imageServer(t, img, false)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(name),
		Steps: []resource.TestStep{
			{
				Config:           urlConfig(name, srv.URL+"/tiny.qcow2", "sha256:"+sum),
				ConfigPlanChecks: emptyPlanAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("libvirt_volume.img", tfjsonpath.New("capacity_bytes"), knownvalue.Int64Exact(size)),
					statecheck.ExpectKnownValue("libvirt_volume.img", tfjsonpath.New("format"), knownvalue.StringExact("qcow2")),
				},
				Check: checkVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
					var h = sha256.New()
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if err := acctest.Client(t).DownloadVolume(ctx, libvirt.VolumeRef{Key: v.Key}, h); err != nil {
						return err
					}
					if got := hex.EncodeToString(h.Sum(nil)); got != sum {
						return fmt.Errorf("volume content sha256 %s, want the image's %s", got, sum)
					}
					return nil
				}),
			},
			{
				ResourceName:            "libvirt_volume.img",
				ImportState:             true,
				ImportStateId:           acctest.Pool() + "/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: volumeImportIgnore,
			},
		},
	})
}

func TestAccVolume_sourceURLWrongChecksum(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	img := acctest.GuestImage(t)
	srv := imageServer(t, img, false)
	wrong := "sha256:" + hex.EncodeToString(make([]byte, 32))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(name),
		Steps: []resource.TestStep{
			{
				Config:      urlConfig(name, srv.URL+"/tiny.qcow2", wrong),
				ExpectError: wrapped(`(?s)Unable to create volume.*checksum mismatch: the source's sha256 is [0-9a-f]{64}, source_checksum says 0{64}.*half-made volume .* was deleted`),
			},
			{
				// Nothing is left on the host, and nothing in state: a right checksum then works.
				PreConfig:        func() { requireGone(t, acctest.Pool(), name) },
				Config:           urlConfig(name, srv.URL+"/tiny.qcow2", "sha256:"+fileSHA256(t, img)),
				ConfigPlanChecks: emptyPlanAfterApply,
			},
		},
	})
}

func TestAccVolume_interruptedUpload(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	srv := imageServer(t, acctest.GuestImage(t), true)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(name),
		Steps: []resource.TestStep{
			{
				Config:      urlConfig(name, srv.URL+"/tiny.qcow2", ""),
				ExpectError: wrapped(`(?s)Unable to create volume.*reading the source after \d+ bytes.*half-made volume .* was deleted`),
			},
			{
				PreConfig: func() { requireGone(t, acctest.Pool(), name) },
				Config:    acctest.ProviderBlock(""),
			},
		},
	})
}

func growConfig(name string, capacity int64) string {
	return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "disk" {
  name           = %q
  pool           = %q
  capacity_bytes = %d
}
`, name, acctest.Pool(), capacity)
}

func TestAccVolume_growInPlace(t *testing.T) {
	name := acctest.RandomName("vol")
	var id string
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(name),
		Steps: []resource.TestStep{
			{
				Config:           growConfig(name, 1<<20),
				ConfigPlanChecks: emptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("libvirt_volume.disk", "capacity_bytes", strconv.Itoa(1<<20)),
					resource.TestCheckResourceAttr("libvirt_volume.disk", "format", "qcow2"),
					func(s *terraform.State) error {
						id = s.RootModule().Resources["libvirt_volume.disk"].Primary.ID
						return nil
					},
				),
			},
			{
				ResourceName:            "libvirt_volume.disk",
				ImportState:             true,
				ImportStateId:           acctest.Pool() + "/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: volumeImportIgnore,
			},
			{
				Config: growConfig(name, 3<<20),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("libvirt_volume.disk", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						if got := s.RootModule().Resources["libvirt_volume.disk"].Primary.ID; got != id {
							return fmt.Errorf("id changed from %s to %s: the volume was replaced, not grown", id, got)
						}
						return nil
					},
					checkVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
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
				ExpectError: wrapped(`(?s)Volume cannot shrink.*is 3145728 bytes; capacity_bytes = 2097152 would shrink it.*Set capacity_bytes to 3145728 or more`),
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
	config := func(capacity string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "base" {
  name        = %[1]q
  pool        = %[3]q
  source_file = %[4]q
}

resource "libvirt_volume" "disk" {
  name           = %[2]q
  pool           = %[3]q
  backing_volume = libvirt_volume.base.id
  %[5]s
}
`, base, disk, acctest.Pool(), acctest.GuestImage(t), capacity)
	}
	removeDomain := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = acctest.Client(t).Write(ctx, "remove domain "+dom, func(l *golibvirt.Libvirt) error {
			d, err := l.DomainLookupByName(dom)
			if err != nil {
				return err
			}
			_ = l.DomainDestroy(d)
			return l.DomainUndefine(d)
		})
	}
	t.Cleanup(removeDomain)
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			volumeGone(base, disk),
			acctest.CheckGone(map[string]acctest.Lookup{"domain " + dom: acctest.DomainLookup(dom)}),
		),
		Steps: []resource.TestStep{
			{
				Config:           config(""),
				ConfigPlanChecks: emptyPlanAfterApply,
			},
			{
				PreConfig: func() {
					info, err := volumeInfo(t, acctest.Pool(), disk)
					if err != nil {
						t.Fatal(err)
					}
					domID = startGuest(t, dom, info.Path)
					// Let the guest boot and its agent answer, so the in-guest step runs too.
					waitForAgent(t, dom)
				},
				Config: config(fmt.Sprintf("capacity_bytes = %d", grown)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("libvirt_volume.disk", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("libvirt_volume.disk", "capacity_bytes", strconv.Itoa(grown)),
					func(*terraform.State) error {
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						defer cancel()
						return acctest.Client(t).Read(ctx, "check domain "+dom, func(l *golibvirt.Libvirt) error {
							d, err := l.DomainLookupByName(dom)
							if err != nil {
								return err
							}
							if d.ID != domID {
								return fmt.Errorf("domain id %d, was %d: the domain was restarted", d.ID, domID)
							}
							state, _, err := l.DomainGetState(d, 0)
							if err != nil {
								return err
							}
							if golibvirt.DomainState(state) != golibvirt.DomainRunning {
								return fmt.Errorf("domain state %d, want running", state)
							}
							_, capacity, _, err := l.DomainGetBlockInfo(d, "vda", 0)
							if err != nil {
								return err
							}
							if capacity != grown {
								return fmt.Errorf("the running domain sees vda as %d bytes, want %d", capacity, grown)
							}
							return nil
						})
					},
					func(*terraform.State) error {
						// The guest itself sees the new size, and the resource's in-guest
						// step found nothing to grow (the tiny guest never mounts its disk).
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
						defer cancel()
						c := acctest.Client(t)
						d := golibvirt.Domain{Name: dom}
						if err := c.Read(ctx, "look up "+dom, func(l *golibvirt.Libvirt) (err error) { d, err = l.DomainLookupByName(dom); return err }); err != nil {
							return err
						}
						out, code, err := c.GuestExec(ctx, d, "/bin/cat", "/sys/block/vda/size")
						if err != nil || code != 0 {
							return fmt.Errorf("read the disk size in the guest: %v (exit %d) %s", err, code, out)
						}
						if out != strconv.Itoa(grown/512) {
							return fmt.Errorf("the guest sees vda as %s sectors, want %d", out, grown/512)
						}
						out, err = c.GuestGrowFilesystem(ctx, d, "vda")
						if err != nil || !strings.Contains(out, "/dev/vda is not mounted: no filesystem to grow") {
							return fmt.Errorf("in-guest grow: %v %q", err, out)
						}
						return nil
					},
					checkVolume(t, acctest.Pool(), disk, func(v *libvirt.VolumeInfo) error {
						if v.Capacity != grown {
							return fmt.Errorf("libvirt says the volume is %d bytes, want %d", v.Capacity, grown)
						}
						return nil
					}),
				),
			},
			{
				// The domain goes before Terraform deletes the volumes.
				PreConfig:        removeDomain,
				Config:           config(fmt.Sprintf("capacity_bytes = %d", grown)),
				ConfigPlanChecks: emptyPlanAfterApply,
			},
		},
	})
}

// waitForAgent waits until the guest agent of domain name answers (the tiny guest boots
// in 10 to 30 s under TCG).
func waitForAgent(t *testing.T, name string) {
	t.Helper()
	c := acctest.Client(t)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var d golibvirt.Domain
		err := c.Read(ctx, "look up "+name, func(l *golibvirt.Libvirt) (err error) { d, err = l.DomainLookupByName(name); return err })
		if err == nil {
			err = c.GuestPing(ctx, d)
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("guest agent of %s did not answer within 3 minutes: %v", name, err)
		}
		time.Sleep(2 * time.Second)
	}
}

// startGuest defines and starts the tiny guest (TCG, 256 MiB) with diskPath as its
// virtio disk and a guest-agent channel, and returns its domain id.
func startGuest(t *testing.T, name, diskPath string) int32 {
	t.Helper()
	xml := fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='%s'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
  </devices>
</domain>`, name, diskPath)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var id int32
	err := acctest.Client(t).Write(ctx, "define and start domain "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainDefineXML(xml)
		if err != nil {
			return err
		}
		if err := l.DomainCreate(d); err != nil {
			return err
		}
		d, err = l.DomainLookupByName(name)
		id = d.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestAccVolume_rawAndISO uploads non-qcow2 images through file:// URLs: their capacity
// is the file's size, and a format that does not match the image is refused with the fix.
func TestAccVolume_rawAndISO(t *testing.T) {
	acctest.RequireAcc(t)
	isoName, rawName, badName := acctest.RandomName("vol"), acctest.RandomName("vol"), acctest.RandomName("vol")
	dir := t.TempDir()
	iso, _, err := cloudinit.BuildISO(cloudinit.Seed{UserData: "#cloud-config\n", MetaData: "instance-id: x\n"})
	if err != nil {
		t.Fatal(err)
	}
	isoPath := filepath.Join(dir, "cd.iso")
	rawPath := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(isoPath, iso, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rawPath, bytes.Repeat([]byte{0xab}, 3<<20+512), 0o600); err != nil {
		t.Fatal(err)
	}
	config := acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "iso" {
  name       = %q
  pool       = %q
  source_url = "file://%s"
  format     = "iso"
}

resource "libvirt_volume" "raw" {
  name           = %q
  pool           = %q
  source_file    = %q
  format         = "raw"
  capacity_bytes = %d
}
`, isoName, acctest.Pool(), isoPath, rawName, acctest.Pool(), rawPath, 8<<20)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(isoName, rawName, badName),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: emptyPlanAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("libvirt_volume.iso", tfjsonpath.New("capacity_bytes"), knownvalue.Int64Exact(int64(len(iso)))),
					statecheck.ExpectKnownValue("libvirt_volume.iso", tfjsonpath.New("format"), knownvalue.StringExact("iso")),
					// Asked larger than the file: uploaded, then grown.
					statecheck.ExpectKnownValue("libvirt_volume.raw", tfjsonpath.New("capacity_bytes"), knownvalue.Int64Exact(8<<20)),
					statecheck.ExpectKnownValue("libvirt_volume.raw", tfjsonpath.New("format"), knownvalue.StringExact("raw")),
				},
				Check: checkVolume(t, acctest.Pool(), isoName, func(v *libvirt.VolumeInfo) error {
					var buf bytes.Buffer
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if err := acctest.Client(t).DownloadVolume(ctx, libvirt.VolumeRef{Key: v.Key}, &buf); err != nil {
						return err
					}
					if !bytes.Equal(buf.Bytes(), iso) {
						return fmt.Errorf("downloaded %d bytes differ from the %d uploaded", buf.Len(), len(iso))
					}
					return nil
				}),
			},
			{
				ResourceName:            "libvirt_volume.raw",
				ImportState:             true,
				ImportStateId:           acctest.Pool() + "/" + rawName,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: volumeImportIgnore,
			},
			{
				// A qcow2 image uploaded as raw would boot as garbage: refused, nothing left.
				Config: config + fmt.Sprintf(`
resource "libvirt_volume" "bad" {
  name        = %q
  pool        = %q
  source_file = %q
  format      = "raw"
}
`, badName, acctest.Pool(), acctest.GuestImage(t)),
				ExpectError: wrapped(`(?s)Unable to create volume.*is a qcow2 image but format = "raw": set format = "qcow2"`),
			},
			{
				PreConfig:        func() { requireGone(t, acctest.Pool(), badName) },
				Config:           config,
				ConfigPlanChecks: emptyPlanAfterApply,
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
	config := fmt.Sprintf(`
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}
provider "libvirt" {
  uri             = "qemu+tcp://%s/system"
  max_connections = 1
}
resource "libvirt_volume" "v" {
  name           = %q
  pool           = %q
  capacity_bytes = 1048576
  timeouts {
    read = "5s"
  }
}
`, proxy.Addr, name, acctest.Pool())
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(name),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: emptyPlanAfterApply,
			},
			{
				PreConfig:   proxy.Freeze,
				Config:      config,
				ExpectError: wrapped(`(?s)Unable to read volume ` + acctest.Pool() + "/" + name + `.*look up volume`),
			},
			{
				// Had the failed refresh dropped the volume from state, this plan would
				// want to create it (a PlanOnly step fails on any non-empty plan).
				PreConfig: func() { proxy.Thaw(); proxy.Cut() },
				Config:    config,
				PlanOnly:  true,
			},
			{
				Config:           config,
				ConfigPlanChecks: emptyPlanAfterApply,
			},
		},
	})
}

// TestAccVolume_streamsLargeSource uploads a 256 MiB raw image generated on the fly by a
// local HTTP server, with its checksum, and samples the test process's heap (the
// provider runs in it) meanwhile: the image is streamed, never held whole.
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
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	t.Cleanup(halt)
	sampled := make(chan struct{})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
		}
	}()
	config := acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "big" {
  name            = %q
  pool            = %q
  source_url      = "%s/big.img"
  source_checksum = "sha256:%s"
  format          = "raw"
}
`, name, acctest.Pool(), srv.URL, sum)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(name),
		Steps: []resource.TestStep{{
			Config:           config,
			ConfigPlanChecks: emptyPlanAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("libvirt_volume.big", tfjsonpath.New("capacity_bytes"), knownvalue.Int64Exact(size)),
			},
			Check: func(*terraform.State) error {
				halt()
				<-sampled
				grew := int64(peak.Load()) - int64(base.HeapAlloc)
				t.Logf("heap: %d MiB before, peak %d MiB during the 256 MiB upload", base.HeapAlloc>>20, peak.Load()>>20)
				if grew > 96<<20 {
					return fmt.Errorf("heap grew by %d MiB during a 256 MiB upload: the image was buffered", grew>>20)
				}
				return nil
			},
		}},
	})
}

// TestAccVolume_goneOutsideTerraform: volumes deleted behind Terraform's back are dropped
// from state by the refresh (libvirt says "not found") and planned anew.
func TestAccVolume_goneOutsideTerraform(t *testing.T) {
	vol, seed := acctest.RandomName("vol"), acctest.RandomName("seed")
	config := acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "v" {
  name           = %q
  pool           = %q
  capacity_bytes = 1048576
}

resource "libvirt_cloudinit_iso" "s" {
  name        = %q
  pool        = %q
  instance_id = "i-gone"
}
`, vol, acctest.Pool(), seed, acctest.Pool())
	deleteBoth := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, n := range []string{vol, seed} {
			if err := acctest.Client(t).DeleteVolume(ctx, libvirt.VolumeRef{Pool: acctest.Pool(), Name: n}); err != nil {
				t.Fatalf("delete %s behind Terraform's back: %v", n, err)
			}
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             volumeGone(vol, seed),
		Steps: []resource.TestStep{
			{Config: config, ConfigPlanChecks: emptyPlanAfterApply},
			{
				PreConfig: deleteBoth,
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("libvirt_volume.v", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("libvirt_cloudinit_iso.s", plancheck.ResourceActionCreate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}
