package provider_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/cloudinit"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

var volumeImportIgnore = []string{"source_url", "source_file", "backing_volume", "clone_from", "source_checksum", "timeouts"}

func TestAccVolume_sourceFile(t *testing.T) {
	name := acctest.RandomName("vol")
	var img string
	var size int64
	acctest.Run(t, resource.TestCase{
		PreCheck: func() {
			acctest.RequireAcc(t)
			img = acctest.GuestImage(t)
			size = imageVirtualSize(t, img)
		},
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config: func() string {
					return acctest.ProviderBlock("") + volumeHCL("base", name, attr("source_file", acctest.GuestImage(t)))
				}(),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State("libvirt_volume.base",
					"format", "qcow2",
					"path", regexp.MustCompile("/"+name+"$"),
					"allocation_bytes", acctest.NotNull,
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					func(s *terraform.State) error {
						// The qcow2 header's virtual size, not the file's length.
						return resource.TestCheckResourceAttr("libvirt_volume.base", "capacity_bytes", strconv.FormatInt(size, 10))(s)
					},
					acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
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
			importStep("libvirt_volume.base", acctest.Pool()+"/"+name, volumeImportIgnore...),
			// By key, too.
			importStep("libvirt_volume.base", "", volumeImportIgnore...),
		},
	})
}

func TestAccVolume_overlayAndClone(t *testing.T) {
	base, overlay, clone := acctest.RandomName("vol"), acctest.RandomName("vol"), acctest.RandomName("vol")
	var basePath string
	config := func() string {
		return acctest.ProviderBlock("") +
			volumeHCL("base", base, attr("source_file", acctest.GuestImage(t))) +
			volumeHCL("overlay", overlay, attr("backing_volume", hcl("libvirt_volume.base.id"))) +
			volumeHCL("clone", clone, attr("clone_from", hcl("libvirt_volume.overlay.id")), attr("format", "qcow2"))
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(base, overlay, clone),
		Steps: []resource.TestStep{
			{
				Config:           config(),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrPair("libvirt_volume.overlay", "capacity_bytes", "libvirt_volume.base", "capacity_bytes"),
					resource.TestCheckResourceAttrPair("libvirt_volume.clone", "capacity_bytes", "libvirt_volume.base", "capacity_bytes"),
					acctest.CheckVolume(t, acctest.Pool(), base, func(v *libvirt.VolumeInfo) error { basePath = v.Path; return nil }),
					acctest.CheckVolume(t, acctest.Pool(), overlay, func(v *libvirt.VolumeInfo) error {
						if v.Format != "qcow2" || v.Backing != basePath {
							return fmt.Errorf("overlay: format %q backing %q, want qcow2 backed by %q", v.Format, v.Backing, basePath)
						}
						return nil
					}),
					acctest.CheckVolume(t, acctest.Pool(), clone, func(v *libvirt.VolumeInfo) error {
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
			importStep("libvirt_volume.overlay", acctest.Pool()+"/"+overlay, volumeImportIgnore...),
			importStep("libvirt_volume.clone", "", volumeImportIgnore...),
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
	lines := []string{attr("source_url", url)}
	if checksum != "" {
		lines = append(lines, attr("source_checksum", checksum))
	}
	return acctest.ProviderBlock("") + volumeHCL("img", name, lines...)
}

func TestAccVolume_sourceURL(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	img := acctest.GuestImage(t)
	size := imageVirtualSize(t, img)
	sum := fileSHA256(t, img)
	srv := imageServer(t, img, false)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config:           urlConfig(name, srv.URL+"/tiny.qcow2", "sha256:"+sum),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State("libvirt_volume.img",
					"capacity_bytes", size,
					"format", "qcow2",
				),
				Check: acctest.CheckVolume(t, acctest.Pool(), name, func(v *libvirt.VolumeInfo) error {
					var h = sha256.New()
					ctx := acctest.Ctx(t)
					if err := acctest.Client(t).DownloadVolume(ctx, libvirt.VolumeRef{Key: v.Key}, h); err != nil {
						return err
					}
					if got := hex.EncodeToString(h.Sum(nil)); got != sum {
						return fmt.Errorf("volume content sha256 %s, want the image's %s", got, sum)
					}
					return nil
				}),
			},
			importStep("libvirt_volume.img", acctest.Pool()+"/"+name, volumeImportIgnore...),
		},
	})
}

func TestAccVolume_sourceURLWrongChecksum(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	img := acctest.GuestImage(t)
	srv := imageServer(t, img, false)
	wrong := "sha256:" + hex.EncodeToString(make([]byte, 32))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config:      urlConfig(name, srv.URL+"/tiny.qcow2", wrong),
				ExpectError: acctest.Wrapped(`Unable to create volume.*checksum mismatch: the source's sha256 is [0-9a-f]{64}, source_checksum says 0{64}.*half-made volume .* was deleted`),
			},
			{
				// Nothing is left on the host, and nothing in state: a right checksum then works.
				PreConfig:        func() { acctest.RequireVolumeGone(t, acctest.Pool(), name) },
				Config:           urlConfig(name, srv.URL+"/tiny.qcow2", "sha256:"+fileSHA256(t, img)),
				ConfigPlanChecks: acctest.Plans(),
				// The volume on the host holds the image byte for byte.
				Check: volumeHolds(t, name, uint64(imageVirtualSize(t, img)), fileSHA256(t, img)),
			},
		},
	})
}

func TestAccVolume_interruptedUpload(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vol")
	srv := imageServer(t, acctest.GuestImage(t), true)
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name),
		Steps: []resource.TestStep{
			{
				Config:      urlConfig(name, srv.URL+"/tiny.qcow2", ""),
				ExpectError: acctest.Wrapped(`Unable to create volume.*reading the source after \d+ bytes.*half-made volume .* was deleted`),
			},
			{
				PreConfig: func() { acctest.RequireVolumeGone(t, acctest.Pool(), name) },
				Config:    acctest.ProviderBlock(""),
				// Still nothing of it on the host, under its name or one starting so.
				Check: noVolumesNamed(t, name),
			},
		},
	})
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
	config := acctest.ProviderBlock("") +
		volumeHCL("iso", isoName, attr("source_url", "file://"+isoPath), attr("format", "iso")) +
		volumeHCL("raw", rawName, attr("source_file", rawPath), attr("format", "raw"), attr("capacity_bytes", 8<<20))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(isoName, rawName, badName),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State("libvirt_volume.iso", "capacity_bytes", len(iso), "format", "iso"),
					// Asked larger than the file: uploaded, then grown.
					acctest.State("libvirt_volume.raw", "capacity_bytes", 8<<20, "format", "raw")...),
				Check: acctest.CheckVolume(t, acctest.Pool(), isoName, func(v *libvirt.VolumeInfo) error {
					var buf bytes.Buffer
					ctx := acctest.Ctx(t)
					if err := acctest.Client(t).DownloadVolume(ctx, libvirt.VolumeRef{Key: v.Key}, &buf); err != nil {
						return err
					}
					if !bytes.Equal(buf.Bytes(), iso) {
						return fmt.Errorf("downloaded %d bytes differ from the %d uploaded", buf.Len(), len(iso))
					}
					return nil
				}),
			},
			importStep("libvirt_volume.raw", acctest.Pool()+"/"+rawName, volumeImportIgnore...),
			{
				// A qcow2 image uploaded as raw would boot as garbage: refused, nothing left.
				Config:      config + volumeHCL("bad", badName, attr("source_file", acctest.GuestImage(t)), attr("format", "raw")),
				ExpectError: acctest.Wrapped(`Unable to create volume.*is a qcow2 image but format = "raw": set format = "qcow2"`),
			},
			{
				PreConfig:        func() { acctest.RequireVolumeGone(t, acctest.Pool(), badName) },
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
			},
		},
	})
}

// TestAccVolume_goneOutsideTerraform: volumes deleted behind Terraform's back are dropped
// from state by the refresh (libvirt says "not found") and planned anew.
func TestAccVolume_goneOutsideTerraform(t *testing.T) {
	vol, seed := acctest.RandomName("vol"), acctest.RandomName("seed")
	config := acctest.ProviderBlock("") + volumeHCL("v", vol, attr("capacity_bytes", 1048576)) +
		resourceHCL("libvirt_cloudinit_iso", "s", attr("name", seed), attr("pool", acctest.Pool()), attr("instance_id", "i-gone"))
	deleteBoth := func() {
		acctest.DeleteVolume(t, acctest.Pool(), vol)
		acctest.DeleteVolume(t, acctest.Pool(), seed)
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(vol, seed),
		Steps: []resource.TestStep{
			{Config: config, ConfigPlanChecks: acctest.Plans()},
			{
				PreConfig:        deleteBoth,
				Config:           config,
				ConfigPlanChecks: acctest.Does("libvirt_volume.v", acctest.Create, acctest.Planned("libvirt_cloudinit_iso.s", acctest.Create)),
				// Both are on the host again.
				Check: resource.ComposeTestCheckFunc(
					acctest.CheckVolume(t, acctest.Pool(), vol, func(v *libvirt.VolumeInfo) error {
						if v.Capacity != 1048576 {
							return fmt.Errorf("volume %s made again has %d bytes, want 1048576", vol, v.Capacity)
						}
						return nil
					}),
					acctest.CheckVolume(t, acctest.Pool(), seed, func(*libvirt.VolumeInfo) error { return nil }),
				),
			},
		},
	})
}
