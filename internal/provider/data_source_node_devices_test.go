package provider_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// libvirt_node_devices lists what `virsh nodedev-list --cap X` lists, for PCI devices and
// network interfaces; a net device carries its interface name and MAC (libvirt names it
// net_<interface>_<mac>).
//
// Other tests start and stop guests meanwhile, and each guest NIC comes and goes as a
// vnetN (or macvtapN) net device: a listing taken before the read and one taken after
// can both differ from the read's (CI failed on that race). So the test compares against
// both: every device libvirt listed before and still lists after must be in the read,
// and every device in the read must be in one of the two listings, or be a guest NIC that
// came and went in between. PCI devices do not come and go: those lists must be equal.
func TestAccNodeDevices_virshList(t *testing.T) {
	acctest.RequireAcc(t)
	caps := []string{"pci", "net"}
	before := map[string][]string{}
	for _, c := range caps {
		before[c] = acctest.NodeDeviceNames(t, c)
	}
	names := func(s *terraform.State, ds string) []string {
		a := s.RootModule().Resources[ds].Primary.Attributes
		n, _ := strconv.Atoi(a["devices.#"])
		out := make([]string, n)
		for i := range out {
			out[i] = a[fmt.Sprintf("devices.%d.name", i)]
		}
		return out
	}
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock("") + `
data "libvirt_node_devices" "pci" {
  capability = "pci"
}

data "libvirt_node_devices" "net" {
  capability = "net"
}
`,
			Check: func(s *terraform.State) error {
				for _, c := range caps {
					after := acctest.NodeDeviceNames(t, c)
					got := names(s, "data.libvirt_node_devices."+c)
					if err := nodeDevicesMatch(c, got, before[c], after); err != nil {
						return err
					}
				}
				a := s.RootModule().Resources["data.libvirt_node_devices.net"].Primary.Attributes
				n, _ := strconv.Atoi(a["devices.#"])
				lo := false
				for i := 0; i < n; i++ {
					at := func(k string) string { return a[fmt.Sprintf("devices.%d.%s", i, k)] }
					// libvirt names it after the interface and MAC, each character that is not a
					// letter, digit or "_" made "_" (a veth kvmf-a is net_kvmf_a_...).
					name := "net_" + nodeDevNameChars.ReplaceAllString(at("interface"), "_") + "_" + strings.ReplaceAll(at("mac"), ":", "_")
					if at("interface") == "" || at("capability") != "net" || name != at("name") {
						return fmt.Errorf("net device %s: interface %q, mac %q, capability %q", at("name"), at("interface"), at("mac"), at("capability"))
					}
					lo = lo || at("interface") == "lo"
				}
				if !lo {
					return fmt.Errorf("libvirt_node_devices lists no net device for lo (virsh lists it)")
				}
				return nil
			},
		}},
	})
}

// nodeDevNameChars are the characters libvirt replaces in node device names.
var nodeDevNameChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// guestNIC matches the net devices a guest's NIC makes while it runs (tap and macvtap).
var guestNIC = regexp.MustCompile(`^net_(vnet|macvtap)[0-9]+_`)

// nodeDevicesMatch says how a read of capability c (got, in the data source's order)
// disagrees with the listings libvirt gave before and after it, or nil.
func nodeDevicesMatch(c string, got, before, after []string) error {
	if !slices.IsSorted(got) {
		return fmt.Errorf("capability %s: %v is not sorted by name", c, got)
	}
	if c == "pci" && (!slices.Equal(before, after) || !slices.Equal(got, after)) {
		return fmt.Errorf("capability pci: %v, virsh nodedev-list --cap pci before %v and after %v", got, before, after)
	}
	for _, name := range before {
		if slices.Contains(after, name) && !slices.Contains(got, name) {
			return fmt.Errorf("capability %s: %s is listed by libvirt before and after the read, but not in %v", c, name, got)
		}
	}
	for _, name := range got {
		if !slices.Contains(before, name) && !slices.Contains(after, name) && !guestNIC.MatchString(name) {
			return fmt.Errorf("capability %s: %s is in the read but libvirt listed it neither before (%v) nor after (%v)", c, name, before, after)
		}
	}
	return nil
}

// The comparison tolerates guest NICs that come and go during the read, and nothing else.
func TestNodeDevicesMatch(t *testing.T) {
	lo, eth := "net_lo_00_00_00_00_00_00", "net_eth0_52_54_00_00_00_01"
	vnet := "net_vnet7_fe_54_00_00_00_02"
	for _, tc := range []struct {
		name               string
		got, before, after []string
		ok                 bool
	}{
		{"same", []string{eth, lo}, []string{eth, lo}, []string{eth, lo}, true},
		{"vnet came and went during the read", []string{eth, lo, vnet}, []string{eth, lo}, []string{eth, lo}, true},
		{"vnet went before the read", []string{eth, lo}, []string{eth, lo, vnet}, []string{eth, lo}, true},
		{"vnet came after the read", []string{eth, lo}, []string{eth, lo}, []string{eth, lo, vnet}, true},
		{"a stable device missing", []string{lo}, []string{eth, lo}, []string{eth, lo}, false},
		{"an unknown device that is no guest NIC", []string{eth, "net_eth9_52_54_00_00_00_09", lo}, []string{eth, lo}, []string{eth, lo}, false},
		{"not sorted", []string{lo, eth}, []string{eth, lo}, []string{eth, lo}, false},
	} {
		if err := nodeDevicesMatch("net", tc.got, tc.before, tc.after); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %t", tc.name, err, tc.ok)
		}
	}
	if nodeDevicesMatch("pci", []string{"pci_0000_00_01_0"}, []string{"pci_0000_00_01_0"}, []string{"pci_0000_00_01_0", "pci_0000_00_02_0"}) == nil {
		t.Error("pci lists that differ must not match")
	}
}
