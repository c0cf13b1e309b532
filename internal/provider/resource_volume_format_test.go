package provider_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// A guest owns every byte of a raw disk. One that writes a qcow2 header naming a host
// file as its backing file onto it (here the test writes it straight into the volume's
// file, as the guest of the domain defined on it would) makes libvirt's directory pool
// read the volume as qcow2 at its next refresh. The provider keeps treating it as raw:
// the refreshed plan is empty and the state still says raw (and the file's size), an
// export copies the raw bytes, a clone_from copy holds the raw bytes, a domain defined on
// it afterwards gets <driver type='raw'>, and the domain defined before keeps it. The
// backing file the header names lies in a directory the test made and does not exist:
// any open would have failed the export, the copy or the define.
func TestAccVolume_guestWrittenQcow2HeaderStaysRaw(t *testing.T) {
	name := acctest.RandomName("fmt")
	vol, copyVol := name+".raw", name+"-copy.raw"
	before, after := name+"-before", name+"-after"
	const size = 4 << 20
	dir := t.TempDir()
	backing := filepath.Join(dir, "host-secret-never-opened")
	exportPath := filepath.Join(dir, "export.raw")
	var rawSum string // sha256 of the volume's file once the header is in it

	domain := func(label, domName string) string {
		return resourceHCL("libvirt_domain", label, attr("name", domName), idleDomain,
			"disk {\n    volume_id = libvirt_volume.raw.id\n  }")
	}
	first := acctest.ProviderBlock("") +
		volumeHCL("raw", vol, attr("format", "raw"), attr("capacity_bytes", size)) +
		domain("before", before)
	second := first +
		volumeHCL("copy", copyVol, attr("format", "raw"), attr("clone_from", hcl("libvirt_volume.raw.id"))) +
		resourceHCL("libvirt_volume_export", "x", attr("volume_id", hcl("libvirt_volume.raw.id")), attr("path", exportPath),
			attr("format", "raw")) +
		domain("after", after)

	// writeHeader puts a qcow2 header naming backing (as raw) over the start of the raw
	// volume's file, leaving its length as it is, then has libvirt rescan the pool.
	writeHeader := func() {
		info, err := acctest.VolumeInfo(t, acctest.Pool(), vol)
		if err != nil {
			t.Fatalf("volume %s: %v", vol, err)
		}
		hdr := filepath.Join(dir, "header.qcow2")
		out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", "-u", "-b", backing, "-F", "raw", hdr, "1G").CombinedOutput()
		if err != nil {
			t.Fatalf("qemu-img create: %v: %s", err, out)
		}
		b, err := os.ReadFile(hdr)
		if err != nil {
			t.Fatal(err)
		}
		if h, err := qcow2.Probe(b); err != nil || !h.HasBacking {
			t.Fatalf("the header qemu-img wrote: %+v, %v; want a qcow2 header with a backing file", h, err)
		}
		f, err := os.OpenFile(info.Path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatalf("open the raw volume's file as the guest would write it: %v", err)
		}
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		content, err := os.ReadFile(info.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(content) != size {
			t.Fatalf("raw file is %d bytes after the header, want %d", len(content), size)
		}
		s := sha256.Sum256(content)
		rawSum = hex.EncodeToString(s[:])
		if _, err := acctest.VolumeNames(t, acctest.Pool(), func(string) bool { return false }); err != nil { // a pool refresh
			t.Fatal(err)
		}
		// The attack works on libvirt: it now reads the raw volume as a qcow2 overlay.
		info, err = acctest.VolumeInfo(t, acctest.Pool(), vol)
		if err != nil {
			t.Fatal(err)
		}
		if info.Format != "qcow2" {
			t.Fatalf("after the header and a pool refresh libvirt says format %q, want qcow2 (the test proves nothing otherwise)", info.Format)
		}
	}
	diskDriver := func(domName string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, domName)
			if err != nil {
				return err
			}
			for _, x := range d.Inactive.Devices.Disks {
				if x.Driver == nil || x.Driver.Type != "raw" {
					return fmt.Errorf("domain %s disk %s: driver %+v, want type='raw'", domName, x.Target.Dev, x.Driver)
				}
				if x.BackingStore != nil && x.BackingStore.Source != nil {
					return fmt.Errorf("domain %s disk %s has a backing store: %+v", domName, x.Target.Dev, x.BackingStore)
				}
			}
			if len(d.Inactive.Devices.Disks) != 1 {
				return fmt.Errorf("domain %s has %d disks, want 1", domName, len(d.Inactive.Devices.Disks))
			}
			return nil
		})
	}
	sumOf := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	neverOpened := acctest.HostCheck(func() error {
		if _, err := os.Stat(backing); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("backing file %s: %v, want it never made", backing, err)
		}
		return nil
	})

	acctest.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.VolumesGone(vol, copyVol),
			acctest.CheckGone(map[string]acctest.Lookup{"domain " + before: acctest.DomainLookup(before), "domain " + after: acctest.DomainLookup(after)}),
		),
		Steps: []resource.TestStep{
			{
				Config:           first,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State("libvirt_volume.raw",
					"format", "raw",
					"capacity_bytes", int64(size),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.CheckVolume(t, acctest.Pool(), vol, func(v *libvirt.VolumeInfo) error {
						if v.Format != "raw" || v.Capacity != size {
							return fmt.Errorf("libvirt says format %q capacity %d, want raw and %d", v.Format, v.Capacity, size)
						}
						return nil
					}),
					diskDriver(before),
				),
			},
			{
				// The header is written, the pool rescanned: the raw volume and the domain on it
				// plan no change; the copy, the export and the new domain read it as raw.
				PreConfig: writeHeader,
				Config:    second,
				ConfigPlanChecks: acctest.Plans(
					acctest.Planned("libvirt_volume.raw", acctest.Noop),
					acctest.Planned("libvirt_domain.before", acctest.Noop),
				),
				ConfigStateChecks: acctest.State("libvirt_volume.raw",
					"format", "raw",
					"capacity_bytes", int64(size),
				),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("libvirt_volume.copy", "format", "raw"),
					resource.TestCheckResourceAttr("libvirt_volume.copy", "capacity_bytes", fmt.Sprint(size)),
					func(s *terraform.State) error {
						return resource.TestCheckResourceAttr("libvirt_volume_export.x", "sha256", rawSum)(s)
					},
					acctest.HostCheck(func() error {
						b, err := os.ReadFile(exportPath)
						if err != nil {
							return err
						}
						if got := sumOf(b); got != rawSum {
							return fmt.Errorf("export %s: sha256 %s (%d bytes), want the raw file's %s", exportPath, got, len(b), rawSum)
						}
						return nil
					}),
					acctest.CheckVolume(t, acctest.Pool(), copyVol, func(v *libvirt.VolumeInfo) error {
						b, err := acctest.VolumeContent(t, v.Key)
						if err != nil {
							return err
						}
						if got := sumOf(b); got != rawSum {
							return fmt.Errorf("copy %s: sha256 %s (%d bytes), want the raw file's %s", copyVol, got, len(b), rawSum)
						}
						if !bytes.HasPrefix(b, []byte("QFI\xfb")) {
							return fmt.Errorf("copy %s does not start with the header the guest wrote", copyVol)
						}
						return nil
					}),
					// libvirt still reads the original as qcow2: the provider did not follow it.
					acctest.CheckVolume(t, acctest.Pool(), vol, func(v *libvirt.VolumeInfo) error {
						if v.Format != "qcow2" {
							return fmt.Errorf("libvirt says format %q, want its probe (qcow2) unchanged", v.Format)
						}
						return nil
					}),
					diskDriver(before),
					diskDriver(after),
					neverOpened,
				),
			},
			{
				// Refreshed again (the pool too): still nothing to do.
				PreConfig: func() {
					if _, err := acctest.VolumeNames(t, acctest.Pool(), func(string) bool { return false }); err != nil {
						t.Fatal(err)
					}
				},
				Config:   second,
				PlanOnly: true,
			},
		},
	})
}
