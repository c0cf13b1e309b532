package provider_test

// TestAccBadInputCatalogue: bad user input, one subtest per case. Each case asserts
//  (1) the diagnostic names the object and says what to fix (a regexp on the CLI's error), and
//  (2) that nothing is left on the host: libvirt is asked directly that no domain, volume
//      (ISO and ignition volumes included), network or pool of the case's tfacc- name exists
//      — for apply-time failures right after the failed apply, before any destroy (that is
//      the rollback), and again after the test's destroy; then a plan of what was applied
//      before the bad step must be empty (the failed apply tracked nothing new in state).
//
// "plan" cases fail in terraform plan (validators, ValidateConfig, ModifyPlan checks that
// ask libvirt read-only); "apply" cases can only be known by trying (an object that may be
// made in the same apply, a download, a checksum, libvirt's own refusal). No case boots a
// guest: domains are running = false.
//
// | #  | case                          | resource               | bad input                                        | fails at |
// |----|-------------------------------|------------------------|--------------------------------------------------|----------|
// | 1  | domain_name                   | libvirt_domain         | name with '/'                                    | plan     |
// | 2  | volume_name                   | libvirt_volume         | name with '/'                                    | plan     |
// | 3  | network_name                  | libvirt_network        | name starting with '-'                           | plan     |
// | 4  | pool_name                     | libvirt_pool           | name with a space                                | plan     |
// | 5  | domain_mac                    | libvirt_domain         | network_interface.mac not a MAC                  | plan     |
// | 6  | reservation_mac               | libvirt_dhcp_reservation | mac with 5 pairs                               | plan     |
// | 7  | network_host_mac              | libvirt_network        | dhcp.hosts[0].mac not a MAC                      | plan     |
// | 8  | reservation_ip_outside        | libvirt_dhcp_reservation | ip outside the network's subnets (asks libvirt) | plan     |
// | 9  | reservation_clash             | libvirt_dhcp_reservation | ip already reserved for another MAC             | plan     |
// | 10 | volume_negative_capacity      | libvirt_volume         | capacity_bytes = -1                              | plan     |
// | 11 | volume_shrink                 | libvirt_volume         | capacity_bytes smaller than the volume (update)  | plan     |
// | 12 | volume_sources_url_file       | libvirt_volume         | source_url and source_file                       | plan     |
// | 13 | volume_sources_backing_clone  | libvirt_volume         | backing_volume and clone_from                    | plan     |
// | 14 | volume_missing_pool           | libvirt_volume         | pool that does not exist                         | apply    |
// | 15 | domain_missing_network        | libvirt_domain         | network_interface.network that does not exist    | apply    |
// | 16 | reservation_missing_network   | libvirt_dhcp_reservation | network that does not exist                    | apply    |
// | 17 | volume_missing_backing        | libvirt_volume         | backing_volume that does not exist               | apply    |
// | 18 | snapshot_missing_domain       | libvirt_snapshot       | domain_id of no domain                           | apply    |
// | 18b| clone_missing_source          | libvirt_clone          | source_domain_id of no domain (asks libvirt)     | plan     |
// | 19 | uri_transport                 | provider               | uri qemu+bogus://                                | plan     |
// | 20 | uri_query                     | provider               | uri with an unknown query parameter              | plan     |
// | 21 | uri_driver                    | provider               | uri of a driver the daemon lacks (nosuch:///; the daemon says so during plan) | plan |
// | 22 | checksum_mismatch             | libvirt_volume         | wrong source_checksum on a source_file upload    | apply    |
// | 23 | url_unreachable               | libvirt_volume         | source_url on a closed port of 127.0.0.1         | apply    |
// | 24 | cloudinit_network_config      | libvirt_cloudinit_iso  | network_config not YAML                          | plan     |
// | 25 | cloudinit_user_data           | libvirt_cloudinit_iso  | #cloud-config user_data not YAML                 | plan     |
// | 26 | max_vcpu_below                | libvirt_domain         | max_vcpu < vcpu                                  | plan     |
// | 27 | max_memory_below              | libvirt_domain         | max_memory_mib < memory_mib                      | plan     |
// | 28 | machine_not_offered           | libvirt_domain         | machine type of another arch (virt)              | plan     |
// | 29 | domain_type_not_offered       | libvirt_domain         | type kvm on a host without KVM (row left out where KVM is offered) | plan |
// | 30 | vcpu_zero                     | libvirt_domain         | vcpu = 0                                         | plan     |
// | 31 | memory_zero                   | libvirt_domain         | memory_mib = 0                                   | plan     |
// | 32 | wait_timeout                  | libvirt_domain         | wait_for_ip.timeout = "5 minutes"                | plan     |
// | 33 | graphics_type                 | libvirt_domain         | graphics.type = "rdp"                            | plan     |
// | 34 | disk_bus                      | libvirt_domain         | disk.bus = "nvme"                                | plan     |
// | 35 | disk_device                   | libvirt_domain         | disk.device = "floppy"                           | plan     |
// | 36 | network_mode                  | libvirt_network        | mode = "nated"                                   | plan     |
// | 37 | network_dhcp_range            | libvirt_network        | dhcp range outside the subnet                    | plan     |
// | 38 | network_overlap_self          | libvirt_network        | two addresses whose subnets overlap              | plan     |
// | 39 | network_overlap_host          | libvirt_network        | subnet of the host's default network             | apply    |
// | 40 | pool_relative_path            | libvirt_pool           | target_path relative                             | plan     |
// | 41 | cluster_namespace             | libvirt_cluster_machine| blank namespace (other characters are mapped onto the DNS label by design) | plan |
// | 42 | ignition_not_json             | libvirt_ignition       | content not JSON                                 | plan     |
// | 43 | power_action                  | libvirt_domain_power   | action = "hibernate"                             | plan     |
// | 44 | snapshot_memory_stopped       | libvirt_snapshot       | memory = true on a shut-off domain               | apply    |
// | 45 | import_snapshot_id            | libvirt_snapshot       | import id without '/'                            | import   |
// | 46 | import_reservation_id         | libvirt_dhcp_reservation | import id without a MAC                        | import   |
// | 47 | import_volume_id              | libvirt_volume         | import id "pool/" (a key no volume has)          | import   |
// | 48 | volume_format                 | libvirt_volume         | format = "vmdk"                                  | plan     |
// | 49 | snapshot_name                 | libvirt_snapshot       | name with white space                            | plan     |
// | 50 | hostdev_missing_pci           | libvirt_domain         | hostdev.pci the host lacks (running; asks libvirt) | plan   |
// | 51 | hostdev_missing_usb           | libvirt_domain         | hostdev.usb ids the host lacks (running)         | plan     |
// | 52 | hostdev_missing_mdev          | libvirt_domain         | hostdev.mdev uuid the host lacks (running)       | plan     |
// | 53 | hostdev_pci_format            | libvirt_domain         | hostdev.pci = "3:0.0"                            | plan     |
// | 54 | hostdev_two_sources           | libvirt_domain         | hostdev with pci and usb_address                 | plan     |
// | 55 | hostdev_no_source             | libvirt_domain         | hostdev without a source                         | plan     |
// | 56 | hostdev_usb_id                | libvirt_domain         | hostdev.usb.vendor not 4 hex digits              | plan     |
// | 57 | hostdev_mdev_model_alone      | libvirt_domain         | mdev_model without mdev                          | plan     |
// | 58 | hostdev_twice                 | libvirt_domain         | the same PCI device in two hostdevs              | plan     |
//
// The rows of the device families added since (filesystem, disk tuning) are in
// bad_input_cases_acc_test.go only; count the cases there (75 at this writing: 60 fail at
// plan time, 11 at apply time, 4 at import).
//
// Run it: TF_ACC=1 go test ./internal/provider -run TestAccBadInputCatalogue (inside the
// test host's network namespace, see tools/testhost.sh).

import (
	"fmt"
	"maps"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// badInputCase is one row of the catalogue. Configs are templates: NAME is the case's
// tfacc- name, POOL and NET the test host's pool and network, and case-specific keys
// come from vars.
type badInputCase struct {
	name  string
	phase string // plan, apply or import
	// setup is applied first (successfully) and stays in the bad step's config; empty for none.
	setup string
	// bad is the configuration (after setup) that must fail.
	bad string
	// update: bad replaces setup instead of adding to it (it changes the setup's resources).
	update bool
	// provider overrides the provider block (bad URIs).
	provider string
	// importID and importResource make an import step instead.
	importID, importResource string
	// want matches the error; spaces match any white space (the CLI wraps lines).
	want string
	// onlyWithoutKVM: the case exists on hosts that offer no kvm domains (it is not bad input where they do).
	onlyWithoutKVM bool
	// vars are extra template values, computed when the case runs.
	vars func(t *testing.T, name string) map[string]string
	// gone are extra checks that nothing is left (e.g. no DHCP entry for a MAC).
	gone func(t *testing.T, name string, vars map[string]string) error
}

func TestAccBadInputCatalogue(t *testing.T) {
	acctest.RequireAcc(t)
	cases := badInputCases()
	for _, tc := range cases {
		if tc.onlyWithoutKVM && acctest.KVM() {
			continue
		}
		t.Run(tc.name, func(t *testing.T) { runBadInput(t, tc) })
	}
}

func runBadInput(t *testing.T, tc badInputCase) {
	name := acctest.RandomName("bad")
	vars := map[string]string{"NAME": name, "POOL": acctest.Pool(), "NET": acctest.Network()}
	if tc.vars != nil {
		for k, v := range tc.vars(t, name) {
			vars[k] = v
		}
	}
	// Longest keys first: NewReplacer tries them in argument order (NAME before NAMEX would
	// cut NAMEX short).
	keys := slices.SortedFunc(maps.Keys(vars), func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(vars))
	for _, k := range keys {
		pairs = append(pairs, k, vars[k])
	}
	fill := strings.NewReplacer(pairs...).Replace
	providerBlock := acctest.ProviderBlock("")
	if tc.provider != "" {
		providerBlock = fill(tc.provider)
	}
	// "Error: " first: the pattern must match a diagnostic, never the text of a plan that
	// unexpectedly succeeded (plugin-testing matches ExpectError against that too).
	want := regexp.MustCompile(`(?s)Error: .*` + strings.ReplaceAll(fill(tc.want), " ", `\s+`))
	if os.Getenv("BADINPUT_SHOW") != "" {
		want = regexp.MustCompile("NEVER-MATCHES")
	}

	objects := map[string]acctest.Lookup{
		"domain " + name:                        acctest.DomainLookup(name),
		"volume " + acctest.Pool() + "/" + name: acctest.VolumeLookup(acctest.Pool(), name),
		"network " + name:                       acctest.NetworkLookup(name),
		"pool " + name:                          acctest.PoolLookup(name),
		"volume " + acctest.Pool() + "/" + name + ".qcow2": acctest.VolumeLookup(acctest.Pool(), name+".qcow2"),
	}
	// Objects of the setup (NAME-keep) legitimately exist until the test's destroy.
	kept := map[string]acctest.Lookup{
		"domain " + name + "-keep":                        acctest.DomainLookup(name + "-keep"),
		"volume " + acctest.Pool() + "/" + name + "-keep": acctest.VolumeLookup(acctest.Pool(), name+"-keep"),
	}
	assertGone := func(when string) {
		t.Helper()
		if when == "after the test" {
			maps.Copy(objects, kept)
		}
		if err := acctest.CheckGone(objects)(nil); err != nil {
			t.Errorf("%s: %v", when, err)
		}
		if tc.gone != nil {
			if err := tc.gone(t, name, vars); err != nil {
				t.Errorf("%s: %v", when, err)
			}
		}
	}

	var steps []resource.TestStep
	setup := providerBlock
	if tc.setup != "" {
		setup += fill(tc.setup)
		steps = append(steps, resource.TestStep{Config: setup})
	}
	bad := setup + fill(tc.bad)
	if tc.update {
		bad = providerBlock + fill(tc.bad)
	}
	switch tc.phase {
	case "import":
		steps = append(steps, resource.TestStep{
			Config: bad, ResourceName: tc.importResource, ImportState: true, ImportStateId: fill(tc.importID),
			ExpectError: want,
		})
	case "plan":
		steps = append(steps, resource.TestStep{Config: bad, PlanOnly: true, ExpectError: want})
	case "apply":
		steps = append(steps,
			resource.TestStep{Config: bad, ExpectError: want},
			// Right after the failed apply: nothing was left behind (rollback), and the
			// state tracks nothing beyond the setup (its plan is empty).
			resource.TestStep{PreConfig: func() { assertGone("after the failed apply") }, Config: setup, PlanOnly: true},
		)
	default:
		t.Fatalf("unknown phase %q", tc.phase)
	}
	acctest.Run(t, resource.TestCase{
		Steps: steps,
	})
	assertGone("after the test")
}

// closedPort is a port on 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// noDHCPEntry checks that network holds no host entry for mac.
func noDHCPEntry(t *testing.T, network, mac string) error {
	ctx := acctest.Ctx(t)
	n, err := acctest.Client(t).ReadNetworkDHCP(ctx, network)
	if err != nil {
		return fmt.Errorf("read network %s: %w", network, err)
	}
	for _, h := range append(n.Hosts, n.Live...) {
		if strings.EqualFold(h.MAC, mac) {
			return fmt.Errorf("network %s still has a DHCP host entry for %s (%s)", network, mac, h.IP)
		}
	}
	return nil
}
