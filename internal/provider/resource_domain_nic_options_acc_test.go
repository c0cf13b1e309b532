package provider_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// NIC breadth, define-only: this host has no 8021q, Open vSwitch or sfq/fw/police tc, so
// vlan, virtualport and bandwidth NICs cannot start here (a direct/macvtap NIC can, on a
// veth: resource_domain_macvtap_acc_test.go). They are defined (running = false), read back
// without drift (libvirt's vepa mode, generated interface ids, the implied trunk),
// changed, imported, and destroyed.

// nicOptionsNetwork is an inactive network of the test's own with port group pg1.
func nicOptionsNetwork(t *testing.T) string {
	name := acctest.RandomName("nicnet")
	acctest.DefineNetwork(t, &libvirtxml.Network{Name: name, PortGroups: []libvirtxml.NetworkPortGroup{{Name: "pg1"}},
		IPs: []libvirtxml.NetworkIP{{Address: "10.254.31.1", Netmask: "255.255.255.0"}}}, false)
	return name
}

// nicOptionsHCL is a stopped domain with one NIC of each source and every option; nic0
// and nic1 are extra lines for the first two NICs.
func nicOptionsHCL(name, network, nic0, nic1 string) string {
	return acctest.ProviderBlock("") + fmt.Sprintf(`
resource "libvirt_domain" "test" {
  name       = %q
  vcpu       = 1
  memory_mib = 64
  running    = false

  network_interface {
    network    = %q
    port_group = "pg1"
    boot_order = 1
    filter = {
      name       = "clean-traffic"
      parameters = { IP = "10.254.31.5" }
    }
    bandwidth = {
      inbound  = { average_kib = 1000, peak_kib = 2000, burst_kib = 512 }
      outbound = { average_kib = 100 }
    }
    trust_guest_rx_filters = false
    virtualport            = { type = "802.1Qbg" }
    %s
  }
  network_interface {
    bridge      = "kvft-nobr0"
    virtualport = { type = "openvswitch" }
    vlan        = { tags = [42, 43], native_tag = 7, native_mode = "untagged" }
    queues      = 2
    rom         = { bar = "off" }
    %s
  }
  network_interface {
    direct                 = { dev = "kvft-nolink0" }
    trust_guest_rx_filters = true
    virtualport            = { type = "802.1Qbh", profile_id = "prof2" }
  }
  network_interface {
    bridge      = "kvft-nobr0"
    model       = "e1000"
    virtualport = { type = "802.1Qbh", profile_id = "prof1" }
    rom         = { file = "/usr/share/qemu/pxe-e1000.rom" }
  }
}
`, name, network, nic0, nic1)
}

func TestAccDomainNICOptions_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name, network := acctest.RandomName("nicopt"), nicOptionsNetwork(t)
	var ovsID string
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config: nicOptionsHCL(name, network, `link_state = "up"`, `mtu = 9000`),
				ConfigStateChecks: acctest.State(domRes,
					"network_interface.0.port_group", "pg1",
					"network_interface.0.link_state", "up",
					"network_interface.0.trust_guest_rx_filters", false,
					"network_interface.0.bandwidth.outbound.peak_kib", nil,
					"network_interface.1.vlan.trunk", nil,
					"network_interface.1.virtualport.interface_id", acctest.NotNull,
					"network_interface.0.virtualport.interface_id", acctest.NotNull,
					"network_interface.2.direct.mode", "vepa",
					"network_interface.3.virtualport.interface_id", nil,
				),
				Check: acctest.HostCheck(func() error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					nics := live.Inactive.Devices.Interfaces
					if len(nics) != 4 || live.Active {
						return fmt.Errorf("want 4 NICs on a stopped domain, got %d (active %v)", len(nics), live.Active)
					}
					if p := nics[1].VirtualPort; p == nil || p.Params == nil || p.Params.OpenVSwitch == nil || p.Params.OpenVSwitch.InterfaceID == "" {
						return fmt.Errorf("nic 1: want an openvswitch port with libvirt's interfaceid, got %+v", p)
					}
					ovsID = nics[1].VirtualPort.Params.OpenVSwitch.InterfaceID
					if nics[0].Boot == nil || nics[0].Boot.Order != 1 || live.Inactive.OS.BootDevices != nil {
						return fmt.Errorf("nic 0: want boot order 1 and no <os><boot dev>, got %+v / %+v", nics[0].Boot, live.Inactive.OS.BootDevices)
					}
					if nics[1].MTU == nil || nics[1].MTU.Size != 9000 || nics[1].Driver == nil || nics[1].Driver.Queues != 2 {
						return fmt.Errorf("nic 1: want mtu 9000 and 2 queues, got %+v %+v", nics[1].MTU, nics[1].Driver)
					}
					if s := nics[2].Source; s == nil || s.Direct == nil || s.Direct.Mode != "vepa" {
						return fmt.Errorf("nic 2: want a direct source in vepa mode, got %+v", s)
					}
					return nil
				}),
			},
			{
				Config:           nicOptionsHCL(name, network, `link_state = "up"`, `mtu = 9000`),
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
			},
			{
				// A stopped domain: the definition is rewritten; the generated OVS id stays.
				Config:           nicOptionsHCL(name, network, `link_state = "down"`, `mtu = 1400`),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes,
					"network_interface.0.link_state", "down",
					"network_interface.1.mtu", 1400,
				),
				Check: acctest.HostCheck(func() error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					nics := live.Inactive.Devices.Interfaces
					if nics[0].Link == nil || nics[0].Link.State != "down" || nics[1].MTU.Size != 1400 {
						return fmt.Errorf("want link down and mtu 1400, got %+v %+v", nics[0].Link, nics[1].MTU)
					}
					if got := nics[1].VirtualPort.Params.OpenVSwitch.InterfaceID; got != ovsID {
						return fmt.Errorf("the generated interfaceid changed on the rewrite: %s, was %s", got, ovsID)
					}
					return nil
				}),
			},
			{
				ResourceName:            domRes,
				ImportState:             true,
				ImportStateId:           name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"ip_address", "timeouts", "update_method"},
			},
		},
	})
}

// A domain virsh defined with every NIC option imports through -generate-config-out,
// and the generated configuration plans clean. The 802.1Qbg NIC's manager and type ids
// are nothing the block types: import escapes that NIC whole into device_xml (#25)
// rather than typing it without them.
func TestAccDomainNICOptions_importVirshDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name, network := acctest.RandomName("nicimp"), nicOptionsNetwork(t)
	acctest.RemoveDomainAtEnd(t, name) // the import leaves the domain to the test
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
    <interface type='network' trustGuestRxFilters='no'>
      <source network='%s' portgroup='pg1'/>
      <bandwidth><inbound average='1000' peak='2000' burst='512'/><outbound average='100'/></bandwidth>
      <filterref filter='clean-traffic'><parameter name='IP' value='10.254.31.6'/></filterref>
      <link state='up'/>
      <boot order='1'/>
      <model type='virtio'/>
    </interface>
    <interface type='bridge'>
      <source bridge='kvft-nobr0'/>
      <virtualport type='openvswitch'/>
      <vlan><tag id='42'/><tag id='43'/><tag id='7' nativeMode='tagged'/></vlan>
      <mtu size='9000'/>
      <driver queues='4'/>
      <link state='down'/>
      <rom bar='on' file='/usr/share/qemu/pxe-virtio.rom'/>
      <model type='virtio'/>
    </interface>
    <interface type='direct' trustGuestRxFilters='yes'>
      <source dev='kvft-nolink0' mode='private'/>
      <virtualport type='802.1Qbg'><parameters managerid='11' typeid='1193047' typeidversion='2'/></virtualport>
      <model type='virtio'/>
    </interface>
    <interface type='bridge'>
      <source bridge='kvft-nobr0'/>
      <virtualport type='802.1Qbh'><parameters profileid='prof1'/></virtualport>
      <model type='virtio'/>
    </interface>
  </devices>
</domain>`, name, network))
	w := newCLIWork(t, acctest.ProviderBlock("")+fmt.Sprintf(`
import {
  to = libvirt_domain.nic
  id = %q
}
`, name))
	if out, code := w.run("plan", "-input=false", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("plan -generate-config-out (exit %d):\n%s", code, out)
	}
	generated, _ := os.ReadFile(w.path("generated.tf"))
	for _, want := range []string{`port_group`, `native_tag`, `interface_id`, `profile_id`, `mode=\"private\"`, `managerid=\"11\"`, `burst_kib`, `clean-traffic`} {
		if !strings.Contains(string(generated), want) {
			t.Errorf("generated.tf has no %s:\n%s", want, generated)
		}
	}
	if out, code := w.run("apply", "-auto-approve", "-input=false"); code != 0 || !strings.Contains(out, "1 imported, 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("apply of the generated config (exit %d) did more than import:\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	if out, code := w.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after importing with the generated config is not empty (exit %d):\n%s\n--- generated.tf:\n%s", code, out, generated)
	}
	w.run("state", "rm", "libvirt_domain.nic") // the test's cleanup removes the domain
}

// One booted tiny guest: a virtio NIC with queues = 2 and mtu = 1400 shows two queue
// pairs and that MTU inside the guest (userspace virtio-net; this host has no vhost-net),
// and it runs behind the clean-traffic nwfilter (ebtables/iptables work here; bandwidth
// does not: libvirt's `tc ... sfq` fails, "Specified qdisc kind is unknown").
func TestAccDomainNICOptions_queuesMTUBooted(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "nicq")
	config := acctest.ProviderBlock("") + resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 2), attr("memory_mib", 128),
		blockHCL("disk", attr("volume_id", disk)),
		blockHCL("network_interface", attr("network", acctest.Network()), attr("queues", 2), attr("mtu", 1400),
			attr("filter", hcl(`{ name = "clean-traffic" }`))))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigStateChecks: acctest.State(domRes, "state", "running", "network_interface.0.queues", 2, "network_interface.0.mtu", 1400),
				Check: acctest.HostCheck(func() error {
					live, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					if nics := live.Live.Devices.Interfaces; !live.Active || len(nics) != 1 || nics[0].FilterRef == nil || nics[0].FilterRef.Filter != "clean-traffic" {
						return fmt.Errorf("want a running domain whose NIC has filter clean-traffic, got active %v, %+v", live.Active, nics)
					}
					acctest.WaitForAgent(t, name)
					out, err := acctest.GuestExec(t, name, "/bin/sh", "-c",
						`for n in /sys/class/net/*; do [ -e $n/device ] && echo $(cat $n/mtu) $(ls $n/queues); done; true`)
					if err != nil {
						return err
					}
					if got := strings.TrimSpace(out); got != "1400 rx-0 rx-1 tx-0 tx-1" {
						return fmt.Errorf("the guest's NIC shows %q, want mtu 1400 and queues rx-0 rx-1 tx-0 tx-1", got)
					}
					return nil
				}),
			},
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
			},
		},
	})
}
