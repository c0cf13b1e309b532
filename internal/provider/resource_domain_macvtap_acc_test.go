package provider_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A booted tiny guest with a direct (macvtap, bridge mode) NIC on one end of a veth pair
// in libvirtd's network namespace (the host kernel has no dummy links): the guest sees a
// NIC with the configured MAC and carrier, pings the veth's other end through it (frames
// reach the lower link and come back), and libvirt's macvtap link sits on the veth.
// link_state then goes down and up live: the domain keeps its id and the guest sees the
// carrier follow. The running domain imports, and its generated configuration plans clean.
func TestAccDomainMacvtap_booted(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "mvtap")
	lower, peer := acctest.VethPair(t, "192.0.2.1/24") // TEST-NET-1: never leaves the namespace
	mac := fmt.Sprintf("52:54:00:c0:%02x:%02x", rand.IntN(256), rand.IntN(256))
	config := func(link ...string) string {
		direct := append([]string{attr("direct", hcl(fmt.Sprintf(`{ dev = %q, mode = "bridge" }`, lower))), attr("mac", mac)}, link...)
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 128),
			blockHCL("disk", attr("volume_id", disk)),
			blockHCL("network_interface", attr("network", acctest.Network())),
			blockHCL("network_interface", direct...))
	}
	var id int32
	// host checks the running domain kept its id and that its direct NIC has link state
	// link and a macvtap link of libvirt's on the veth.
	host := func(link string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.SameRunningDomain(t, name, &id)
			if err != nil {
				return err
			}
			nics := d.Live.Devices.Interfaces
			if len(nics) != 2 || nics[1].Source == nil || nics[1].Source.Direct == nil || nics[1].Target == nil {
				return fmt.Errorf("want a second, direct NIC with a target in the live definition, got %+v", nics)
			}
			n := nics[1]
			if n.Source.Direct.Dev != lower || n.Source.Direct.Mode != "bridge" || n.MAC == nil || !strings.EqualFold(n.MAC.Address, mac) {
				return fmt.Errorf("direct NIC: want %s in bridge mode with MAC %s, got %+v %+v", lower, mac, n.Source.Direct, n.MAC)
			}
			state := "up" // no <link> is up
			if n.Link != nil && n.Link.State != "" {
				state = n.Link.State
			}
			if state != link {
				return fmt.Errorf("direct NIC: libvirt has link state %s, want %s", state, link)
			}
			line, err := acctest.MacvtapOn(n.Target.Dev, lower)
			if err == nil && !strings.Contains(line, "macvtap mode bridge") {
				err = fmt.Errorf("want macvtap mode bridge: %s", line)
			}
			return err
		})
	}
	// guest runs script in the guest with $d the NIC of the direct MAC, and wants its output.
	guest := func(what, script, want string) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			acctest.WaitForAgent(t, name)
			// The boot script's DHCP try on every NIC must be over (it flushes addresses), and the
			// NIC there; then udhcpc's renewals are stopped on it.
			find := `for i in $(seq 90); do [ -f /run/tinyguest/ready ] && break; sleep 1; done
d=; for i in $(seq 30); do for n in /sys/class/net/*; do grep -qx ` + mac + ` $n/address && d=${n##*/}; done; [ -n "$d" ] && break; sleep 1; done
[ -n "$d" ] || { echo no NIC with ` + mac + `; exit 0; }
[ -f /run/udhcpc.$d.pid ] && kill $(cat /run/udhcpc.$d.pid) 2>/dev/null
ip link set $d up
`
			out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", find+script)
			if err != nil {
				return err
			}
			if got := strings.TrimSpace(out); got != want {
				return fmt.Errorf("%s: the guest says %q, want %q", what, got, want)
			}
			return nil
		})
	}
	carrier := func(want string) string {
		return `for i in $(seq 30); do c=$(cat /sys/class/net/$d/carrier); [ "$c" = ` + want + ` ] && break; sleep 1; done; echo carrier=$c
`
	}
	const ping = `for i in $(seq 10); do ping -I $d -c 1 -W 2 192.0.2.1 >/dev/null 2>&1 && { echo ping=ok; exit 0; }; done; echo ping=failed`
	const address = "ip -4 addr flush dev $d; ip addr add 192.0.2.2/24 dev $d\n"
	// neighbour: the veth's far end learnt the guest's MAC for 192.0.2.2 (the guest's
	// frames went out through the lower link).
	neighbour := acctest.HostCheck(func() error {
		out, err := acctest.NetnsIP("neigh", "show", "192.0.2.2", "dev", peer)
		if err == nil && !strings.Contains(strings.ToLower(out), mac) {
			err = fmt.Errorf("%s has no neighbour 192.0.2.2 at %s: %q", peer, mac, out)
		}
		return err
	})
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            config(),
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes, "state", "running", "network_interface.1.direct.mode", "bridge", "network_interface.1.mac", mac),
				Check: resource.ComposeTestCheckFunc(host("up"),
					guest("boot", address+carrier("1")+ping, "carrier=1\nping=ok"), neighbour),
			},
			{
				Config:           config(attr("link_state", "down")),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            resource.ComposeTestCheckFunc(host("down"), guest("link down", carrier("0"), "carrier=0")),
			},
			{
				Config:           config(attr("link_state", "up")),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            resource.ComposeTestCheckFunc(host("up"), guest("link up", carrier("1")+ping, "carrier=1\nping=ok")),
			},
			{
				ResourceName:            domRes,
				ImportState:             true,
				ImportStateId:           name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"ip_address", "timeouts", "update_method"},
			},
			{
				// What -generate-config-out writes for the running domain plans clean.
				Config: config(attr("link_state", "up")),
				Check: acctest.HostCheck(func() error {
					if generated := generateConfigPlansClean(t, "libvirt_domain.adopted", name); !strings.Contains(generated, `"bridge"`) {
						return fmt.Errorf("the generated configuration lacks the direct NIC's mode:\n%s", generated)
					}
					return nil
				}),
			},
		},
	})
}
