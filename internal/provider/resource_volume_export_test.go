package provider_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/export"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/qcow2"
)

// exportTempVolumes lists the temporary export volumes of the volume named source left in
// the test pool (asking libvirt, after a pool refresh).
func exportTempVolumes(t *testing.T, source string) ([]string, error) {
	return acctest.VolumeNames(t, acctest.Pool(), func(n string) bool {
		return strings.HasPrefix(n, source) && libvirt.IsExportTemp(n)
	})
}

func checkNoExportTemps(t *testing.T, source string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		left, err := exportTempVolumes(t, source)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("temporary export volumes left in pool %s: %v", acctest.Pool(), left)
		}
		return nil
	}
}

func checkNoPartials(dir string) error {
	m, _ := filepath.Glob(filepath.Join(dir, "*"+export.PartialSuffix))
	if len(m) > 0 {
		return fmt.Errorf("partial files left: %v", m)
	}
	return nil
}

// checkExportFile compares a libvirt_volume_export's sha256 and size_bytes with its file,
// and hands the decompressed image to fn.
func checkExportFile(res, compression string, fn func(img string) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		r, ok := s.RootModule().Resources[res]
		if !ok {
			return fmt.Errorf("%s not in state", res)
		}
		a := r.Primary.Attributes
		sum, size, err := export.HashFile(a["id"])
		if err != nil {
			return fmt.Errorf("%s: %w", res, err)
		}
		if a["sha256"] != sum || a["size_bytes"] != strconv.FormatInt(size, 10) {
			return fmt.Errorf("%s: state says sha256 %s, %s bytes; the file %s has %s, %d bytes", res, a["sha256"], a["size_bytes"], a["id"], sum, size)
		}
		img := a["id"]
		if compression != export.None {
			img = filepath.Join(filepath.Dir(a["id"]), "check-"+filepath.Base(a["id"])+".img")
			if err := decompressFile(a["id"], img, compression); err != nil {
				return fmt.Errorf("%s: %w", res, err)
			}
			defer os.Remove(img)
		}
		if fn == nil {
			return nil
		}
		if err := fn(img); err != nil {
			return fmt.Errorf("%s: %w", res, err)
		}
		return nil
	}
}

func decompressFile(src, dst, compression string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	r, err := export.NewDecompressor(in, compression)
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("decompress %s (%s): %w", src, compression, err)
	}
	return out.Close()
}

// standaloneQCOW2 wants a qcow2 image without a backing file, of the given virtual size,
// that qemu-img check finds sound.
func standaloneQCOW2(size int64) func(string) error {
	return func(img string) error {
		h, err := qcow2Header(img)
		if err != nil {
			return err
		}
		if h.HasBacking || int64(h.VirtualSize) != size {
			return fmt.Errorf("qcow2 header: backing file %v, virtual size %d; want standalone, %d", h.HasBacking, h.VirtualSize, size)
		}
		if out, err := exec.Command("qemu-img", "check", "-f", "qcow2", img).CombinedOutput(); err != nil {
			return fmt.Errorf("qemu-img check: %v: %s", err, out)
		}
		return nil
	}
}

// rawOf wants a raw image of the given size whose content is the guest image's.
func rawOf(guestImage string, size int64) func(string) error {
	return func(img string) error {
		st, err := os.Stat(img)
		if err != nil {
			return err
		}
		if st.Size() != size {
			return fmt.Errorf("raw image is %d bytes, want the volume's capacity %d", st.Size(), size)
		}
		if qcow2.IsQCOW2(head(img)) {
			return errors.New("the raw export is a qcow2 image")
		}
		// The tiny guest runs from its initramfs and leaves its disk as it booted.
		if out, err := exec.Command("qemu-img", "compare", "-f", "raw", "-F", "qcow2", img, guestImage).CombinedOutput(); err != nil {
			return fmt.Errorf("qemu-img compare with the guest image: %v: %s", err, out)
		}
		return nil
	}
}

func head(p string) []byte {
	b := make([]byte, 8)
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	n, _ := io.ReadFull(f, b)
	return b[:n]
}

// TestAccVolumeExport_runningGuest exports the disk of a running guest (a qcow2 overlay)
// four ways — qcow2 and raw, each plain and compressed (zstd, gzip) — and proves each file
// is what the state says (sha256, size), the qcow2 ones standalone and sound, the raw ones
// the guest's disk; no temporary volume stays in the pool. Step 2 boots a new domain from
// the zstd qcow2 export, decompressed and uploaded with libvirt_volume.source_file, and
// gets its IP; it also turns remove_on_destroy on in place (no new export) and finds a
// deleted export file made again. CheckDestroy: files removed only with remove_on_destroy.
func TestAccVolumeExport_runningGuest(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vx")
	dir := t.TempDir()
	img := acctest.GuestImage(t)
	size := imageVirtualSize(t, img)
	back := filepath.Join(dir, "back.qcow2")
	host := strings.ReplaceAll(name, "tfacc-", "tfaccvm-")
	// guest is a running domain on the volume vol with the seed seed, waiting for its lease.
	guest := func(label, name, seed, vol string) string {
		return resourceHCL("libvirt_domain", label, attr("name", name), attr("vcpu", 1), attr("memory_mib", 256),
			attr("cloudinit_id", hcl("libvirt_cloudinit_iso."+seed+".id")),
			"disk {\n    volume_id = libvirt_volume."+vol+".id\n  }",
			fmt.Sprintf("network_interface {\n    network = %q\n    wait_for_ip {\n      source  = \"lease\"\n      timeout = \"5m\"\n    }\n  }", acctest.Network()))
	}
	seed := func(label, file, instance, host string) string {
		return resourceHCL("libvirt_cloudinit_iso", label, attr("name", file), attr("pool", acctest.Pool()),
			attr("instance_id", instance), attr("hostname", host))
	}
	// export is a libvirt_volume_export of the root volume, after the guest runs.
	exportHCL := func(label, file string, lines ...string) string {
		return resourceHCL("libvirt_volume_export", label, append([]string{attr("volume_id", hcl("libvirt_volume.root.id")),
			attr("path", filepath.Join(dir, file)), attr("depends_on", hcl("[libvirt_domain.test]"))}, lines...)...)
	}
	config := func(step2 bool) string {
		cfg := acctest.ProviderBlock("") +
			volumeHCL("base", name+"-base.qcow2", attr("source_file", img)) +
			volumeHCL("root", name+"-root.qcow2", attr("backing_volume", hcl("libvirt_volume.base.id"))) +
			seed("seed", name+"-seed.iso", name, host) +
			guest("test", name, "seed", "root") +
			exportHCL("q_none", "disk.qcow2", attr("remove_on_destroy", step2)) +
			exportHCL("q_zstd", "disk.qcow2.zst", attr("format", "qcow2"), attr("compression", "zstd"), attr("remove_on_destroy", true)) +
			exportHCL("r_none", "disk.raw", attr("format", "raw")) +
			exportHCL("r_gzip", "disk.raw.gz", attr("format", "raw"), attr("compression", "gzip"), attr("remove_on_destroy", true),
				attr("triggers", hcl("{ domain = libvirt_domain.test.id }")))
		if step2 {
			cfg += volumeHCL("back", name+"-back.qcow2", attr("source_file", back)) +
				seed("seed_back", name+"-seed-back.iso", name+"-back", host+"-back") +
				guest("back", name+"-back", "seed_back", "back")
		}
		return cfg
	}
	file := func(n string) string { return filepath.Join(dir, n) }
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			errs := []error{acctest.CheckGone(map[string]acctest.Lookup{
				"domain " + name:           acctest.DomainLookup(name),
				"domain " + name + "-back": acctest.DomainLookup(name + "-back"),
				"volume root":              acctest.VolumeLookup(acctest.Pool(), name+"-root.qcow2"),
				"volume back":              acctest.VolumeLookup(acctest.Pool(), name+"-back.qcow2"),
			})(s), checkNoPartials(dir)}
			for _, f := range []string{"disk.qcow2", "disk.qcow2.zst", "disk.raw.gz"} {
				if _, err := os.Stat(file(f)); !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, fmt.Errorf("%s (remove_on_destroy = true) still there after destroy: %v", f, err))
				}
			}
			if _, err := os.Stat(file("disk.raw")); err != nil {
				errs = append(errs, fmt.Errorf("disk.raw (remove_on_destroy = false) must stay after destroy: %w", err))
			}
			return errors.Join(errs...)
		},
		Steps: []resource.TestStep{
			{
				Config:           config(false),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State("libvirt_volume_export.q_none",
					"id", file("disk.qcow2"),
					"format", "qcow2",
					"compression", "none",
					"remove_on_destroy", false,
				), acctest.StateIs("libvirt_domain.test", "state", "running")),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkExportFile("libvirt_volume_export.q_none", export.None, standaloneQCOW2(size)),
					checkExportFile("libvirt_volume_export.q_zstd", export.Zstd, standaloneQCOW2(size)),
					checkExportFile("libvirt_volume_export.r_none", export.None, rawOf(img, size)),
					checkExportFile("libvirt_volume_export.r_gzip", export.Gzip, rawOf(img, size)),
					checkNoExportTemps(t, name),
					func(*terraform.State) error { return checkNoPartials(dir) },
				),
			},
			{
				PreConfig: func() {
					if err := decompressFile(file("disk.qcow2.zst"), back, export.Zstd); err != nil {
						t.Fatal(err)
					}
					// An export file deleted outside Terraform is made again.
					if err := os.Remove(file("disk.raw")); err != nil {
						t.Fatal(err)
					}
				},
				Config:           config(true),
				ConfigPlanChecks: acctest.Does("libvirt_volume_export.q_none", acctest.Update, acctest.Planned("libvirt_volume_export.r_none", acctest.Create), acctest.Planned("libvirt_volume_export.q_zstd", acctest.Noop)),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.StateIs("libvirt_volume_export.q_none", "remove_on_destroy", true),
					acctest.StateIs("libvirt_domain.back", "ip_address", ipv4),
					acctest.StateIs("libvirt_volume.back", "format", "qcow2"),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkExportFile("libvirt_volume_export.r_none", export.None, rawOf(img, size)),
					checkExportFile("libvirt_volume_export.q_none", export.None, nil),
					checkNoExportTemps(t, name),
				),
			},
		},
	})
}

// mountSmallDisk gives a directory on which writing fails with "no space left on device"
// after about 4 MiB: a small tmpfs (the tests run as root in their own mount namespace,
// `ip netns exec`); a host that does not allow it fails the test.
func mountSmallDisk(t *testing.T) string {
	dir := t.TempDir()
	if err := syscall.Mount("tfacc-export", dir, "tmpfs", 0, "size=4m"); err != nil {
		// The partial file has a random name now (no link to /dev/full can be planted at
		// it), and the test host runs as root: a failed mount is a broken host.
		t.Fatalf("cannot mount a small tmpfs for the full-disk export: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestAccVolumeExport_failure: an export that fails mid-stream (the local disk fills up
// after 4 MiB of a 14 MiB raw image converted on the host) fails the apply with the
// cause, and leaves neither the temporary volume in the pool nor a .partial file.
func TestAccVolumeExport_failure(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vx")
	dir := mountSmallDisk(t)
	want := `Unable to export volume.*no space left on device.*partial file .*disk\.raw\.[0-9]+\.partial was removed`
	vol := volumeHCL("src", name+".qcow2", attr("source_file", acctest.GuestImage(t)))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.VolumesGone(name + ".qcow2"),
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderBlock("") + vol + resourceHCL("libvirt_volume_export", "x",
					attr("volume_id", hcl("libvirt_volume.src.id")), attr("path", dir+"/disk.raw"), attr("format", "raw")),
				ExpectError: acctest.Wrapped(want),
			},
			{
				Config: acctest.ProviderBlock("") + vol,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkNoExportTemps(t, name),
					func(*terraform.State) error {
						if err := checkNoPartials(dir); err != nil {
							return err
						}
						if _, err := os.Stat(filepath.Join(dir, "disk.raw")); !errors.Is(err, os.ErrNotExist) {
							return fmt.Errorf("destination made by the failed export: %v", err)
						}
						return nil
					},
				),
			},
		},
	})
}

// Plan-time validation of libvirt_volume_export: no daemon is asked.
func TestVolumeExport_validation(t *testing.T) {
	dir := t.TempDir()
	expectPlanErrors(t, "resource \"libvirt_volume_export\" \"x\" {\n  %s\n}\n", []planCase{
		{"missing directory", `volume_id = "default/a.qcow2"
  path = "` + dir + `/nope/disk.qcow2"`, `Invalid export path.*the directory of path .*nope/disk.qcow2.*no such file or directory.*create the directory first`},
		{"path is a directory", `volume_id = "default/a.qcow2"
  path = "` + dir + `"`, `Invalid export path.*is a directory: name a file in it`},
		{"trailing slash", `volume_id = "default/a.qcow2"
  path = "` + dir + `/"`, `Invalid export path.*ends with a separator`},
		{"empty path", `volume_id = "default/a.qcow2"
  path = ""`, `Invalid export path.*must not be empty`},
		{"format enum", `volume_id = "default/a.qcow2"
  path = "` + dir + `/d"
  format = "vmdk"`, `Attribute format value must be one of: \["qcow2" "raw"\], got: "vmdk"`},
		{"compression enum", `volume_id = "default/a.qcow2"
  path = "` + dir + `/d"
  compression = "xz"`, `Attribute compression value must be one of: \["none" "gzip" "zstd"\], got: "xz"`},
		{"volume id", `volume_id = ""
  path = "` + dir + `/d"`, `Invalid volume id.*volume_id.*volume id is empty`},
	})
}
