package provider_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
	"github.com/kvmforge/terraform-provider-libvirt/internal/netaddr"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// A libvirt_dhcp_reservation and a libvirt_cluster_machine (stopped) applied in one run on
// one network, the reservation asking for the very address the machine's name chooses:
// both write host entries of that network at once. Each takes the network's lock from its
// read to its write, so whichever comes first has the address and the other sees it:
// either both are made and the machine has another address, or the reservation is refused
// with a clear error naming the machine's MAC. Never does libvirt refuse one of two
// entries written in parallel ("existing dhcp host entry"), and never do two hold one
// address. The order is the CLI's, so the test runs the real CLI (with the provider
// binary) and accepts either outcome.
func TestAccClusterMachine_sharedNetwork(t *testing.T) {
	e := cmSetup(t)
	m := cmPartsOf(e.namespace, "shared")
	net := e.network
	s, err := netaddr.FromXML(libvirtxml.NetworkIP{Address: net.Addr(1), Prefix: 24,
		DHCP: &libvirtxml.NetworkDHCP{Ranges: []libvirtxml.NetworkDHCPRange{{Start: net.Addr(100), End: net.Addr(199)}}}})
	if err != nil {
		t.Fatal(err)
	}
	wanted, err := capi.ChooseAddress(s, m.domain, nil)
	if err != nil {
		t.Fatal(err)
	}
	const resMAC = "52:54:00:aa:dd:01"
	config := acctest.ProviderBlock("") + e.machine("shared", net.Name, "  running = false") + fmt.Sprintf(`
resource "libvirt_dhcp_reservation" "r" {
  network = %q
  mac     = %q
  ip      = %q
}
`, net.Name, resMAC, wanted)
	cli := newCLI(t, config)
	defer func() {
		if out, err := cli.run("destroy", "-auto-approve", "-input=false"); err != nil {
			t.Errorf("destroy: %v\n%s", err, out)
		}
		if err := cmCheckGone(t, net.Name, e.pool, m); err != nil {
			t.Error(err)
		}
	}()
	out, applyErr := cli.run("apply", "-auto-approve", "-input=false")
	words := strings.Join(strings.Fields(out), " ")
	if strings.Contains(words, "existing dhcp host entry") {
		t.Fatalf("two host entries of one network were written at once and libvirt refused one:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	machine, err := workflow.MachineReservation(ctx, acctest.Client(t), net.Name, m.mac)
	if err != nil {
		t.Fatal(err)
	}
	reservation, err := workflow.MachineReservation(ctx, acctest.Client(t), net.Name, resMAC)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case applyErr == nil:
		if reservation == nil || reservation.IP != wanted.String() || machine == nil || machine.IP == wanted.String() {
			t.Errorf("both made: reservation %v, machine %v; want the reservation on %s and the machine elsewhere", reservation, machine, wanted)
		}
		t.Logf("the reservation came first: it has %s, the machine %s", reservation.IP, machine.IP)
	case strings.Contains(words, fmt.Sprintf("ip %s on network %s is already reserved for MAC %s", wanted, net.Name, m.mac)):
		if reservation != nil || machine == nil || machine.IP != wanted.String() {
			t.Errorf("reservation refused: reservation %v, machine %v; want the machine on %s and no reservation", reservation, machine, wanted)
		}
		t.Logf("the machine came first: it has %s, the reservation was refused", machine.IP)
	default:
		t.Fatalf("apply: %v\n%s", applyErr, out)
	}
}

// cli runs the Terraform or OpenTofu CLI (TF_ACC_TERRAFORM_PATH) with the provider binary
// on a configuration in a directory of its own.
type cli struct {
	path, dir string
	env       []string
}

func newCLI(t *testing.T, config string) *cli {
	t.Helper()
	path := acctest.Env("TF_ACC_TERRAFORM_PATH", "")
	if path == "" {
		var err error
		if path, err = exec.LookPath("terraform"); err != nil {
			t.Fatal("no terraform: set TF_ACC_TERRAFORM_PATH")
		}
	}
	c := &cli{path: path, dir: t.TempDir()}
	writeTestFile(t, filepath.Join(c.dir, "main.tf"), config)
	writeTestFile(t, filepath.Join(c.dir, "dev.tfrc"), fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n",
		"kvmforge/libvirt", filepath.Dir(providerBinary(t))))
	c.env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(c.dir, "dev.tfrc"), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"TF_REATTACH_PROVIDERS=")
	return c
}

// run runs the CLI with args and returns what it printed.
func (c *cli) run(args ...string) (string, error) {
	cmd := exec.Command(c.path, args...)
	cmd.Dir, cmd.Env = c.dir, c.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = fmt.Errorf("%s %s: exit %d", filepath.Base(c.path), args[0], exit.ExitCode())
	}
	return out.String(), err
}
