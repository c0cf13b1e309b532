package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// A domain defined by virsh with network disks (an rbd image whose key is in a secret,
// auth written beside the source as older tools do; an NBD export; an https cdrom with
// libvirt's default port) imports through -generate-config-out and plans clean.
func TestAccDomainDiskNetwork_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name, secret := acctest.RandomName("netdisk"), uuid.NewString()
	acctest.RemoveDomainAtEnd(t, name) // the import leaves the domain to the test
	acctest.DefineSecret(t, secret, "ceph", name)
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <devices>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <auth username='libvirt'><secret type='ceph' uuid='%s'/></auth>
      <source protocol='rbd' name='vms/%s'><host name='mon1.example' port='6789'/><host name='mon2.example'/></source>
      <target dev='vda' bus='virtio'/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='nbd' name='exp'><host name='127.0.0.1' port='10810'/></source>
      <target dev='vdb' bus='virtio'/>
    </disk>
    <disk type='network' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source protocol='https' name='/isos/tools.iso'><host name='images.example' port='443'/></source>
      <target dev='sda' bus='sata'/>
      <readonly/>
    </disk>
    <disk type='network' device='disk'>
      <driver name='qemu' type='raw'/>
      <source protocol='rbd' name='vms/%s-nomon'/>
      <target dev='vdc' bus='virtio'/>
    </disk>
  </devices>
</domain>`, name, secret, name, name))
	generated := generateConfigPlansClean(t, "libvirt_domain.test", name)
	// The last rbd disk names no monitor (QEMU reads them from ceph.conf): libvirt takes it (#25).
	for _, want := range []string{`protocol = "rbd"`, `secret_id += "` + secret + `"`, `port = 10810`, `protocol = "https"`, `-nomon"`} {
		if !regexp.MustCompile(want).MatchString(generated) { // secret_id is aligned with secret_usage
			t.Errorf("the generated configuration lacks %s:\n%s", want, generated)
		}
	}
}
