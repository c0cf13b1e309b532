package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// networkDisk is a disk block on network_source with the given lines (attr lines of it).
func networkDisk(lines ...string) string {
	return "disk {\n    network_source = {\n      " + strings.Join(lines, "\n      ") + "\n    }\n  }"
}

// A disk served by qemu-nbd in the test's namespace, attached through network_source: the
// running guest reads what the file holds. Second plan empty, import matches.
func TestAccDomainDiskNetwork_nbdInGuest(t *testing.T) {
	acctest.RequireAcc(t)
	name, magic := acctest.RandomName("nbd"), acctest.RandomName("NBD-MAGIC")
	file := filepath.Join(t.TempDir(), "export.raw")
	if err := os.WriteFile(file, append([]byte(magic), make([]byte, 1<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	port := acctest.NBDExport(t, file, "exp")
	config := acctest.ProviderBlock("") +
		volumeHCL("root", name+"-root.qcow2", attr("source_file", acctest.GuestImage(t))) +
		resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 256), `graphics = { type = "none" }`,
			"disk {\n    volume_id = libvirt_volume.root.id\n  }",
			networkDisk(attr("protocol", "nbd"), attr("name", "exp"), fmt.Sprintf(`hosts    = [{ name = "127.0.0.1", port = %d }]`, port)))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name: acctest.DomainLookup(name),
			"volume root":    acctest.VolumeLookup(acctest.Pool(), name+"-root.qcow2"),
		}),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes,
					"disk.1.path", nil,
					"disk.1.target", "vdb",
					"disk.1.format", "raw",
					"disk.1.network_source.protocol", "nbd",
				),
				Check: func(*terraform.State) error {
					acctest.WaitForAgent(t, name)
					out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", fmt.Sprintf("dd if=/dev/vdb bs=%d count=1 2>/dev/null", len(magic)))
					if err != nil {
						return err
					}
					if out != magic {
						return fmt.Errorf("the guest reads %q from the NBD disk, want %q", out, magic)
					}
					return nil
				},
			},
			importStep(domRes, name, "timeouts"),
		},
	})
}

// Network disks that cannot run here (no Ceph, no iSCSI target, no web server) define and
// read back: rbd with its key in a real libvirt_secret, an iSCSI LUN with CHAP, an https
// cdrom. Second plan empty, import matches, both objects gone after destroy.
func TestAccDomainDiskNetwork_defineOnly(t *testing.T) {
	acctest.RequireAcc(t)
	name, secret := acctest.RandomName("netdisk"), uuid.NewString()
	config := acctest.ProviderBlock("") +
		resourceHCL("libvirt_secret", "ceph", attr("uuid", secret), attr("usage_type", "ceph"), attr("usage_name", name),
			attr("value", "QVFCa2V5LWJ5dGVzLWhlcmU=")) +
		resourceHCL("libvirt_domain", "test", attr("name", name), idleDomain,
			networkDisk(attr("protocol", "rbd"), attr("name", "vms/"+name),
				`hosts    = [{ name = "mon1.example", port = 6790 }, { name = "mon2.example" }]`,
				`auth     = { username = "libvirt", secret_id = libvirt_secret.ceph.id }`),
			networkDisk(attr("protocol", "iscsi"), attr("name", "iqn.2026-12.example:storage/1"),
				`hosts    = [{ name = "san.example", port = 3261 }]`),
			strings.Replace(networkDisk(attr("protocol", "https"), attr("name", "/images/tools.iso"),
				`hosts    = [{ name = "images.example" }]`), "disk {", "disk {\n    device = \"cdrom\"", 1))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name:   acctest.DomainLookup(name),
			"secret " + secret: acctest.SecretLookup(secret),
		}),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes,
					"disk.0.network_source.auth.secret_id", secret,
					"disk.0.network_source.hosts.1.port", nil,
					"disk.0.target", "vda",
					"disk.1.target", "vdb",
					"disk.2.target", "sda",
					"disk.2.bus", "sata",
				),
				Check: acctest.HostCheck(func() error {
					d, err := acctest.InspectDomain(t, name)
					if err != nil {
						return err
					}
					src := d.Inactive.Devices.Disks[0].Source
					if src == nil || src.Network == nil || src.Network.Auth == nil || src.Network.Auth.Secret == nil ||
						src.Network.Auth.Secret.Type != "ceph" || src.Network.Auth.Secret.UUID != secret {
						return fmt.Errorf("the rbd disk's source in libvirt: %+v", src)
					}
					return nil
				}),
			},
			importStep(domRes, name, "timeouts"),
		},
	})
}
