package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

const domRes = "libvirt_domain.test"

var ipv4 = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)

func domAttr(s *terraform.State, name string) (string, error) {
	r, ok := s.RootModule().Resources[domRes]
	if !ok {
		return "", fmt.Errorf("%s not in state", domRes)
	}
	return r.Primary.Attributes[name], nil
}

// The main path, on one tiny guest booted under TCG: a qcow2 overlay and a cloud-init
// seed; the DHCP lease carries the seed's hostname and the address lands in state; import
// plans clean; vcpu and memory grow live within the headroom (same running domain); a
// change of the headroom restarts it (the plan said so) and wait_for_ip asks the real
// qemu-ga this time.
func TestAccDomain_cloudInitLiveResizeRestart(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("dom")
	hostname := strings.ReplaceAll(name, "tfacc-", "tfaccvm-")
	disk := acctest.Overlay(t, name+".qcow2")
	seed := acctest.Seed(t, name+"-seed.iso", hostname)
	network := acctest.Network()

	config := func(vcpu, maxVCPU, mem, maxMem int, source string) string {
		return acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", vcpu), attr("max_vcpu", maxVCPU),
			attr("memory_mib", mem), attr("max_memory_mib", maxMem), attr("cloudinit_id", seed), blockHCL("disk", attr("volume_id", disk)),
			blockHCL("network_interface", attr("network", network), blockHCL("wait_for_ip", attr("source", source), attr("timeout", "4m"))))
	}

	var firstID, restartedID int32
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config(1, 2, 256, 320, "lease"),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes,
					"state", "running",
					"type", "qemu",
					"ip_address", ipv4,
					"network_interface.0.mac", regexp.MustCompile(`^52:54:00:`),
					"network_interface.0.addresses", acctest.ListSize(1),
					"disk.0.target", "vda",
					"disk.0.format", "qcow2",
					"os", nil, // libvirt's machine (pc-i440fx-...) stays out of state
					"console_url", regexp.MustCompile(`^vnc://127\.0\.0\.1:59\d\d$`),
					"update_method", "none",
				),
				Check: func(s *terraform.State) error {
					ip, _ := domAttr(s, "ip_address")
					mac, _ := domAttr(s, "network_interface.0.mac")
					leases, err := acctest.Leases(t, network)
					if err != nil {
						return err
					}
					var seen []string
					for _, l := range leases[mac] {
						seen = append(seen, l.IP+"/"+l.Hostname)
						if l.IP == ip && l.Hostname == hostname {
							live, err := acctest.InspectDomain(t, name)
							if err != nil {
								return err
							}
							firstID = live.ID
							return domAccRefreshIsQuick(t, name, ip)
						}
					}
					return fmt.Errorf("no lease of %s for %s with hostname %s; leases of that MAC: %v", network, ip, hostname, seen)
				},
			},
			{
				ResourceName:            domRes,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateIdFunc:       func(s *terraform.State) (string, error) { return domAttr(s, "uuid") }, // by UUID; the other test imports by name
				ImportStateVerifyIgnore: []string{"network_interface.0.wait_for_ip", "network_interface.0.addresses", "ip_address", "timeouts"},
			},
			{
				Config:           config(2, 2, 320, 320, "lease"),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				ConfigStateChecks: acctest.State(domRes,
					"vcpu", 2,
					"memory_mib", 320,
					"update_method", "live",
				),
				Check: func(*terraform.State) error {
					// Same QEMU process; live and persistent definitions agree with state.
					var live *acctest.DomainLive
					var err error
					for deadline := time.Now().Add(30 * time.Second); ; {
						if live, err = acctest.InspectDomain(t, name); err != nil {
							return err
						}
						if live.Live.CurrentMemory.Value == 320*1024 || time.Now().After(deadline) {
							break
						}
						time.Sleep(time.Second)
					}
					if live.ID != firstID {
						return fmt.Errorf("domain id changed from %d to %d: it was restarted, not resized live", firstID, live.ID)
					}
					if v := live.Live.VCPU; v.Current != 0 && v.Current != 2 {
						return fmt.Errorf("live vcpu current=%d max=%d, want 2", v.Current, v.Value)
					}
					if v := live.Inactive.VCPU; v.Current != 0 && v.Current != 2 {
						return fmt.Errorf("persistent vcpu current=%d max=%d, want 2", v.Current, v.Value)
					}
					if m := live.Live.CurrentMemory.Value; m != 320*1024 {
						return fmt.Errorf("live currentMemory %d KiB, want %d", m, 320*1024)
					}
					if m := live.Inactive.CurrentMemory.Value; m != 320*1024 {
						return fmt.Errorf("persistent currentMemory %d KiB, want %d", m, 320*1024)
					}
					return nil
				},
			},
			{
				Config: config(2, 3, 320, 320, "agent") + `
data "libvirt_domain" "test" {
  name = libvirt_domain.test.name
}
`,
				ConfigPlanChecks: acctest.Updates(domRes, "restart"),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.StateIs(domRes, "max_vcpu", 3),
					acctest.StateIs("data.libvirt_domain.test", "state", "running"),
					acctest.StateIs("data.libvirt_domain.test", "max_vcpu", 3),
					acctest.StateIs("data.libvirt_domain.test", "console_url", regexp.MustCompile(`^vnc://127\.0\.0\.1:59\d\d$`)),
					acctest.Same("data.libvirt_domain.test", "ip_address", domRes, "ip_address"),
					acctest.StateIs(domRes, "state", "running"),
					acctest.StateIs(domRes, "ip_address", ipv4),
				},
				Check: func(*terraform.State) error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					restartedID = live.ID
					if !live.Active || restartedID == firstID {
						return fmt.Errorf("domain id %d (before %d), active %v: want a restarted, running domain", restartedID, firstID, live.Active)
					}
					if v := live.Live.VCPU; v.Value != 3 {
						return fmt.Errorf("live vcpu max %d, want 3", v.Value)
					}
					return nil
				},
			},
		},
	})
}

// domAccRefreshIsQuick times the refresh (Read) path of a running domain: one look at
// leases and the agent, no polling. Plans must cost milliseconds per domain; 2 s is the
// bound on 2 busy cores (the agent's deadline is 1 s).
func domAccRefreshIsQuick(t *testing.T, name, wantIP string) error {
	c := acctest.Client(t)
	for i := range 3 {
		start := time.Now()
		ip, err := provider.RefreshDomainForTest(acctest.Ctx(t), c, name)
		took := time.Since(start)
		if err != nil {
			return err
		}
		t.Logf("refresh %d of %s took %s (ip %s)", i, name, took, ip)
		if took > 2*time.Second {
			return fmt.Errorf("a refresh of %s took %s: Read must not wait", name, took)
		}
		if ip != wantIP {
			return fmt.Errorf("refresh found ip %q, want %q", ip, wantIP)
		}
	}
	return nil
}

// wait_for_ip on a network where the guest gets no lease: the apply fails after the
// short timeout with an error naming the domain, the MAC and the source, and the domain
// stays in state (tainted: the next plan replaces it; CheckDestroy proves it was tracked).
func TestAccDomain_waitForIPTimeout(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("dom")
	network := acctest.RandomName("net")
	bridge := acctest.IsolatedNetwork(t, network) // its bridge carries a second NIC
	disk := acctest.Overlay(t, name+".qcow2")
	config := func(running bool, wait string) string {
		return acctest.ProviderBlock("") + domainHCL(name, disk, attr("running", running),
			fmt.Sprintf("network_interface {\n    network = %q\n    %s\n  }", network, wait),
			fmt.Sprintf("network_interface {\n    bridge = %q\n    model  = \"e1000\"\n  }", bridge),
			attr("shutdown", hcl(`{ timeout = "20s" }`)))
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: config(true, `wait_for_ip {
      source  = "lease"
      timeout = "15s"
    }`),
				ExpectError: regexp.MustCompile(strings.ReplaceAll(`domain `+name+`: network interface on network `+network+
					` \(MAC 52:54:00(:[0-9a-f]{2}){3}\) got no IP address from the network's DHCP leases within 15s`, " ", `\s+`) +
					// the console is read from right after the start: the boot's output (the boot loader's banner) is there
					`(.|\n)*Last [0-9]+ lines of the guest's console:(.|\n)*SYSLINUX `),
			},
			{
				// The failed domain is in state, tainted: the plan replaces it.
				Config:           config(false, ""),
				ConfigPlanChecks: acctest.Does(domRes, acctest.DestroyBeforeCreate),
				ConfigStateChecks: acctest.State(domRes,
					"state", "shutoff",
					"console_url", "",
					"network_interface.1.bridge", bridge,
					"network_interface.1.network", nil,
					"network_interface.1.model", "e1000",
					"network_interface.1.mac", regexp.MustCompile(`^52:54:00:`),
				),
				// The replacement on the host: stopped, its second NIC on the bridge, an
				// e1000 with the MAC in state.
				Check: func(s *terraform.State) error {
					a, err := stateAttrs(s, domRes)
					if err != nil {
						return err
					}
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					nics := live.Inactive.Devices.Interfaces
					switch {
					case live.Active:
						return fmt.Errorf("domain %s runs, want it shut off", name)
					case len(nics) != 2 || nics[1].Source == nil || nics[1].Source.Bridge == nil || nics[1].Model == nil || nics[1].MAC == nil:
						return fmt.Errorf("domain %s has interfaces %+v, want a second one on bridge %s", name, nics, bridge)
					case nics[1].Source.Bridge.Bridge != bridge || nics[1].Model.Type != "e1000" || !strings.EqualFold(nics[1].MAC.Address, a["network_interface.1.mac"]):
						return fmt.Errorf("second interface of %s: bridge %s, model %s, mac %s; want %s, e1000, %s", name,
							nics[1].Source.Bridge.Bridge, nics[1].Model.Type, nics[1].MAC.Address, bridge, a["network_interface.1.mac"])
					}
					return nil
				},
			},
		},
	})
}

func TestAccDomain_withVolumeAndSeedResources(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("dom")
	hostname := strings.ReplaceAll(name, "tfacc-", "tfaccvm-")
	config := acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_volume" "base" {
  name        = "%[1]s-base.qcow2"
  pool        = %[2]q
  source_file = %[3]q
}

resource "libvirt_volume" "root" {
  name           = "%[1]s-root.qcow2"
  pool           = %[2]q
  backing_volume = libvirt_volume.base.id
}

resource "libvirt_cloudinit_iso" "seed" {
  name        = "%[1]s-seed.iso"
  pool        = %[2]q
  instance_id = %[1]q
  hostname    = %[4]q
  user_data   = "#cloud-config\n{}\n"
}

resource "libvirt_domain" "test" {
  name         = %[1]q
  vcpu         = 1
  memory_mib   = 256
  cloudinit_id = libvirt_cloudinit_iso.seed.id
  disk {
    volume_id = libvirt_volume.root.id
  }
  network_interface {
    network = %[5]q
    wait_for_ip {
      source  = "agent"
      timeout = "4m"
    }
  }
}
`, name, acctest.Pool(), acctest.GuestImage(t), hostname, acctest.Network())
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"volume root":    acctest.VolumeLookup(acctest.Pool(), name+"-root.qcow2"),
			"volume seed":    acctest.VolumeLookup(acctest.Pool(), name+"-seed.iso"),
		}),
		Steps: []resource.TestStep{{
			Config:           config,
			ConfigPlanChecks: acctest.Plans(),
			ConfigStateChecks: []statecheck.StateCheck{
				acctest.StateIs(domRes, "ip_address", ipv4),
				acctest.Same(domRes, "disk.0.volume_id", "libvirt_volume.root", "id"),
				acctest.Same(domRes, "cloudinit_id", "libvirt_cloudinit_iso.seed", "id"),
			},
			Check: func(s *terraform.State) error {
				mac, _ := domAttr(s, "network_interface.0.mac")
				ip, _ := domAttr(s, "ip_address")
				// The agent answered first; the DHCP lease follows within seconds.
				var seen []string
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
					leases, err := acctest.Leases(t, acctest.Network())
					if err != nil {
						return err
					}
					seen = seen[:0]
					for _, l := range leases[mac] {
						seen = append(seen, l.IP+"/"+l.Hostname)
						if l.IP == ip && l.Hostname == hostname {
							return nil
						}
					}
				}
				return fmt.Errorf("no lease for %s (%s) with hostname %s: %v", mac, ip, hostname, seen)
			},
		}},
	})
}
