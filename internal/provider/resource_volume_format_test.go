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
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// A guest owns every byte of a raw disk. One that writes a qcow2 header naming a file as
// its backing file onto it (here the test writes it straight into the volume's file, as
// the guest of the domain defined on it would) makes libvirt's directory pool read the
// volume as qcow2 at its next refresh. Two such disks: one whose header names a host path
// (in a directory the test made, and which does not exist: any open would have failed
// the export, the copy or the define), one whose header names another guest's volume of
// the same pool. The provider keeps treating both as raw: the refreshed plan is empty and
// the state still says raw (and the file's size), an export copies the raw bytes, a
// clone_from copy holds the raw bytes, a domain defined on it afterwards gets
// <driver type='raw'>, and the domain defined before keeps it.
func TestAccVolume_guestWrittenQcow2HeaderStaysRaw(t *testing.T) {
	name := acctest.RandomName("fmt")
	const size = 4 << 20
	dir := t.TempDir()
	type victim struct {
		label, vol, copyVol, before, after, export string
		backing                                    string // the file the guest's header names
		sum                                        string // sha256 of the volume's file once the header is in it
	}
	victims := []*victim{
		{label: "host", backing: filepath.Join(dir, "host-secret-never-opened")},
		{label: "peer"}, // backing: the other guest's volume, known once it is made
	}
	for _, v := range victims {
		v.vol, v.copyVol = name+"-"+v.label+".raw", name+"-"+v.label+"-copy.raw"
		v.before, v.after = name+"-"+v.label+"-before", name+"-"+v.label+"-after"
		v.export = filepath.Join(dir, v.label+"-export.raw")
	}
	peerVol := name + "-peer-secret.raw"

	domain := func(label, domName, vol string) string {
		return resourceHCL("libvirt_domain", label, attr("name", domName), idleDomain,
			fmt.Sprintf("disk {\n    volume_id = libvirt_volume.%s.id\n  }", vol))
	}
	first := acctest.ProviderBlock("") + volumeHCL("peer_secret", peerVol, attr("format", "raw"), attr("capacity_bytes", 1<<20))
	second := ""
	for _, v := range victims {
		first += volumeHCL(v.label, v.vol, attr("format", "raw"), attr("capacity_bytes", size)) +
			domain(v.label+"_before", v.before, v.label)
		second += volumeHCL(v.label+"_copy", v.copyVol, attr("format", "raw"), attr("clone_from", hcl("libvirt_volume."+v.label+".id"))) +
			resourceHCL("libvirt_volume_export", v.label, attr("volume_id", hcl("libvirt_volume."+v.label+".id")), attr("path", v.export),
				attr("format", "raw")) +
			domain(v.label+"_after", v.after, v.label)
	}
	second = first + second

	// writeHeader puts a qcow2 header naming v.backing (as raw) over the start of the raw
	// volume's file, leaving its length as it is.
	writeHeader := func(v *victim) {
		info, err := acctest.VolumeInfo(t, acctest.Pool(), v.vol)
		if err != nil {
			t.Fatalf("volume %s: %v", v.vol, err)
		}
		hdr := filepath.Join(dir, v.label+"-header.qcow2")
		out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", "-u", "-b", v.backing, "-F", "raw", hdr, "1G").CombinedOutput()
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
		v.sum = hex.EncodeToString(s[:])
	}
	writeHeaders := func() {
		peer, err := acctest.VolumeInfo(t, acctest.Pool(), peerVol)
		if err != nil {
			t.Fatal(err)
		}
		victims[1].backing = peer.Path
		for _, v := range victims {
			writeHeader(v)
		}
		if _, err := acctest.VolumeNames(t, acctest.Pool(), func(string) bool { return false }); err != nil { // a pool refresh
			t.Fatal(err)
		}
		// The attack works on libvirt: it now reads each raw volume as a qcow2 overlay.
		for _, v := range victims {
			info, err := acctest.VolumeInfo(t, acctest.Pool(), v.vol)
			if err != nil {
				t.Fatal(err)
			}
			if info.Format != "qcow2" || info.Backing != v.backing {
				t.Fatalf("after the header and a pool refresh libvirt says %s is %q backed by %q, want qcow2 backed by %s "+
					"(the test proves nothing otherwise)", v.vol, info.Format, info.Backing, v.backing)
			}
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
		if _, err := os.Stat(victims[0].backing); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("backing file %s: %v, want it never made", victims[0].backing, err)
		}
		return nil
	})

	volumes, gone := []string{peerVol}, map[string]acctest.Lookup{}
	var firstChecks, secondChecks []resource.TestCheckFunc
	var firstState, secondState []statecheck.StateCheck
	var noops []plancheck.PlanCheck
	for _, v := range victims {
		volumes = append(volumes, v.vol, v.copyVol)
		gone["domain "+v.before], gone["domain "+v.after] = acctest.DomainLookup(v.before), acctest.DomainLookup(v.after)
		res := "libvirt_volume." + v.label
		firstState = append(firstState, acctest.State(res, "format", "raw", "capacity_bytes", int64(size))...)
		secondState = append(secondState, acctest.State(res, "format", "raw", "capacity_bytes", int64(size))...)
		noops = append(noops, acctest.Planned(res, acctest.Noop), acctest.Planned("libvirt_domain."+v.label+"_before", acctest.Noop))
		firstChecks = append(firstChecks,
			acctest.CheckVolume(t, acctest.Pool(), v.vol, func(i *libvirt.VolumeInfo) error {
				if i.Format != "raw" || i.Capacity != size {
					return fmt.Errorf("libvirt says %s is %q of %d bytes, want raw and %d", v.vol, i.Format, i.Capacity, size)
				}
				return nil
			}),
			diskDriver(v.before))
		secondChecks = append(secondChecks,
			resource.TestCheckResourceAttr(res+"_copy", "format", "raw"),
			resource.TestCheckResourceAttr(res+"_copy", "capacity_bytes", fmt.Sprint(size)),
			func(s *terraform.State) error {
				return resource.TestCheckResourceAttr("libvirt_volume_export."+v.label, "sha256", v.sum)(s)
			},
			acctest.HostCheck(func() error {
				b, err := os.ReadFile(v.export)
				if err != nil {
					return err
				}
				if got := sumOf(b); got != v.sum {
					return fmt.Errorf("export %s: sha256 %s (%d bytes), want the raw file's %s", v.export, got, len(b), v.sum)
				}
				return nil
			}),
			acctest.CheckVolume(t, acctest.Pool(), v.copyVol, func(i *libvirt.VolumeInfo) error {
				b, err := acctest.VolumeContent(t, i.Key)
				if err != nil {
					return err
				}
				if got := sumOf(b); got != v.sum {
					return fmt.Errorf("copy %s: sha256 %s (%d bytes), want the raw file's %s", v.copyVol, got, len(b), v.sum)
				}
				if !bytes.HasPrefix(b, []byte("QFI\xfb")) {
					return fmt.Errorf("copy %s does not start with the header the guest wrote", v.copyVol)
				}
				return nil
			}),
			// libvirt still reads the original as qcow2: the provider did not follow it.
			acctest.CheckVolume(t, acctest.Pool(), v.vol, func(i *libvirt.VolumeInfo) error {
				if i.Format != "qcow2" {
					return fmt.Errorf("libvirt says %s is %q, want its probe (qcow2) unchanged", v.vol, i.Format)
				}
				return nil
			}),
			diskDriver(v.before),
			diskDriver(v.after))
	}
	secondChecks = append(secondChecks, neverOpened)
	for _, n := range volumes {
		gone["volume "+acctest.Pool()+"/"+n] = acctest.VolumeLookup(acctest.Pool(), n)
	}

	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(gone),
		Steps: []resource.TestStep{
			{
				Config:            first,
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: firstState,
				Check:             resource.ComposeAggregateTestCheckFunc(firstChecks...),
			},
			{
				// The headers are written, the pool rescanned: the raw volumes and the domains
				// on them plan no change; the copies, the exports and the new domains read
				// them as raw.
				PreConfig:         writeHeaders,
				Config:            second,
				ConfigPlanChecks:  acctest.Plans(noops...),
				ConfigStateChecks: secondState,
				Check:             resource.ComposeAggregateTestCheckFunc(secondChecks...),
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
