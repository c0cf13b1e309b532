package provider_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// A domain defined outside Terraform (as `virsh define` does) imports by name and plans
// clean; the data source reads it by UUID; undefined behind Terraform's back, the next
// plan proposes to create it again, without an error.
func TestAccDomain_importDefinedAndGone(t *testing.T) {
	name, disk := acctest.DomainDisk(t, "dom")
	uuid := "6b1c3a5e-0d4f-4c2a-9e1b-" + fmt.Sprintf("%012x", time.Now().UnixNano()&0xffffffffffff)
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
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
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{"domain " + name: acctest.DomainLookup(name)}),
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
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
			},
			{
				Config:           withData,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State("data.libvirt_domain.test",
					"name", name,
					"state", "shutoff",
					"vcpu", 1,
					"memory_mib", 128,
					"console_url", "",
				), acctest.Same("data.libvirt_domain.test", "id", domRes, "id")),
			},
			{
				// The same disk by its volume key (a dir pool's key is its path): nothing
				// changes in the domain; the reference is recorded and reads back as written.
				Config:           strings.Replace(config, "path = ", "volume_id = ", 1),
				ConfigPlanChecks: acctest.Updates(domRes, "none"),
				ConfigStateChecks: acctest.State(domRes,
					"disk.0.volume_id", disk,
					"disk.0.path", nil,
				),
			},
			{
				// A stopped domain: the definition is rewritten, nothing starts.
				Config: cfg(2, true, `cpu = { mode = "host-model" }
  uuid     = "`+strings.ToUpper(uuid)+`"`),
				ConfigPlanChecks: acctest.Updates(domRes, "definition"),
				ConfigStateChecks: acctest.State(domRes,
					"autostart", true,
					"cpu.mode", "host-model",
					"uuid", strings.ToUpper(uuid),
					"state", "shutoff",
				),
				Check: acctest.HostCheck(func() error {
					live, err := acctest.InspectDomain(t, name)
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
				}),
			},
			{
				PreConfig:        func() { acctest.UndefineDomain(t, name) },
				Config:           config,
				ConfigPlanChecks: acctest.Does(domRes, acctest.Create),
			},
		},
	})
}

// The whole chain users write, with the provider's own volume and seed resources: the
// domain takes libvirt_volume.id and libvirt_cloudinit_iso.id, waits for the guest agent
// and gets the seed's hostname on its lease.
