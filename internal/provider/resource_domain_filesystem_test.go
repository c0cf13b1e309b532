package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// shareDir is a host directory for a shared folder, readable by QEMU and virtiofsd (a
// test's own TempDir sits in a directory only its owner may enter), holding file with
// content. It is removed when the test ends.
func shareDir(t *testing.T, file, content string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tfacc-fs-") //nolint:usetesting // t.TempDir sits in a 0700 directory QEMU and virtiofsd cannot enter
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fsBlock is a `filesystem` block.
func fsBlock(lines ...string) string { return blockHCL("filesystem", lines...) }

// The guest really sees its shares: a virtiofs share it reads and writes, and a
// read-only 9p share it reads and cannot write (libvirt 9.0 has no read-only virtiofs).
// The virtiofs share brings the shared memory virtiofsd needs, and takes it away again
// with it; the second plan is empty, the import matches.
func TestAccDomainFilesystem_sharesInGuest(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("fs")
	token := acctest.RandomName("from-host")
	rw, ro := shareDir(t, "host.txt", token), shareDir(t, "host.txt", token+"-ro")
	config := func(shares ...string) string {
		return acctest.ProviderBlock("") +
			volumeHCL("root", name+"-root.qcow2", attr("source_file", acctest.GuestImage(t))) +
			resourceHCL("libvirt_domain", "test", append([]string{attr("name", name), attr("vcpu", 1), attr("memory_mib", 256),
				`graphics = { type = "none" }`, "disk {\n    volume_id = libvirt_volume.root.id\n  }"}, shares...)...)
	}
	nine := fsBlock(attr("source", ro), attr("target", "nine"), attr("driver", "9p"), attr("read_only", true))
	both := config(fsBlock(attr("source", rw), attr("target", "share")), nine)
	memory := func(want bool) resource.TestCheckFunc {
		return acctest.HostCheck(func() error {
			d, err := acctest.InspectDomain(t, name)
			if err != nil {
				return err
			}
			mb := d.Inactive.MemoryBacking
			shared := mb != nil && mb.MemorySource != nil && mb.MemorySource.Type == "memfd" && mb.MemoryAccess != nil &&
				mb.MemoryAccess.Mode == "shared"
			if shared != want || (!want && mb != nil) {
				return fmt.Errorf("domain %s has memory backing %+v; want memfd shared memory: %t", name, mb, want)
			}
			return nil
		})
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name:   acctest.DomainLookup(name),
			"volume " + "root": acctest.VolumeLookup(acctest.Pool(), name+"-root.qcow2"),
		}),
		Steps: []resource.TestStep{
			{
				Config:           both,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(domRes,
					"filesystem.0.driver", "virtiofs",
					"filesystem.0.read_only", false,
					"filesystem.0.access_mode", nil,
					"filesystem.1.driver", "9p",
					"filesystem.1.access_mode", nil,
				),
				Check: resource.ComposeAggregateTestCheckFunc(memory(true), func(*terraform.State) error {
					acctest.WaitForAgent(t, name)
					out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", `mkdir -p /mnt/rw /mnt/ro &&
mount -t virtiofs share /mnt/rw && mount -t 9p -o trans=virtio,version=9p2000.L nine /mnt/ro &&
cat /mnt/rw/host.txt && echo && cat /mnt/ro/host.txt && echo && echo guest-wrote > /mnt/rw/guest.txt &&
if touch /mnt/ro/x 2>/tmp/err; then echo WRITABLE; else cat /tmp/err; fi`)
					if err != nil {
						return err
					}
					if !strings.Contains(out, token+"\n"+token+"-ro\n") {
						return fmt.Errorf("the guest read %q, want %s from virtiofs and %s-ro from 9p", out, token, token)
					}
					if strings.Contains(out, "WRITABLE") || !strings.Contains(out, "Read-only file system") {
						return fmt.Errorf("the read-only 9p share took a write: %q", out)
					}
					if b, err := os.ReadFile(filepath.Join(rw, "guest.txt")); err != nil || string(b) != "guest-wrote\n" {
						return fmt.Errorf("the guest's write through virtiofs: host reads %q, %v", b, err)
					}
					return nil
				}),
			},
			importStep(domRes, name, "timeouts"),
			{
				// The last virtiofs share goes live (still mounted in the guest), and the
				// definition is rewritten without the shared memory the provider added.
				Config:           config(nine),
				ConfigPlanChecks: acctest.Updates(domRes, "live"),
				Check:            memory(false),
			},
		},
	})
}

// A domain defined by virsh with shares (and a memory backing of its own) imports with
// -generate-config-out and plans clean.
func TestAccDomainFilesystem_importDefined(t *testing.T) {
	acctest.RequireAcc(t)
	name, disk := acctest.DomainDisk(t, "fs")
	acctest.RemoveDomainAtEnd(t, name) // the import leaves the domain to the test
	dir := shareDir(t, "f", "x")
	acctest.DefineDomain(t, fmt.Sprintf(`<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>128</memory>
  <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <devices>
    <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='%s'/><target dev='vda' bus='virtio'/></disk>
    <filesystem type='mount' accessmode='passthrough'><driver type='virtiofs'/><source dir='%s'/><target dir='share'/></filesystem>
    <filesystem type='mount' accessmode='mapped'><driver type='path'/><source dir='%s'/><target dir='nine'/><readonly/></filesystem>
    <filesystem type='mount'><source dir='%s'/><target dir='plain'/></filesystem>
  </devices>
</domain>`, name, disk, dir, dir, dir))
	generated := generateConfigPlansClean(t, "libvirt_domain.test", name)
	if strings.Count(generated, `access_mode = "`) != 1 {
		t.Errorf("only the mapped 9p share has an access mode of its own:\n%s", generated)
	}
	for _, want := range []string{`driver      = "virtiofs"`, `access_mode = "mapped"`, `read_only   = true`} {
		if !strings.Contains(generated, want) {
			t.Errorf("the generated configuration lacks %s:\n%s", want, generated)
		}
	}
}
