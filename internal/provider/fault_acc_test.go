package provider_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// These tests put the real CLI (Terraform or OpenTofu) and the real provider binary
// through what a host does to them in production: the daemon dying in the middle of an
// apply, and a wide parallel apply against a small connection pool.
//
// TestAccFault_libvirtdKilledMidApply kills libvirtd: run it with the host lock held
// exclusively (flock -x /tmp/kvmforge-host.lock ...), never beside other tests.

// fleetConfig is n stopped domains, each with its own disk and cloud-init seed. base, when
// set, names an image to upload once and overlay per domain; otherwise each disk is an
// empty 1 MiB qcow2 volume.
func fleetConfig(prefix string, n int, providerExtra, base string) string {
	disk := `
resource "libvirt_volume" "disk" {
  count          = local.n
  name           = "${local.prefix}disk-${count.index}.qcow2"
  pool           = local.pool
  capacity_bytes = 1048576
}
`
	if base != "" {
		disk = fmt.Sprintf(`
resource "libvirt_volume" "base" {
  name        = "${local.prefix}base.qcow2"
  pool        = local.pool
  source_file = %q
}

resource "libvirt_volume" "disk" {
  count          = local.n
  name           = "${local.prefix}disk-${count.index}.qcow2"
  pool           = local.pool
  backing_volume = libvirt_volume.base.id
}
`, base)
	}
	return acctest.ProviderBlock(providerExtra) + fmt.Sprintf(`
locals {
  prefix = %q
  pool   = %q
  n      = %d
}
%s
resource "libvirt_cloudinit_iso" "seed" {
  count       = local.n
  name        = "${local.prefix}seed-${count.index}.iso"
  pool        = local.pool
  instance_id = "i-${count.index}"
  hostname    = "vm-${count.index}"
}

resource "libvirt_domain" "vm" {
  count        = local.n
  name         = "${local.prefix}vm-${count.index}"
  %s
  cloudinit_id = libvirt_cloudinit_iso.seed[count.index].id
  disk {
    volume_id = libvirt_volume.disk[count.index].id
  }
  network_interface {
    network = %q
  }
}
`, prefix, acctest.Pool(), n, disk, idleDomain, acctest.Network())
}

// fleetNames are the names fleetConfig asks for, sorted.
func fleetNames(prefix string, n int, base bool) (domains, volumes []string) {
	for i := range n {
		domains = append(domains, fmt.Sprintf("%svm-%d", prefix, i))
		volumes = append(volumes, fmt.Sprintf("%sdisk-%d.qcow2", prefix, i), fmt.Sprintf("%sseed-%d.iso", prefix, i))
	}
	if base {
		volumes = append(volumes, prefix+"base.qcow2")
	}
	sort.Strings(domains)
	sort.Strings(volumes)
	return domains, volumes
}

// cleanupFleet destroys through the CLI and then removes whatever of prefix* is still on
// the host, so that a failed run leaves nothing; a test that got this far checks the
// destroy itself before.
func cleanupFleet(t *testing.T, w *cliWork, prefix string) {
	t.Cleanup(func() {
		if out, code := w.run("destroy", "-auto-approve", "-input=false"); code != 0 {
			t.Logf("cleanup destroy (exit %d):\n%s", code, out)
		}
		if left := acctest.RemoveHostObjects(t, prefix); len(left) > 0 {
			t.Logf("cleanup removed leftovers: %v", left)
		}
	})
}

// providerCrash matches what the CLI prints when the provider panicked or died.
var providerCrash = regexp.MustCompile(`(?i)panic:|plugin crashed|plugin did not respond|rpc error: code = Unavailable|goroutine \d+ \[`)

// TestAccFault_libvirtdKilledMidApply: libvirtd is killed (SIGKILL, by its pid) while an
// apply of 10 domains with their disks and seeds is under way, and started again. The
// apply may complete or fail, but only with clear diagnostics (no crash, no hang); the next
// apply converges; and afterwards the host and the state hold exactly the same objects:
// nothing orphaned on the host, nothing tracked twice, nothing dropped from state.
func TestAccFault_libvirtdKilledMidApply(t *testing.T) {
	acctest.RequireAcc(t)
	const n = 10
	prefix := acctest.RandomName("kill") + "-"
	w := newCLIWork(t, fleetConfig(prefix, n, "", acctest.GuestImage(t)))
	cleanupFleet(t, w, prefix)
	wantD, wantV := fleetNames(prefix, n, true)

	type result struct {
		out  string
		code int
		took time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		// -parallelism=3 spreads the domains' creation over a window the poll below can
		// hit; most calls are still concurrent when the daemon dies.
		out, code := w.run("apply", "-auto-approve", "-input=false", "-parallelism=3")
		done <- result{out, code, time.Since(start)}
	}()

	// Kill when some, but not all, of the domains exist.
	var atKill int
	var first result
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
poll:
	for {
		select {
		case first = <-done:
			t.Fatalf("apply 1 ended (exit %d, %s) before some but not all domains existed; the kill never landed:\n%s", first.code, first.took, first.out)
		default:
		}
		if c := acctest.CountDomains(ctx, t, prefix); c > 0 && c < n {
			atKill = c
			break poll
		}
		if ctx.Err() != nil {
			t.Fatal("no domain appeared within 5 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	pid := acctest.KillLibvirtd(t)
	killedAt := time.Since(start)
	restart := acctest.RestartLibvirtd(t)
	t.Logf("killed libvirtd (pid %d) %s into apply 1 with %d of %d domains defined; restarted in %s",
		pid, killedAt.Round(time.Millisecond), atKill, n, restart.Round(time.Millisecond))

	select {
	case first = <-done:
	case <-time.After(11 * time.Minute):
		t.Fatal("apply 1 did not end after the daemon came back: a hang")
	}
	hostD, hostV := acctest.HostObjects(t, prefix)
	stateD, stateV := w.stateObjects()
	t.Logf("apply 1: exit %d after %s; host then had %d domains / %d volumes, state %d / %d",
		first.code, first.took.Round(time.Millisecond), len(hostD), len(hostV), len(stateD), len(stateV))
	if providerCrash.MatchString(first.out) {
		t.Fatalf("apply 1 crashed the provider:\n%s", first.out)
	}
	if first.code != 0 {
		// Every error must say what failed and that the connection was the cause.
		errs := regexp.MustCompile(`(?m)^Error: .*$`).FindAllString(first.out, -1)
		if len(errs) == 0 {
			t.Fatalf("apply 1 failed (exit %d) without an error diagnostic:\n%s", first.code, first.out)
		}
		t.Logf("apply 1 errors (%d):\n%s", len(errs), diagnostics(first.out))
		if !regexp.MustCompile(`connection\s+to\s+\S+\s+failed`).MatchString(first.out) {
			t.Errorf("apply 1's errors do not name the failed connection:\n%s", first.out)
		}
	}
	// Whatever apply 1 did, it must not have left anything the state does not track.
	w.checkHostMatchesState(prefix, nil, nil)

	start = time.Now()
	out := w.mustRun("apply", "-auto-approve", "-input=false")
	t.Logf("apply 2 converged in %s: %s", time.Since(start).Round(time.Millisecond), lastLine(out, "Apply complete!"))
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after apply 2 is not empty (exit %d):\n%s", code, out)
	}
	w.checkHostMatchesState(prefix, wantD, wantV)

	w.mustRun("destroy", "-auto-approve", "-input=false")
	if d, v := acctest.HostObjects(t, prefix); len(d)+len(v) > 0 {
		t.Errorf("after destroy the host still has domains %v and volumes %v", d, v)
	}
}

// TestAccFault_parallelApplyStaysInPool: a 20-way parallel apply of 30 resources
// (10 × volume + cloud-init seed + stopped domain) with max_connections = 4 succeeds, and
// the provider never holds more than 4 connections to the daemon, as the daemon itself
// counts them (virt-admin client list, sampled during the apply).
func TestAccFault_parallelApplyStaysInPool(t *testing.T) {
	acctest.RequireAcc(t)
	const n, poolSize = 10, 4
	prefix := acctest.RandomName("par") + "-"
	w := newCLIWork(t, fleetConfig(prefix, n, fmt.Sprintf("  max_connections = %d", poolSize), ""))
	cleanupFleet(t, w, prefix)
	wantD, wantV := fleetNames(prefix, n, false)
	bin := providerBinary(t)

	// Written by the sampler only; read after stopSampling.
	peak, samples, seen := 0, 0, map[int]bool{}
	var counter acctest.ClientCounter
	stopSampling := acctest.Sample(10*time.Millisecond, func() {
		procs := acctest.ProcessesOf(bin)
		if len(procs) == 0 {
			return
		}
		counts := counter.Count(t, func(pid int) bool { return procs[pid] })
		samples++
		for pid, c := range counts {
			seen[pid] = true
			peak = max(peak, c)
		}
	})
	start := time.Now()
	out, code := w.run("apply", "-auto-approve", "-input=false", "-parallelism=20")
	took := time.Since(start)
	stopSampling()
	if code != 0 {
		t.Fatalf("apply -parallelism=20 (exit %d):\n%s", code, out)
	}
	if !strings.Contains(out, fmt.Sprintf("%d added, 0 changed, 0 destroyed", 3*n)) {
		t.Fatalf("apply did not add %d resources:\n%s", 3*n, out)
	}
	t.Logf("apply -parallelism=20 of %d resources in %s; daemon saw at most %d connections from one provider process (max_connections = %d; %d provider processes, %d samples)",
		3*n, took.Round(time.Millisecond), peak, poolSize, len(seen), samples)
	if samples == 0 || peak == 0 {
		t.Fatalf("no sample saw a provider connection (%d samples): the measurement proved nothing", samples)
	}
	if peak > poolSize {
		t.Errorf("a provider process held %d connections to libvirtd at once; max_connections = %d", peak, poolSize)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode", "-parallelism=20"); code != 0 {
		t.Fatalf("plan after the parallel apply is not empty (exit %d):\n%s", code, out)
	}
	w.checkHostMatchesState(prefix, wantD, wantV)
	w.mustRun("destroy", "-auto-approve", "-input=false", "-parallelism=20")
	if d, v := acctest.HostObjects(t, prefix); len(d)+len(v) > 0 {
		t.Errorf("after destroy the host still has domains %v and volumes %v", d, v)
	}
}

// lastLine returns the last line of out that contains s.
func lastLine(out, s string) string {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// diagnostics is the part of a CLI's output from its first diagnostic on.
func diagnostics(out string) string {
	if i := strings.Index(out, "\nError: "); i >= 0 {
		return out[i+1:]
	}
	return out
}

// TestAccFault_lostReplies: the daemon carries out a volume create and a domain define,
// but their answers never reach the provider (the link is cut after each, as when the
// daemon dies or the network drops between doing a thing and saying so). The apply still
// succeeds, with exactly one volume and one domain on the host, both in state: the define
// (whose UUID the provider chose) is sent again, the volume found made by the lost create
// is removed and made again — neither an orphan nor an "already exists" on the next try.
func TestAccFault_lostReplies(t *testing.T) {
	acctest.RequireAcc(t)
	prefix := acctest.RandomName("lost") + "-"
	proxy := acctest.StartFaultProxy(t, "127.0.0.1:16509")
	config := fmt.Sprintf(`
terraform {
  required_providers {
    libvirt = { source = "kvmforge/libvirt" }
  }
}
provider "libvirt" {
  uri = "qemu+tcp://%s/system"
}
resource "libvirt_volume" "disk" {
  name           = "%sdisk.qcow2"
  pool           = %q
  capacity_bytes = 1048576
}
resource "libvirt_domain" "vm" {
  name       = "%svm"
  %s
  disk {
    volume_id = libvirt_volume.disk.id
  }
}
`, proxy.Addr, prefix, acctest.Pool(), prefix, idleDomain)
	var volLost, defineLost <-chan struct{}
	happened := func(what string, ch <-chan struct{}) error {
		select {
		case <-ch:
			return nil
		default:
			return fmt.Errorf("the answer to the %s was never lost: the test proved nothing", what)
		}
	}
	acctest.RunSerial(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + prefix + "vm":         acctest.DomainLookup(prefix + "vm"),
			"volume " + prefix + "disk.qcow2": acctest.VolumeLookup(acctest.Pool(), prefix+"disk.qcow2"),
		}),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				volLost = proxy.LoseReplyTo(acctest.ProcStorageVolCreateXML, time.Second)
				defineLost = proxy.LoseReplyTo(acctest.ProcDomainDefineXMLFlags, time.Second)
			},
			Config:           config,
			ConfigPlanChecks: acctest.Plans(),
			Check: acctest.HostCheck(func() error {
				if err := errors.Join(happened("volume create", volLost), happened("domain define", defineLost)); err != nil {
					return err
				}
				d, v := acctest.HostObjects(t, prefix)
				if !slices.Equal(d, []string{prefix + "vm"}) || !slices.Equal(v, []string{prefix + "disk.qcow2"}) {
					return fmt.Errorf("host holds domains %v and volumes %v; want exactly the one of each in state", d, v)
				}
				return nil
			}),
		}},
	})
}
