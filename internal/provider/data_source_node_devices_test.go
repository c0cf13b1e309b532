package provider_test

import (
	"fmt"
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
func TestAccNodeDevices_virshList(t *testing.T) {
	acctest.RequireAcc(t)
	want := map[string][]string{"pci": acctest.NodeDeviceNames(t, "pci"), "net": acctest.NodeDeviceNames(t, "net")}
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
				for c, w := range want {
					if got := names(s, "data.libvirt_node_devices."+c); !slices.Equal(got, w) {
						return fmt.Errorf("capability %s: %v, virsh nodedev-list --cap %s: %v", c, got, c, w)
					}
				}
				if len(want["net"]) == 0 {
					return fmt.Errorf("libvirt lists no network interface here (not even lo)")
				}
				a := s.RootModule().Resources["data.libvirt_node_devices.net"].Primary.Attributes
				for i := range want["net"] {
					at := func(k string) string { return a[fmt.Sprintf("devices.%d.%s", i, k)] }
					name := "net_" + at("interface") + "_" + strings.ReplaceAll(at("mac"), ":", "_")
					if at("interface") == "" || at("capability") != "net" || name != at("name") {
						return fmt.Errorf("net device %s: interface %q, mac %q, capability %q", at("name"), at("interface"), at("mac"), at("capability"))
					}
				}
				return nil
			},
		}},
	})
}
