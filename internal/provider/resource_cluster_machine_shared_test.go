package provider_test

import (
	"fmt"
	"strings"
	"testing"

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
	w := newCLIWork(t, config)
	defer func() {
		if out, code := w.run("destroy", "-auto-approve", "-input=false"); code != 0 {
			t.Errorf("destroy (exit %d):\n%s", code, out)
		}
		if err := cmCheckGone(t, net.Name, e.pool, m); err != nil {
			t.Error(err)
		}
	}()
	out, applyCode := w.run("apply", "-auto-approve", "-input=false")
	words := strings.Join(strings.Fields(out), " ")
	if strings.Contains(words, "existing dhcp host entry") {
		t.Fatalf("two host entries of one network were written at once and libvirt refused one:\n%s", out)
	}
	ctx := acctest.Ctx(t)
	machine, err := workflow.MachineReservation(ctx, acctest.Client(t), net.Name, m.mac)
	if err != nil {
		t.Fatal(err)
	}
	reservation, err := workflow.MachineReservation(ctx, acctest.Client(t), net.Name, resMAC)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case applyCode == 0:
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
		t.Fatalf("apply (exit %d):\n%s", applyCode, out)
	}
}
