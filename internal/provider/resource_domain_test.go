package provider_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

const domRes = "libvirt_domain.test"

var ipv4 = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)

// emptyAfterApply is the post-apply refresh check every step makes: nothing drifts.
var emptyAfterApply = acctest.Plans()

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
	disk := domAccOverlay(t, name+".qcow2")
	seed := domAccSeed(t, name+"-seed.iso", hostname)
	network := acctest.Network()

	config := func(vcpu, maxVCPU, mem, maxMem int, source string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name           = %q
  vcpu           = %d
  max_vcpu       = %d
  memory_mib     = %d
  max_memory_mib = %d
  cloudinit_id   = %q

  disk {
    volume_id = %q
  }

  network_interface {
    network = %q
    wait_for_ip {
      source  = %q
      timeout = "4m"
    }
  }
}
`, name, vcpu, maxVCPU, mem, maxMem, seed, disk, network, source)
	}

	var firstID, restartedID int32
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:           config(1, 2, 256, 320, "lease"),
				ConfigPlanChecks: emptyAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("running")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("type"), knownvalue.StringExact("qemu")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("ip_address"), knownvalue.StringRegexp(ipv4)),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("network_interface").AtSliceIndex(0).AtMapKey("mac"), knownvalue.StringRegexp(regexp.MustCompile(`^52:54:00:`))),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("network_interface").AtSliceIndex(0).AtMapKey("addresses"), knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("disk").AtSliceIndex(0).AtMapKey("target"), knownvalue.StringExact("vda")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("disk").AtSliceIndex(0).AtMapKey("format"), knownvalue.StringExact("qcow2")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("machine"), knownvalue.StringRegexp(regexp.MustCompile(`^pc`))),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("console_url"), knownvalue.StringRegexp(regexp.MustCompile(`^vnc://127\.0\.0\.1:59\d\d$`))),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("update_method"), knownvalue.StringExact("none")),
				},
				Check: func(s *terraform.State) error {
					ip, _ := domAttr(s, "ip_address")
					mac, _ := domAttr(s, "network_interface.0.mac")
					leases, err := domAccLeases(t, network)
					if err != nil {
						return err
					}
					var seen []string
					for _, l := range leases[mac] {
						seen = append(seen, l.IP+"/"+l.Hostname)
						if l.IP == ip && l.Hostname == hostname {
							live, err := domAccInspect(t, name)
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
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("vcpu"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("memory_mib"), knownvalue.Int64Exact(320)),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("update_method"), knownvalue.StringExact("live")),
				},
				Check: func(*terraform.State) error {
					// Same QEMU process; live and persistent definitions agree with state.
					var live *domAccLive
					var err error
					for deadline := time.Now().Add(30 * time.Second); ; {
						if live, err = domAccInspect(t, name); err != nil {
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
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("max_vcpu"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("state"), knownvalue.StringExact("running")),
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("max_vcpu"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("console_url"), knownvalue.StringRegexp(regexp.MustCompile(`^vnc://127\.0\.0\.1:59\d\d$`))),
					statecheck.CompareValuePairs("data.libvirt_domain.test", tfjsonpath.New("ip_address"), domRes, tfjsonpath.New("ip_address"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("running")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("ip_address"), knownvalue.StringRegexp(ipv4)),
				},
				Check: func(*terraform.State) error {
					live, err := domAccInspect(t, name)
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
		ip, err := provider.RefreshDomainForTest(domAccCtx(t), c, name)
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
	bridge := domAccIsolatedNetwork(t, network) // its bridge carries a second NIC
	disk := domAccOverlay(t, name+".qcow2")
	config := func(running bool, wait string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 1
  memory_mib = 256
  running    = %t
  disk {
    volume_id = %q
  }
  network_interface {
    network = %q
    %s
  }
  network_interface {
    bridge = %q
    model  = "e1000"
  }
  shutdown = {
    timeout = "20s"
  }
}
`, name, running, disk, network, wait, bridge)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: config(true, `wait_for_ip {
      source  = "lease"
      timeout = "15s"
    }`),
				ExpectError: regexp.MustCompile(strings.ReplaceAll(`domain `+name+`: network interface on network `+network+
					` \(MAC 52:54:00(:[0-9a-f]{2}){3}\) got no IP address from the network's DHCP leases within 15s`, " ", `\s+`)),
			},
			{
				// The failed domain is in state, tainted: the plan replaces it.
				Config:           config(false, ""),
				ConfigPlanChecks: acctest.Does(domRes, plancheck.ResourceActionDestroyBeforeCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("shutoff")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("console_url"), knownvalue.StringExact("")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("network_interface").AtSliceIndex(1).AtMapKey("bridge"), knownvalue.StringExact(bridge)),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("network_interface").AtSliceIndex(1).AtMapKey("network"), knownvalue.Null()),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("network_interface").AtSliceIndex(1).AtMapKey("model"), knownvalue.StringExact("e1000")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("network_interface").AtSliceIndex(1).AtMapKey("mac"), knownvalue.StringRegexp(regexp.MustCompile(`^52:54:00:`))),
				},
			},
		},
	})
}

// UEFI through libvirt's firmware auto-selection: the domain gets its own nvram
// varstore, which is gone after destroy.
func TestAccDomain_uefi(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("dom")
	disk := domAccOverlay(t, name+".qcow2")
	var nvram string
	config := func(running bool, graphics string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 1
  memory_mib = 256
  running    = %t
  firmware   = "uefi"
  machine    = "q35"
  qemu_agent = false
  disk {
    volume_id = %q
  }
  graphics = {
    type = %q
  }
  shutdown = {
    timeout = "5s"
  }
}
`, name, running, disk, graphics)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			err := acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)})(s)
			if nvram == "" {
				return errors.Join(err, fmt.Errorf("no nvram path was seen"))
			}
			if _, serr := os.Stat(nvram); !errors.Is(serr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("nvram %s left behind after destroy (stat: %v)", nvram, serr))
			}
			return err
		},
		Steps: []resource.TestStep{{
			Config:           config(true, "none"),
			ConfigPlanChecks: emptyAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("firmware"), knownvalue.StringExact("uefi")),
				// libvirt expands q35 to pc-q35-<version>: not drift (emptyAfterApply).
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("machine"), knownvalue.StringExact("q35")),
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("running")),
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("console_url"), knownvalue.StringExact("")),
			},
			Check: func(*terraform.State) error {
				live, err := domAccInspect(t, name)
				if err != nil {
					return err
				}
				if live.Live.OS == nil || live.Live.OS.NVRam == nil || live.Live.OS.NVRam.NVRam == "" {
					return fmt.Errorf("running UEFI domain has no nvram in its live XML")
				}
				nvram = live.Live.OS.NVRam.NVRam
				if _, err := os.Stat(nvram); err != nil {
					return fmt.Errorf("nvram of the running domain: %w", err)
				}
				return nil
			},
		}, {
			// Powered off behind Terraform's back: the plan starts it again.
			PreConfig:        func() { domAccForceOff(t, name) },
			Config:           config(true, "none"),
			ConfigPlanChecks: acctest.Updates(domRes, "none", plancheck.ExpectKnownValue(domRes, tfjsonpath.New("running"), knownvalue.Bool(true))),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("running")),
			},
		}, {
			// A device change on a running domain: rewritten and restarted, as planned.
			Config:           config(true, "spice"),
			ConfigPlanChecks: acctest.Updates(domRes, "restart"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("console_url"), knownvalue.StringRegexp(regexp.MustCompile(`^spice://127\.0\.0\.1:59\d\d$`))),
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("running")),
			},
		}, {
			// running = false: shutdown request, forced off after shutdown.timeout (the
			// firmware alone does not act on the power button).
			Config:           config(false, "spice"),
			ConfigPlanChecks: emptyAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("shutoff")),
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("running"), knownvalue.Bool(false)),
			},
		}},
	})
}

// A domain defined outside Terraform (as `virsh define` does) imports by name and plans
// clean; the data source reads it by UUID; undefined behind Terraform's back, the next
// plan proposes to create it again, without an error.
func TestAccDomain_importDefinedAndGone(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("dom")
	disk := domAccOverlay(t, name+".qcow2")
	uuid := "6b1c3a5e-0d4f-4c2a-9e1b-" + fmt.Sprintf("%012x", time.Now().UnixNano()&0xffffffffffff)
	domAccDefine(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <uuid>%s</uuid>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <features><acpi/><apic/></features>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='%s'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <interface type='network'>
      <mac address='52:54:00:0a:0b:0c'/>
      <source network='%s'/>
      <model type='virtio'/>
    </interface>
    <serial type='pty'/>
    <console type='pty'/>
    <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>
    <graphics type='vnc' autoport='yes' listen='127.0.0.1'/>
  </devices>
</domain>`, name, uuid, disk, acctest.Network()))
	cfg := func(vcpu int, autostart bool, extra string) string {
		return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = %d
  memory_mib = 128
  running    = false
  autostart  = %t
  %s
  disk {
    path = %q
  }
  network_interface {
    network = %q
    mac     = "52:54:00:0a:0b:0c"
  }
}
`, name, vcpu, autostart, extra, disk, acctest.Network())
	}
	config := cfg(1, false, "")
	withData := config + `
data "libvirt_domain" "test" {
  uuid = libvirt_domain.test.uuid
}
`
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:             config,
				ResourceName:       domRes,
				ImportState:        true,
				ImportStateId:      name,
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["name"] != name || states[0].Attributes["state"] != "shutoff" {
						return fmt.Errorf("imported: %v", states)
					}
					return nil
				},
			},
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(plancheck.ExpectEmptyPlan()),
			},
			{
				Config:           withData,
				ConfigPlanChecks: emptyAfterApply,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("name"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("state"), knownvalue.StringExact("shutoff")),
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("vcpu"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("memory_mib"), knownvalue.Int64Exact(128)),
					statecheck.ExpectKnownValue("data.libvirt_domain.test", tfjsonpath.New("console_url"), knownvalue.StringExact("")),
					statecheck.CompareValuePairs("data.libvirt_domain.test", tfjsonpath.New("id"), domRes, tfjsonpath.New("id"), compare.ValuesSame()),
				},
			},
			{
				// The same disk by its volume key (a dir pool's key is its path): nothing
				// changes in the domain; the reference is recorded and reads back as written.
				Config:           strings.Replace(config, "path = ", "volume_id = ", 1),
				ConfigPlanChecks: acctest.Updates(domRes, "none"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("disk").AtSliceIndex(0).AtMapKey("volume_id"), knownvalue.StringExact(disk)),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("disk").AtSliceIndex(0).AtMapKey("path"), knownvalue.Null()),
				},
			},
			{
				// A stopped domain: the definition is rewritten, nothing starts.
				Config: cfg(2, true, `cpu_mode = "host-model"
  uuid     = "`+strings.ToUpper(uuid)+`"`),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("autostart"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("cpu_mode"), knownvalue.StringExact("host-model")),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("uuid"), knownvalue.StringExact(strings.ToUpper(uuid))),
					statecheck.ExpectKnownValue(domRes, tfjsonpath.New("state"), knownvalue.StringExact("shutoff")),
				},
				Check: func(*terraform.State) error {
					live, err := domAccInspect(t, name)
					if err != nil {
						return err
					}
					if live.Active || live.Inactive.VCPU.Value != 2 {
						return fmt.Errorf("active %v, persistent vcpu %d: want a stopped domain with 2 vcpus", live.Active, live.Inactive.VCPU.Value)
					}
					// Devices the provider does not manage survive the rewrite.
					if len(live.Inactive.Devices.Serials) != 1 || len(live.Inactive.Devices.Channels) != 1 {
						return fmt.Errorf("serial/channel lost in the rewrite: %+v", live.Inactive.Devices)
					}
					return nil
				},
			},
			{
				PreConfig:        func() { domAccUndefine(t, name) },
				Config:           config,
				ConfigPlanChecks: acctest.Does(domRes, plancheck.ResourceActionCreate),
			},
		},
	})
}

// The whole chain users write, with the provider's own volume and seed resources: the
// domain takes libvirt_volume.id and libvirt_cloudinit_iso.id, waits for the guest agent
// and gets the seed's hostname on its lease.
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
	resource.Test(t, resource.TestCase{
		PreCheck:                 acctest.PreCheck(t),
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"volume root":    acctest.VolumeLookup(acctest.Pool(), name+"-root.qcow2"),
			"volume seed":    acctest.VolumeLookup(acctest.Pool(), name+"-seed.iso"),
		}),
		Steps: []resource.TestStep{{
			Config:           config,
			ConfigPlanChecks: emptyAfterApply,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(domRes, tfjsonpath.New("ip_address"), knownvalue.StringRegexp(ipv4)),
				statecheck.CompareValuePairs(domRes, tfjsonpath.New("disk").AtSliceIndex(0).AtMapKey("volume_id"), "libvirt_volume.root", tfjsonpath.New("id"), compare.ValuesSame()),
				statecheck.CompareValuePairs(domRes, tfjsonpath.New("cloudinit_id"), "libvirt_cloudinit_iso.seed", tfjsonpath.New("id"), compare.ValuesSame()),
			},
			Check: func(s *terraform.State) error {
				mac, _ := domAttr(s, "network_interface.0.mac")
				ip, _ := domAttr(s, "ip_address")
				// The agent answered first; the DHCP lease follows within seconds.
				var seen []string
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
					leases, err := domAccLeases(t, acctest.Network())
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
