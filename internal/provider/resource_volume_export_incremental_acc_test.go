package provider_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// qemuImg runs qemu-img and returns its output.
func qemuImg(args ...string) (string, error) {
	out, err := exec.Command("qemu-img", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("qemu-img %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// backingOf is the backing file qemu-img finds in the header of img ("" for none), after
// checking the image.
func backingOf(img string) (string, error) {
	if _, err := qemuImg("check", img); err != nil {
		return "", err
	}
	out, err := qemuImg("info", "--output=json", img)
	if err != nil {
		return "", err
	}
	var info struct {
		Backing string `json:"full-backing-filename"`
		Format  string `json:"backing-filename-format"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return "", err
	}
	if info.Backing != "" && info.Format != "qcow2" {
		return "", fmt.Errorf("%s: backing format %q, want qcow2", img, info.Format)
	}
	return info.Backing, nil
}

// stateAttr is an attribute of the export in state.
func stateAttr(s *terraform.State, key string) string {
	if r, ok := s.RootModule().Resources["libvirt_volume_export.inc"]; ok {
		return r.Primary.Attributes[key]
	}
	return ""
}

// TestAccVolumeExport_incremental proves an incremental chain against a running guest
// with a 64 MiB qcow2 data disk (24 MiB of it written before the boot): step 1 is a full
// export with a checkpoint libvirt lists; 1 MiB of random data is then written inside
// the guest, the guest paused, and step 2 (new triggers) is an in-place update whose link
// is a small qcow2 backed by the full file, equal (qemu-img compare) to a copy of the disk
// taken while the guest is still paused; step 3, after the previous checkpoint was
// deleted by hand, is a full link without backing file. A second chain of the same disk,
// made in the same apply as the first, runs alongside. Destroy removes the checkpoints
// (the domain, defined outside Terraform, outlives the test's resources) and the files.
func TestAccVolumeExport_incremental(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("vxi")
	dir := t.TempDir()
	root := acctest.Overlay(t, name+".qcow2")
	data := acctest.DataVolume(t, name+"-data.qcow2", 64<<20, "1.1")
	if _, err := exec.Command("qemu-io", "-f", "qcow2", "-c", "write -P 0x5a 0 24M", data).CombinedOutput(); err != nil {
		t.Fatalf("fill the data disk: %v", err)
	}
	const res = "libvirt_volume_export.inc"
	full := filepath.Join(dir, "week.qcow2")
	// other is a second chain of the same disk, made in the same apply as the first link
	// of inc: the two backups take turns, and their checkpoints interleave on the disk. It
	// is quiesced (the guest agent freezes the filesystems for the job's start).
	other := filepath.Join(dir, "other.qcow2")
	config := func(n int) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_volume_export", "inc", attr("volume_id", data),
			attr("path", full), attr("incremental", hcl("true")), attr("remove_on_destroy", hcl("true")),
			attr("triggers", hcl(fmt.Sprintf("{ day = %q }", strconv.Itoa(n))))) +
			resourceHCL("libvirt_volume_export", "other", attr("volume_id", data), attr("path", other),
				attr("incremental", hcl("true")), attr("quiesce", hcl("true")), attr("remove_on_destroy", hcl("true")))
	}
	var prefix string
	var fullSize int64
	link := func(i int) string { return filepath.Join(dir, fmt.Sprintf("week.%d.qcow2", i)) }
	timed := func(step string, start time.Time) { t.Logf("%s: %s", step, time.Since(start).Round(time.Millisecond)) }
	var started time.Time
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			left, err := acctest.Checkpoints(t, name, "tfexport-")
			if err != nil || len(left) > 0 || prefix == "" {
				return fmt.Errorf("checkpoints of %s after destroy: %v %v", name, left, err)
			}
			for _, f := range []string{full, link(1), link(2), other} {
				if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("%s still there after destroy (remove_on_destroy): %v", f, err)
				}
			}
			return checkNoExportTemps(t, name)(nil)
		},
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					acctest.DefineGuestWithData(t, name, root, data)
					acctest.WaitForAgent(t, name)
					started = time.Now()
				},
				Config:           config(1),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error { timed("full export (step 1 apply)", started); return nil },
					resource.TestCheckResourceAttr(res, "id", full),
					resource.TestCheckResourceAttr(res, "chain.#", "1"),
					resource.TestCheckResourceAttr(res, "chain.0.path", full),
					resource.TestCheckResourceAttr(res, "chain.0.incremental", "false"),
					resource.TestCheckResourceAttrPair(res, "size_bytes", res, "chain.0.size_bytes"),
					checkExportFile(res, "none", nil),
					// The second chain is quiesced: its copy point ran the guest's freeze hook.
					checkQuiesced(t, name, "freeze", "thaw"),
					func(s *terraform.State) error {
						cp := stateAttr(s, "chain.0.checkpoint")
						prefix = strings.TrimSuffix(cp, "0")
						got, err := acctest.Checkpoints(t, name, prefix)
						if err != nil || len(got) != 1 || got[0] != cp {
							return fmt.Errorf("libvirt lists checkpoints %v of %s (%v), want [%s]", got, name, err, cp)
						}
						if all, err := acctest.Checkpoints(t, name, "tfexport-"); err != nil || len(all) != 2 {
							return fmt.Errorf("checkpoints of both chains: %v (%v), want 2", all, err)
						}
						if b, err := backingOf(full); err != nil || b != "" {
							return fmt.Errorf("full export: backing %q (%v), want none", b, err)
						}
						fullSize, _ = strconv.ParseInt(stateAttr(s, "size_bytes"), 10, 64)
						t.Logf("full export: %d bytes", fullSize)
						return checkNoExportTemps(t, name)(s)
					},
				),
			},
			{
				PreConfig: func() {
					if _, err := acctest.GuestExec(t, name, "/bin/sh", "-c",
						"dd if=/dev/urandom of=/dev/vdb bs=64k seek=160 count=16 conv=fsync && sync"); err != nil {
						t.Fatal(err)
					}
					// Paused from here to the reference copy: the second copy point is this state.
					acctest.SuspendDomain(t, name)
					started = time.Now()
				},
				Config:           config(2),
				ConfigPlanChecks: acctest.Does(res, acctest.Update),
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error { timed("incremental export (step 2 apply)", started); return nil },
					resource.TestCheckResourceAttr(res, "id", link(1)),
					resource.TestCheckResourceAttr(res, "chain.#", "2"),
					resource.TestCheckResourceAttr(res, "chain.1.path", link(1)),
					resource.TestCheckResourceAttr(res, "chain.1.incremental", "true"),
					checkExportFile(res, "none", nil),
					func(s *terraform.State) error {
						defer acctest.ResumeDomain(t, name)
						size, _ := strconv.ParseInt(stateAttr(s, "size_bytes"), 10, 64)
						t.Logf("incremental export: %d bytes (full: %d)", size, fullSize)
						if size <= 0 || size >= fullSize/4 {
							return fmt.Errorf("incremental link is %d bytes, want under a quarter of the full export's %d", size, fullSize)
						}
						if b, err := backingOf(link(1)); err != nil || b != full {
							return fmt.Errorf("link 1: backing %q (%v), want %s", b, err, full)
						}
						ref := filepath.Join(dir, "reference.qcow2")
						if _, err := qemuImg("convert", "-U", "-f", "qcow2", "-O", "qcow2", data, ref); err != nil {
							return err
						}
						defer os.Remove(ref)
						out, err := qemuImg("compare", "-f", "qcow2", "-F", "qcow2", link(1), ref)
						if err != nil || !strings.Contains(out, "Images are identical") {
							return fmt.Errorf("chain vs the paused disk: %s %v", out, err)
						}
						got, err := acctest.Checkpoints(t, name, prefix)
						if err != nil || len(got) != 2 {
							return fmt.Errorf("checkpoints after link 1: %v (%v), want 2", got, err)
						}
						return checkNoExportTemps(t, name)(s)
					},
				),
			},
			{
				PreConfig: func() { acctest.DeleteCheckpoint(t, name, prefix+"1") },
				Config:    config(3),
				// A warning says the chain restarts; the link is a full copy without backing.
				ConfigPlanChecks: acctest.Does(res, acctest.Update),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "id", link(2)),
					resource.TestCheckResourceAttr(res, "chain.#", "3"),
					resource.TestCheckResourceAttr(res, "chain.2.incremental", "false"),
					checkExportFile(res, "none", nil),
					func(s *terraform.State) error {
						if b, err := backingOf(link(2)); err != nil || b != "" {
							return fmt.Errorf("link 2 after the lost checkpoint: backing %q (%v), want none", b, err)
						}
						size, _ := strconv.ParseInt(stateAttr(s, "size_bytes"), 10, 64)
						if size < fullSize/2 {
							return fmt.Errorf("link 2 is %d bytes, want a full copy (about %d)", size, fullSize)
						}
						return nil
					},
				),
			},
		},
	})
}
