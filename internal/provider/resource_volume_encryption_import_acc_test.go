package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// TestAccVolumeEncryption_importAfterRefresh: a LUKS volume whose secret's usage does not
// name its path, used by a (stopped) domain, imports with its secret after the pool was
// refreshed: libvirt then no longer names the volume's secret, the domain's disk still
// does. Before, such an import found "encryption.secret_id" missing, depending on whether
// any client had refreshed the shared pool since the volume was made (the symptom of
// TestAccVolumeEncryption_booted's import in CI). Define-only (Terraform and OpenTofu);
// serial: it refreshes the shared pool.
func TestAccVolumeEncryption_importAfterRefresh(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("luksimp")
	config := acctest.ProviderBlock("") +
		resourceHCL("libvirt_secret", "s", attr("usage_type", "volume"), attr("usage_name", name+"-not-the-path"),
			attr("value_wo", acctest.RandomName("pass")), attr("value_wo_version", 1)) +
		volumeHCL("v", name+".raw", attr("format", "raw"), attr("capacity_bytes", 1<<20),
			`encryption = { format = "luks", secret_id = libvirt_secret.s.id }`) +
		resourceHCL("libvirt_domain", "test", attr("name", name), attr("type", "qemu"), attr("vcpu", 1), attr("memory_mib", 128),
			attr("running", false), attr("qemu_agent", false), `graphics = { type = "none" }`,
			"disk {\n    volume_id = libvirt_volume.v.id\n  }")
	acctest.RunSerial(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"volume " + name: acctest.VolumeLookup(acctest.Pool(), name+".raw"),
		}),
		Steps: []resource.TestStep{
			{
				Config:            config,
				ConfigPlanChecks:  acctest.Plans(),
				ConfigStateChecks: []statecheck.StateCheck{acctest.Same("libvirt_volume.v", "encryption.secret_id", "libvirt_secret.s", "id")},
				// What the import reads once libvirt no longer names the volume's secret: the
				// domain's disk on the host names it.
				Check: func(s *terraform.State) error {
					secret := s.RootModule().Resources["libvirt_secret.s"].Primary.ID
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					x := d.Inactive.Devices.Disks[0]
					if e := x.Source.Encryption; e == nil || len(e.Secrets) != 1 || e.Secrets[0].UUID != secret {
						return fmt.Errorf("disk %s: encryption %+v, want luks with secret %s", x.Target.Dev, e, secret)
					}
					return nil
				},
			},
			refreshedFirst(t, importStep("libvirt_volume.v", "", "timeouts")),
			refreshedFirst(t, resource.TestStep{Config: config, PlanOnly: true}),
		},
	})
}
