package provider_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// Linked and full clones of a RUNNING guest: each boots on its own disk with its own
// MAC and takes a lease of its own; the source keeps running, its disk unchanged, also
// after the clones are destroyed. The linked clone is imported by name (plans clean,
// then an empty plan), the full one by UUID; memory changes live; a vcpu above the
// ceiling the clone keeps from its source fails at plan time.
func TestAccClone_runningSource(t *testing.T) {
	acctest.RequireAcc(t)
	net := acctest.CreateNetwork(t, true)
	src := acctest.RandomName("clsrc")
	srcUUID, srcDisk := cloneAccSource(t, src, net.Name, false)
	if _, err := cloneAccWaitLeases(t, net.Name, src); err != nil {
		t.Fatal(err)
	}
	fingerprint, err := cloneAccDiskPrint(t, srcDisk)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := acctest.BaseImage(t)
	linked, full := acctest.RandomName("cll"), acctest.RandomName("clf")
	linkedSeed := acctest.Seed(t, linked+"-seed.iso", linked)
	fullSeed := acctest.Seed(t, full+"-seed.iso", full)
	cfg := func(linkedMem string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_clone" "linked" {
  source_domain_id = %q
  name             = %q
  mode             = "linked"
  cloudinit_id     = %q
  %s
}

resource "libvirt_clone" "full" {
  source_domain_id = %q
  name             = %q
  mode             = "full"
  pool             = %q
  cloudinit_id     = %q
}
`, src, linked, linkedSeed, linkedMem, srcUUID, full, acctest.Pool(), fullSeed)
	}
	config := cfg("")
	start := time.Now()
	var linkedRunID int32
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			return errors.Join(
				acctest.CheckGone(map[string]acctest.Lookup{
					"domain " + linked:          acctest.DomainLookup(linked),
					"domain " + full:            acctest.DomainLookup(full),
					"volume " + linked + "-vda": acctest.VolumeLookup(acctest.Pool(), linked+"-vda.qcow2"),
					"volume " + full + "-vda":   acctest.VolumeLookup(acctest.Pool(), full+"-vda.qcow2"),
				})(s),
				cloneAccSourceIntact(t, src, srcDisk, fingerprint))
		},
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State("libvirt_clone.linked",
					"pool", acctest.Pool(),
					"vcpu", 1,
					"memory_mib", 128,
					"running", true,
					"nvram", "",
					"disks", []any{acctest.Partial(map[string]any{
						"target":  "vda",
						"name":    linked + "-vda.qcow2",
						"backing": base, // the source's base image, not its disk
					})},
				), acctest.State("libvirt_clone.full",
					"disks", []any{acctest.Partial(map[string]any{"name": full + "-vda.qcow2", "backing": ""})},
					"macs", acctest.ListSize(1),
				)...),
				Check: func(*terraform.State) error {
					t.Logf("two clones of a running source made and started in %s", time.Since(start).Round(time.Second))
					ips, err := cloneAccWaitLeases(t, net.Name, src, linked, full)
					if err != nil {
						return err
					}
					t.Logf("leases %v, %s after the apply began", ips, time.Since(start).Round(time.Second))
					for _, n := range []string{linked, full} {
						live, err := acctest.InspectDomain(t, n)
						if err != nil {
							return err
						}
						if n == linked {
							linkedRunID = live.ID
						}
						if live.Inactive.UUID == srcUUID {
							return fmt.Errorf("clone %s has the source's UUID", n)
						}
						for _, d := range live.Live.Devices.Disks {
							if d.Source != nil && d.Source.File != nil && (d.Source.File.File == srcDisk || strings.Contains(d.Source.File.File, src+"-seed")) {
								return fmt.Errorf("clone %s uses the source's %s", n, d.Source.File.File)
							}
						}
					}
					return cloneAccSourceIntact(t, src, srcDisk, fingerprint)
				},
			},
			{
				// Import by name with an import block: the plan is a clean import.
				Config:          config,
				ResourceName:    "libvirt_clone.linked",
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   linked,
			},
			{
				Config:       config,
				ResourceName: "libvirt_clone.full",
				ImportState:  true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return s.RootModule().Resources["libvirt_clone.full"].Primary.ID, nil
				},
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config:           config,
				ConfigPlanChecks: acctest.Before(acctest.NoChange()),
			},
			{
				Config:      cfg("vcpu = 2"),
				PlanOnly:    true,
				ExpectError: acctest.ErrorText("Clone " + linked + ": vcpu 2 is above the ceiling of 1 vCPUs it keeps from its source"),
			},
			{
				// Less memory on the running clone: live, through the balloon, no restart.
				Config:            cfg("memory_mib = 96"),
				ConfigPlanChecks:  acctest.Updates("libvirt_clone.linked", ""),
				ConfigStateChecks: acctest.State("libvirt_clone.linked", "memory_mib", 96),
				Check: func(*terraform.State) error {
					live, err := acctest.InspectDomain(t, linked)
					if err != nil {
						return err
					}
					// The balloon target is set live; how fast the guest gives the memory
					// back is the guest's business, so the definition is what is checked,
					// and that the clone kept running (same running id: no restart).
					if !live.Active || live.ID != linkedRunID || live.Inactive.CurrentMemory.Value != 96*1024 {
						return fmt.Errorf("clone %s: active %v, running id %d (was %d), defined current memory %+v, want 96 MiB without a restart",
							linked, live.Active, live.ID, linkedRunID, live.Inactive.CurrentMemory)
					}
					return nil
				},
			},
		},
	})
}

// A UEFI source, running (the tiny guest need not boot under UEFI: the domain only has to
// be defined and started): the linked clone gets its own varstore, a copy of the
// source's, at another path; the source is running again after the copy (paused for
// it). Then a full clone of the source shut off, by then with a vsock on a fixed CID
// (define-only: the host has no vhost-vsock): the clone's CID is libvirt's to assign.
// Destroy removes the clones' varstores
// and leaves the source's. Plan-time errors first: a missing source, a name that is
// taken, more vCPUs than the source's ceiling; then a create that fails late and
// leaves nothing behind.
func TestAccClone_uefi(t *testing.T) {
	acctest.RequireAcc(t)
	src := acctest.RandomName("clsrc")
	cloneAccSource(t, src, "", true)
	srcNVRAM := ""
	deadline := time.Now().Add(time.Minute)
	for srcNVRAM == "" {
		live, err := acctest.InspectDomain(t, src)
		if err != nil {
			t.Fatal(err)
		}
		if live.Live.OS.NVRam != nil {
			srcNVRAM = live.Live.OS.NVRam.NVRam
		}
		if time.Now().After(deadline) {
			t.Fatalf("UEFI source %s shows no nvram", src)
		}
	}
	if _, err := os.Stat(srcNVRAM); err != nil {
		t.Fatalf("source nvram: %v", err)
	}
	linked, full := acctest.RandomName("cll"), acctest.RandomName("clf")
	one := func(name, source, extra string) string {
		return fmt.Sprintf(`
resource "libvirt_clone" %q {
  source_domain_id = %q
  name             = %q
  %s
}
`, strings.SplitN(name, "-", 3)[1], source, name, extra)
	}
	linkedCfg := acctest.ProviderBlock("") + one(linked, src, `mode = "linked"`)
	bothCfg := linkedCfg + one(full, src, "mode = \"full\"\n  running = false")
	rb := acctest.RandomName("clr")
	rbNVRAM := strings.TrimSuffix(srcNVRAM, src+"_VARS.fd") + rb + "_VARS.fd"
	linkedNVRAM := strings.TrimSuffix(srcNVRAM, src+"_VARS.fd") + linked + "_VARS.fd"
	fullNVRAM := strings.TrimSuffix(srcNVRAM, src+"_VARS.fd") + full + "_VARS.fd"
	exists := func(p string) error {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("nvram %s: %w", p, err)
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			errs := []error{acctest.CheckGone(map[string]acctest.Lookup{
				"domain " + linked:          acctest.DomainLookup(linked),
				"domain " + full:            acctest.DomainLookup(full),
				"volume " + linked + "-vda": acctest.VolumeLookup(acctest.Pool(), linked+"-vda.qcow2"),
				"volume " + full + "-vda":   acctest.VolumeLookup(acctest.Pool(), full+"-vda.qcow2"),
			})(s), exists(srcNVRAM)}
			for _, p := range []string{linkedNVRAM, fullNVRAM} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, fmt.Errorf("clone nvram %s left behind (stat: %v)", p, err))
				}
			}
			return errors.Join(errs...)
		},
		Steps: []resource.TestStep{
			{
				Config:      acctest.ProviderBlock("") + one(linked, acctest.RandomName("missing"), `mode = "linked"`),
				PlanOnly:    true,
				ExpectError: acctest.ErrorText("does not exist on"),
			},
			{
				Config:      acctest.ProviderBlock("") + one(src, src, `mode = "full"`),
				PlanOnly:    true,
				ExpectError: acctest.ErrorText(fmt.Sprintf("A domain named %q already exists", src)),
			},
			{
				Config:      acctest.ProviderBlock("") + one(linked, src, "mode = \"linked\"\n  vcpu = 2"),
				PlanOnly:    true,
				ExpectError: acctest.ErrorText("Clone " + linked + ": vcpu 2 is above the ceiling of 1 vCPUs"),
			},
			{
				// A create that fails late (here: the varstore copy, since a file is in
				// the way) removes the disk and the domain it had made.
				PreConfig: func() {
					if err := os.WriteFile(rbNVRAM, []byte("in the way"), 0o600); err != nil {
						t.Fatal(err)
					}
				},
				Config:      acctest.ProviderBlock("") + one(rb, src, `mode = "linked"`),
				ExpectError: acctest.ErrorText("Everything the create had made was removed again"),
			},
			{
				PreConfig: func() {
					os.Remove(rbNVRAM)
					if err := acctest.CheckGone(map[string]acctest.Lookup{
						"domain " + rb:          acctest.DomainLookup(rb),
						"volume " + rb + "-vda": acctest.VolumeLookup(acctest.Pool(), rb+"-vda.qcow2"),
					})(nil); err != nil {
						t.Fatalf("after the failed create: %v", err)
					}
				},
				Config:           linkedCfg,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State("libvirt_clone.cll",
					"nvram", linkedNVRAM,
					"macs", acctest.ListSize(0),
				),
				Check: func(*terraform.State) error {
					live, err := acctest.InspectDomain(t, linked)
					if err != nil {
						return err
					}
					if !live.Active || live.Live.OS.NVRam == nil || live.Live.OS.NVRam.NVRam != linkedNVRAM {
						return fmt.Errorf("clone %s: active %v, live nvram %+v, want %s", linked, live.Active, live.Live.OS.NVRam, linkedNVRAM)
					}
					s, err := acctest.InspectDomain(t, src)
					if err != nil {
						return err
					}
					if st, err := acctest.Client(t).DomainState(acctest.Ctx(t), src); err != nil || st != "running" || !s.Active {
						return fmt.Errorf("source %s is %s after the clone (want running: resumed after the nvram copy): %v", src, st, err)
					}
					t.Logf("UEFI clone %s runs with its own varstore %s (source's: %s)", linked, linkedNVRAM, srcNVRAM)
					return errors.Join(exists(linkedNVRAM), exists(srcNVRAM))
				},
			},
			{
				// The source shut off: a full clone (storage copy, no block job) with the
				// source's varstore copied from libvirt's default place. The source now
				// has a vsock on a fixed CID: the clone's is one libvirt assigns.
				PreConfig: func() {
					acctest.ForceOff(t, src)
					cloneAccFixedVSock(t, src, "5")
				},
				Config:           bothCfg,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State("libvirt_clone.clf",
					"running", false,
					"nvram", fullNVRAM,
					"disks", []any{acctest.Partial(map[string]any{"backing": ""})},
				),
				Check: func(*terraform.State) error {
					for name, want := range map[string]string{src: "5", full: "auto"} {
						if cid, err := cloneAccVSockCID(t, name); err != nil || cid != want {
							return fmt.Errorf("domain %s: vsock CID %q, want %q (%v)", name, cid, want, err)
						}
					}
					a, err := os.ReadFile(srcNVRAM)
					if err != nil {
						return err
					}
					b, err := os.ReadFile(fullNVRAM)
					if err != nil {
						return fmt.Errorf("the full clone's varstore was not copied: %w", err)
					}
					if string(a) != string(b) {
						return fmt.Errorf("the full clone's varstore %s (%d bytes) is not a copy of the source's (%d bytes)", fullNVRAM, len(b), len(a))
					}
					return nil
				},
			},
		},
	})
}
