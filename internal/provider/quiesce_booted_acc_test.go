package provider_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// quiesceHookLog is where the tiny guest's qemu-ga freeze hook writes "<n> <action> <uptime>".
const quiesceHookLog = "/run/tinyguest/fsfreeze.log"

// quiesceHookActions is the actions the guest's freeze hook logged so far, in order.
func quiesceHookActions(t *testing.T, dom string) ([]string, error) {
	out, err := acctest.GuestExec(t, dom, "/bin/sh", "-c", "cat "+quiesceHookLog+" 2>/dev/null; true")
	if err != nil {
		return nil, err
	}
	t.Logf("freeze hook log of %s (n, action, guest uptime):\n%s", dom, out)
	var actions []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			actions = append(actions, f[1])
		}
	}
	return actions, nil
}

// checkQuiesced: the hook has logged want (freeze, thaw, ...) so far, and the guest's
// agent answers and reports its filesystems thawed.
func checkQuiesced(t *testing.T, dom string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := quiesceHookActions(t, dom)
		if err != nil {
			return err
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			return fmt.Errorf("freeze hook logged %v, want %v", got, want)
		}
		status, err := acctest.Client(t).GuestFSFreezeStatus(acctest.Ctx(t), dom)
		if err != nil || status != "thawed" {
			return fmt.Errorf("guest-fsfreeze-status after the copy: %q, %v (want thawed)", status, err)
		}
		return nil
	}
}

// checkDiskSource: vda of the running domain dom is on the image at want, in its live XML
// and in its definition.
func checkDiskSource(t *testing.T, dom, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		st, err := acctest.Client(t).GetDomainStatus(acctest.Ctx(t), dom)
		if err != nil {
			return err
		}
		if st.State != "running" {
			return fmt.Errorf("domain %s is %s, want running", dom, st.State)
		}
		on := regexp.MustCompile(`<source file=["']` + regexp.QuoteMeta(want) + `["']`)
		for kind, x := range map[string]string{"live XML": st.LiveXML, "definition": st.XML} {
			if !on.MatchString(x) {
				return fmt.Errorf("domain %s: vda is not on %s in its %s:\n%s", dom, want, kind, x)
			}
		}
		return nil
	}
}

// checkExternalSnapshot: libvirt has snapshot snap of dom, external on the one overlay
// file, which exists.
func checkExternalSnapshot(t *testing.T, dom, snap, overlay string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		s, err := acctest.Client(t).GetSnapshot(acctest.Ctx(t), dom, snap)
		if err != nil {
			return err
		}
		if len(s.Overlays) != 1 || s.Overlays[0] != overlay || s.Memory {
			return fmt.Errorf("snapshot %s: overlays %v memory %v, want external on %s", snap, s.Overlays, s.Memory, overlay)
		}
		_, err = os.Stat(overlay)
		return err
	}
}

// quiesceGuestSh runs a shell command in the guest.
func quiesceGuestSh(t *testing.T, dom, cmd string) {
	t.Helper()
	if _, err := acctest.GuestExec(t, dom, "/bin/sh", "-c", cmd); err != nil {
		t.Fatalf("%s in %s: %v", cmd, dom, err)
	}
}

// fileGone fails while any of the files exists.
func fileGone(paths ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, p := range paths {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%s is still there (%v)", p, err)
			}
		}
		return nil
	}
}

// noPartialsNextTo fails when an export's partial file (<name>.<random>.partial since
// each export writes its own) is left in the directory of path.
func noPartialsNextTo(path string) resource.TestCheckFunc {
	return func(*terraform.State) error { return checkNoPartials(filepath.Dir(path)) }
}

// A quiesced export and a quiesced snapshot of a running tiny guest: the guest's freeze
// hook ran freeze then thaw for each, the guest is thawed after; the snapshot is external
// (an overlay next to the disk) and neither the domain nor the snapshot drifts, also
// after the snapshot alone is destroyed; its revert is refused (libvirt 9.0). With the
// agent stopped, both fail with the agent message and leave nothing.
func TestAccQuiesce_booted(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "quiesce")
	dir := t.TempDir()
	file, file2 := filepath.Join(dir, "disk.qcow2"), filepath.Join(dir, "again.qcow2")
	snap, snap2 := "tfacc-q1", "tfacc-q2"
	overlay, overlay2 := disk+".tfsnap-"+snap, disk+".tfsnap-"+snap2
	diskName := filepath.Base(disk)

	domainCfg := func(more ...string) string {
		return acctest.ProviderBlock("") + domainHCL(name, disk, append([]string{`graphics = { type = "none" }`,
			`wait_for_ready = { timeout = "3m", command = ["/bin/true"] }`}, more...)...)
	}
	exp := func(label, path string) string {
		// After the domain: a disk of the running guest (block copy), not of a domain not yet started.
		return resourceHCL("libvirt_volume_export", label, attr("volume_id", disk), attr("path", path), attr("quiesce", true),
			"depends_on = [libvirt_domain.test]")
	}
	snapshot := func(label, n string) string {
		return resourceHCL("libvirt_snapshot", label, attr("domain_id", hcl("libvirt_domain.test.id")), attr("name", n), attr("quiesce", true))
	}
	withExport := domainCfg() + exp("e", file)
	withSnap := withExport + snapshot("s", snap)
	// From the domain update on (step 4), the domain has a title.
	withExportT := domainCfg(attr("title", "quiesced")) + exp("e", file)
	withSnapT := withExportT + snapshot("s", snap)
	noTemps := checkNoExportTemps(t, diskName)
	file3, file4, snap3, snap4 := filepath.Join(dir, "thaw-retried.qcow2"), filepath.Join(dir, "thaw-failed.qcow2"), "tfacc-q3", "tfacc-q4"
	overlay3, overlay4 := disk+".tfsnap-"+snap3, disk+".tfsnap-"+snap4
	// What the guest's freeze hook has logged after the export and the snapshot (h2), the
	// export whose thaw failed once (hA), the snapshot whose thaw failed once (hB), the
	// export whose thaws all failed (hC), the snapshot whose thaws all failed (hD: libvirt's
	// and the provider's two), its replacement (hE).
	h2 := []string{"freeze", "thaw", "freeze", "thaw"}
	hA := append(slices.Clone(h2), "freeze", "thaw-failed", "thaw")
	hB := append(slices.Clone(hA), "freeze", "thaw-failed", "thaw")
	hC := append(slices.Clone(hB), "freeze", "thaw-failed", "thaw-failed")
	hD := append(slices.Clone(hC), "freeze", "thaw-failed", "thaw-failed", "thaw-failed")
	hE := append(slices.Clone(hD), "freeze", "thaw")
	agentErr := acctest.ErrorText("guest agent not available: domain "+name).String() + `(.|\n)*qemu-guest-agent(.|\n)*org\.qemu\.guest_agent\.0`

	// Serial: one step has the daemon close every connection of this test process
	// (acctest.DropDaemonClients), which cuts the calls of any test running beside it. In
	// CI on 2026-12-05 libvirtd 9.0 exited during that disconnect while other tests'
	// calls (migrations, a clone of a running guest) were in flight, and every test after
	// it failed.
	acctest.RunSerial(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGone(map[string]acctest.Lookup{
				"domain " + name: acctest.DomainLookup(name), "snapshot " + snap: snapLookup(name, snap), "snapshot " + snap2: snapLookup(name, snap2),
				"snapshot " + snap3: snapLookup(name, snap3), "snapshot " + snap4: snapLookup(name, snap4),
			}),
			fileGone(overlay, overlay2, overlay3, overlay4),
		),
		Steps: []resource.TestStep{
			{
				Config:           withExport,
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuiesced(t, name, "freeze", "thaw"),
					checkExportFile("libvirt_volume_export.e", "none", func(string) error { return nil }),
					noTemps,
					checkDiskSource(t, name, disk),
				),
			},
			{
				Config:            withSnap,
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(snapRes, "quiesce", true, "memory", false, "domain_state", "disk-snapshot"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuiesced(t, name, "freeze", "thaw", "freeze", "thaw"),
					checkDiskSource(t, name, overlay), // the guest writes into the overlay now
					checkExternalSnapshot(t, name, snap, overlay),
				),
			},
			{
				// Another refresh and plan of domain + snapshot: nothing to do.
				Config:   withSnap,
				PlanOnly: true,
			},
			{
				// An update of the domain while the snapshot exists rewrites its definition
				// and keeps the disk on the overlay (back on the base it would lose the
				// guest's writes since the snapshot); still no drift after.
				Config:           withSnapT,
				ConfigPlanChecks: acctest.Updates(domRes, ""),
				Check:            checkDiskSource(t, name, overlay),
			},
			{
				ResourceName: snapRes, ImportState: true, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// libvirt 9.0 cannot revert an external snapshot: refused, nothing changed.
				Config: withSnapT + `
resource "libvirt_snapshot_revert" "r" {
  snapshot_id = libvirt_snapshot.s.id
}
`,
				ExpectError: regexp.MustCompile(acctest.ErrorText("is external").String() + `(.|\n)*` + acctest.ErrorText("reverts external snapshots only from 9.9; nothing was changed").String()),
			},
			{
				// The snapshot alone destroyed (after checking the failed revert changed nothing): committed back, overlay gone, the domain on
				// its disk again, and still no drift.
				PreConfig:        func() { mustPass(t, checkDiskSource(t, name, overlay)) },
				Config:           withExportT,
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkDiskSource(t, name, disk),
					fileGone(overlay),
					acctest.CheckGone(map[string]acctest.Lookup{"snapshot " + snap: snapLookup(name, snap)}),
					func(*terraform.State) error {
						left, err := acctest.VolumeNames(t, acctest.Pool(), func(n string) bool { return strings.Contains(n, ".tfsnap-") && strings.HasPrefix(n, diskName) })
						if err == nil && len(left) > 0 {
							err = fmt.Errorf("overlay volumes left in the pool: %v", left)
						}
						return err
					},
				),
			},
			// A thaw that fails: the guest's freeze hook fails it once (fail-thaw-once) or
			// every time (fail-thaw); qemu-ga has thawed the filesystems by then.
			{
				// The export's thaw fails once: sent again, it works; the copy stands.
				PreConfig:        func() { quiesceGuestSh(t, name, "touch /run/tinyguest/fail-thaw-once") },
				Config:           withExportT + exp("e3", file3),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuiesced(t, name, hA...),
					checkExportFile("libvirt_volume_export.e3", "none", func(string) error { return nil }),
					noTemps,
				),
			},
			{
				// libvirt's own thaw of a quiesced snapshot fails once: libvirt fails the
				// create after taking it (and 9.0 drops its metadata); the provider finds
				// the guest on the overlay, defines the snapshot again, thaws the guest.
				PreConfig:        func() { quiesceGuestSh(t, name, "touch /run/tinyguest/fail-thaw-once") },
				Config:           withExportT + exp("e3", file3) + snapshot("s3", snap3),
				ConfigPlanChecks: acctest.Plans(),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuiesced(t, name, hB...),
					checkDiskSource(t, name, overlay3),
					checkExternalSnapshot(t, name, snap3, overlay3),
				),
			},
			{
				// That snapshot deletes like any other: committed back, overlay gone.
				Config:           withExportT + exp("e3", file3),
				ConfigPlanChecks: acctest.Plans(),
				Check:            resource.ComposeAggregateTestCheckFunc(checkDiskSource(t, name, disk), fileGone(overlay3)),
			},
			{
				// Every thaw fails: the export fails saying the guest may still be frozen ...
				PreConfig:   func() { quiesceGuestSh(t, name, "touch /run/tinyguest/fail-thaw") },
				Config:      withExportT + exp("e3", file3) + exp("e4", file4),
				ExpectError: regexp.MustCompile(acctest.ErrorText("the guest may still be frozen").String() + `(.|\n)*` + acctest.ErrorText("virsh domfsthaw "+name).String()),
			},
			{
				// ... and leaves no file and no temporary volume. The snapshot was taken
				// (frozen) and is kept in state, tainted; the error says the guest may be frozen.
				PreConfig:   func() { mustPass(t, checkQuiesced(t, name, hC...), noTemps, fileGone(file4), noPartialsNextTo(file4)) },
				Config:      withExportT + exp("e3", file3) + snapshot("s4", snap4),
				ExpectError: regexp.MustCompile(acctest.ErrorText("snapshot "+snap4+" was taken all the same").String() + `(.|\n)*` + acctest.ErrorText("may still be frozen").String()),
			},
			{
				// Thaws work again: the next apply replaces the tainted snapshot.
				PreConfig: func() {
					quiesceGuestSh(t, name, "rm /run/tinyguest/fail-thaw")
					// libvirt's thaw, then the provider's two.
					mustPass(t, checkQuiesced(t, name, hD...),
						checkExternalSnapshot(t, name, snap4, overlay4))
				},
				Config:           withExportT + exp("e3", file3) + snapshot("s4", snap4),
				ConfigPlanChecks: acctest.Does("libvirt_snapshot.s4", acctest.DestroyBeforeCreate),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkQuiesced(t, name, hE...),
					checkExternalSnapshot(t, name, snap4, overlay4),
				),
			},
			{
				Config:           withExportT,
				ConfigPlanChecks: acctest.Plans(),
				Check:            resource.ComposeAggregateTestCheckFunc(checkDiskSource(t, name, disk), fileGone(overlay4)),
			},
			{
				// The connection drops between freeze and thaw (the daemon closes this test
				// process's connections; the provider's client code, run here): the thaw
				// reconnects and the guest is thawed.
				PreConfig: func() {
					c := acctest.Client(t)
					d, err := c.LookupDomain(acctest.Ctx(t), name)
					if err != nil {
						t.Fatal(err)
					}
					dropped := 0
					if err := c.FreezeDuring(acctest.Ctx(t), d, nil, func() error { dropped = acctest.DropDaemonClients(t); return nil }); err != nil || dropped == 0 {
						t.Fatalf("freeze, drop %d connections, thaw: %v", dropped, err)
					}
					mustPass(t, checkQuiesced(t, name, append(slices.Clone(hE), "freeze", "thaw")...))
				},
				Config:   withExportT,
				PlanOnly: true,
			},
			{
				// The agent stopped: the quiesced export fails with the agent message.
				PreConfig:   func() { quiesceStopAgent(t, name) },
				Config:      withExportT + exp("e2", file2),
				ExpectError: regexp.MustCompile(agentErr),
			},
			{
				// ... and left no temporary volume, no file, no partial file. The snapshot
				// fails the same way.
				PreConfig:   func() { mustPass(t, noTemps, fileGone(file2), noPartialsNextTo(file2)) },
				Config:      withExportT + snapshot("s2", snap2),
				ExpectError: regexp.MustCompile(agentErr),
			},
			{
				// ... and left no snapshot and no overlay; the guest runs on its disk.
				PreConfig: func() {
					mustPass(t, acctest.CheckGone(map[string]acctest.Lookup{"snapshot " + snap2: snapLookup(name, snap2)}),
						fileGone(overlay2, file2), noPartialsNextTo(file2), noTemps, checkDiskSource(t, name, disk))
				},
				Config:   withExportT,
				PlanOnly: true,
			},
		},
	})
}

// quiesceStopAgent stops qemu-ga in the guest for good (the tiny guest's README) and
// waits until it no longer answers.
func quiesceStopAgent(t *testing.T, dom string) {
	t.Helper()
	// In the background: the exec must answer before the agent goes.
	if _, err := acctest.GuestExec(t, dom, "/bin/sh", "-c", "touch /run/tinyguest/no-qemu-ga; (sleep 1; killall qemu-ga) >/dev/null 2>&1 &"); err != nil {
		t.Fatal(err)
	}
	c := acctest.Client(t)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if err := c.PingDomainAgent(acctest.Ctx(t), dom); err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the guest agent of %s still answers", dom)
		}
	}
}

// mustPass runs state-free checks outside a step's Check (a step that expects an error
// runs no Check).
func mustPass(t *testing.T, checks ...resource.TestCheckFunc) {
	t.Helper()
	for _, c := range checks {
		if err := c(nil); err != nil {
			t.Fatal(err)
		}
	}
}

// quiesce = true of a shut-off domain: nothing runs that could write, so it is the usual
// internal disk-only snapshot (no agent, no overlay, revertable). Import cannot tell it
// was asked quiesced (libvirt keeps no such flag): it reads back false. No guest boots.
func TestAccQuiesce_shutOff(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "quiesce")
	snap := "tfacc-qoff"
	config := acctest.ProviderBlock("") + stoppedDomainHCL(name, disk, 128) +
		snapOf("libvirt_domain.test.id", attr("name", snap), attr("quiesce", true))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name), "snapshot " + snap: snapLookup(name, snap)}),
			fileGone(disk+".tfsnap-"+snap),
		),
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(snapRes, "quiesce", true, "memory", false, "domain_state", "shutoff"),
				Check: func(*terraform.State) error {
					s, err := acctest.Client(t).GetSnapshot(acctest.Ctx(t), name, snap)
					if err != nil {
						return err
					}
					if len(s.Overlays) != 0 {
						return fmt.Errorf("snapshot of the shut-off domain is external (%v), want internal", s.Overlays)
					}
					return fileGone(disk + ".tfsnap-" + snap)(nil)
				},
			},
			{
				ResourceName: snapRes, ImportState: true, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts", "quiesce"},
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					if len(s) != 1 || s[0].Attributes["quiesce"] != "false" {
						return fmt.Errorf("imported %v, want quiesce = false (an internal snapshot)", s)
					}
					return nil
				},
			},
		},
	})
}
