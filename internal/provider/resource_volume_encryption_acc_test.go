package provider_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
)

// LUKS volumes with their passphrases in write-only libvirt_secrets, read and written by
// a booted guest: an empty raw volume (a LUKS image) the guest writes a marker to and
// reads back, and a qcow2 copy (clone_from) of a plain volume whose marker the guest
// reads through the encryption. The domain's disks name only the volumes: the
// encryption and its secret come from them. The passphrases are in no state; the
// markers are not in the volumes' bytes on the host. Second plan empty; the volumes,
// secrets and domain import; destroy leaves no secret and no volume.
func TestAccVolumeEncryption_booted(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("luks")
	pass1, pass2 := acctest.RandomName("pass-one"), acctest.RandomName("pass-two")
	written, copied := acctest.RandomName("WRITTEN"), acctest.RandomName("COPIED")
	plain := filepath.Join(t.TempDir(), "plain.raw")
	if err := os.WriteFile(plain, append([]byte(copied), make([]byte, 1<<20-len(copied))...), 0o600); err != nil {
		t.Fatal(err)
	}
	// The secrets' usage names the volumes' paths as libvirt has them: the pool's own
	// directory, not what the environment says it is.
	pool, err := acctest.Client(t).ReadPool(acctest.Ctx(t), acctest.Pool())
	if err != nil || pool.Def.Target == nil {
		t.Fatalf("read pool %s: %v", acctest.Pool(), err)
	}
	dir := pool.Def.Target.Path
	secret := func(label, vol, pass string) string {
		return resourceHCL("libvirt_secret", label, attr("usage_type", "volume"), attr("usage_name", filepath.Join(dir, vol)),
			attr("value_wo", pass), attr("value_wo_version", 1))
	}
	config := acctest.ProviderBlock("") +
		secret("luks", name+"-luks.raw", pass1) + secret("copy", name+"-copy.qcow2", pass2) +
		volumeHCL("root", name+"-root.qcow2", attr("source_file", acctest.GuestImage(t))) +
		volumeHCL("plain", name+"-plain.raw", attr("source_file", plain), attr("format", "raw")) +
		volumeHCL("luks", name+"-luks.raw", attr("format", "raw"), attr("capacity_bytes", 16<<20),
			`encryption = { format = "luks", secret_id = libvirt_secret.luks.id }`) +
		volumeHCL("copy", name+"-copy.qcow2", attr("clone_from", hcl("libvirt_volume.plain.id")),
			`encryption = { format = "luks", secret_id = libvirt_secret.copy.id }`) +
		resourceHCL("libvirt_domain", "test", attr("name", name), attr("vcpu", 1), attr("memory_mib", 256), `graphics = { type = "none" }`,
			"disk {\n    volume_id = libvirt_volume.root.id\n  }",
			"disk {\n    volume_id = libvirt_volume.luks.id\n  }",
			"disk {\n    volume_id = libvirt_volume.copy.id\n  }")
	var ids = map[string]string{}
	keep := func(s *terraform.State) error {
		for _, r := range []string{"libvirt_secret.luks", "libvirt_secret.copy", "libvirt_volume.luks", "libvirt_volume.copy"} {
			ids[r] = s.RootModule().Resources[r].Primary.ID
		}
		return nil
	}
	acctest.Run(t, resource.TestCase{
		// By name and usage, not by the ids the steps saw: also after a first apply that failed.
		CheckDestroy: acctest.CheckGone(map[string]acctest.Lookup{
			"domain " + name:                    acctest.DomainLookup(name),
			"secret of " + name + "-luks.raw":   acctest.VolumeSecretLookup(filepath.Join(dir, name+"-luks.raw")),
			"secret of " + name + "-copy.qcow2": acctest.VolumeSecretLookup(filepath.Join(dir, name+"-copy.qcow2")),
			"volume " + name + "-luks.raw":      acctest.VolumeLookup(acctest.Pool(), name+"-luks.raw"),
			"volume " + name + "-copy.qcow2":    acctest.VolumeLookup(acctest.Pool(), name+"-copy.qcow2"),
		}),
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: append(acctest.State("libvirt_volume.luks", "encryption.format", "luks", "format", "raw", "capacity_bytes", 16<<20),
					acctest.Same("libvirt_volume.luks", "encryption.secret_id", "libvirt_secret.luks", "id"),
					acctest.Same("libvirt_volume.copy", "encryption.secret_id", "libvirt_secret.copy", "id"),
					acctest.StateIs("libvirt_volume.copy", "format", "qcow2"),
					acctest.StateIs("libvirt_secret.luks", "value", nil)),
				Check: resource.ComposeAggregateTestCheckFunc(keep,
					passphrasesNotInState(pass1, pass2),
					func(*terraform.State) error { return guestUsesLUKS(t, name, written, copied) },
					func(*terraform.State) error {
						return notInVolumes(t, []string{ids["libvirt_volume.luks"], ids["libvirt_volume.copy"]}, written, copied)
					}),
			},
			// The running guest allocates more, and libvirt gives its disks to the qemu user.
			// The volumes import after a refresh of the pool, which parallel tests do at any
			// time: libvirt then no longer has the secrets the volumes were made with.
			refreshedFirst(t, importStep("libvirt_volume.luks", "", "timeouts", "allocation_bytes", "permissions.owner", "permissions.group")),
			refreshedFirst(t, importStep("libvirt_volume.copy", "", "timeouts", "clone_from", "allocation_bytes", "permissions.owner", "permissions.group")),
			importStep("libvirt_secret.luks", "", "timeouts", "value", "value_wo_version"),
			importStep(domRes, name, "timeouts"),
		},
	})
}

// refreshedFirst is step run after a refresh of the test pool.
func refreshedFirst(t *testing.T, step resource.TestStep) resource.TestStep {
	step.PreConfig = func() {
		if _, err := acctest.VolumeNames(t, acctest.Pool(), func(string) bool { return false }); err != nil { // refreshes the pool
			t.Fatal(err)
		}
	}
	return step
}

// passphrasesNotInState: no attribute of any resource in the state (what `show -json`
// prints, which the test framework reads) holds a passphrase.
func passphrasesNotInState(passes ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for addr, r := range s.RootModule().Resources {
			for k, v := range r.Primary.Attributes {
				for _, p := range passes {
					if strings.Contains(v, p) {
						return fmt.Errorf("%s.%s holds a write-only passphrase in the state", addr, k)
					}
				}
			}
		}
		return nil
	}
}

// guestUsesLUKS: the guest sees the 16 MiB LUKS volume as vdb, writes a marker to it and
// reads it back past its page cache, and reads the copied marker from vdc.
func guestUsesLUKS(t *testing.T, name, written, copied string) error {
	acctest.WaitForAgent(t, name)
	size, err := acctest.GuestExec(t, name, "/bin/cat", "/sys/block/vdb/size")
	if err != nil {
		return err
	}
	if strings.TrimSpace(size) != fmt.Sprint(16<<20/512) {
		return fmt.Errorf("the guest sees vdb as %s sectors, want %d (16 MiB, without the LUKS header)", strings.TrimSpace(size), 16<<20/512)
	}
	script := fmt.Sprintf("printf %%s %s > /dev/vdb && sync && echo 3 > /proc/sys/vm/drop_caches && dd if=/dev/vdb bs=%d count=1 2>/dev/null", written, len(written))
	if out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", script); err != nil || out != written {
		return fmt.Errorf("the guest reads %q back from the LUKS volume (%v), want %q", out, err, written)
	}
	out, err := acctest.GuestExec(t, name, "/bin/sh", "-c", fmt.Sprintf("dd if=/dev/vdc bs=%d count=1 2>/dev/null", len(copied)))
	if err != nil || out != copied {
		return fmt.Errorf("the guest reads %q from the encrypted copy (%v), want %q", out, err, copied)
	}
	return nil
}

// notInVolumes: the markers the guest reads are nowhere in the volumes' bytes on the
// host: libvirt made them encrypted.
func notInVolumes(t *testing.T, keys []string, markers ...string) error {
	for _, k := range keys {
		b, err := acctest.VolumeContent(t, k)
		if err != nil {
			return err
		}
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				return fmt.Errorf("volume %s holds %q in plain text", k, m)
			}
		}
	}
	return nil
}

// Define-only (runs under OpenTofu too): a qcow2 LUKS volume whose write-only secret is
// not named after its path, on a stopped domain. The disk carries the volume's
// encryption; volume, secret and domain import. After a pool refresh libvirt no longer
// tells the volume's secret: the plan stays empty, and a change of the domain keeps the
// disk's encryption. Serial: the import steps must come before any refresh of the shared
// pool, and parallel tests refresh it at any time.
func TestAccVolumeEncryption_refreshed(t *testing.T) {
	acctest.RequireAcc(t)
	name := acctest.RandomName("luksdef")
	config := func(vcpu int) string {
		return acctest.ProviderBlock("") +
			resourceHCL("libvirt_secret", "s", attr("usage_type", "volume"), attr("usage_name", name+"-elsewhere"),
				attr("value_wo", acctest.RandomName("pass")), attr("value_wo_version", 1)) +
			volumeHCL("v", name+".qcow2", attr("capacity_bytes", 1<<20), `encryption = { format = "luks", secret_id = libvirt_secret.s.id }`) +
			resourceHCL("libvirt_domain", "test", attr("name", name), attr("type", "qemu"), attr("vcpu", vcpu), attr("memory_mib", 128),
				attr("running", false), attr("qemu_agent", false), `graphics = { type = "none" }`,
				"disk {\n    volume_id = libvirt_volume.v.id\n  }")
	}
	var secret string
	diskEncrypted := func(*terraform.State) error {
		d, err := acctest.InspectDomain(t, name)
		if err != nil {
			return err
		}
		x := d.Inactive.Devices.Disks[0]
		if e := x.Source.Encryption; e == nil || e.Format != "luks" || len(e.Secrets) != 1 || e.Secrets[0].UUID != secret {
			return fmt.Errorf("disk %s: encryption %+v, want luks with secret %s", x.Target.Dev, e, secret)
		}
		return nil
	}
	acctest.RunSerial(t, resource.TestCase{
		CheckDestroy: func(s *terraform.State) error {
			return acctest.CheckGone(map[string]acctest.Lookup{
				"domain " + name: acctest.DomainLookup(name), "secret " + secret: acctest.SecretLookup(secret),
				"volume " + name: acctest.VolumeLookup(acctest.Pool(), name+".qcow2"),
			})(s)
		},
		Steps: []resource.TestStep{
			{
				Config:           config(1),
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: []statecheck.StateCheck{acctest.StateIs("libvirt_volume.v", "encryption.format", "luks"),
					acctest.Same("libvirt_volume.v", "encryption.secret_id", "libvirt_secret.s", "id")},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith("libvirt_secret.s", "id", func(v string) error { secret = v; return nil }),
					diskEncrypted),
			},
			importStep("libvirt_volume.v", "", "timeouts"),
			importStep("libvirt_secret.s", "", "timeouts", "value", "value_wo_version"),
			importStep(domRes, name, "timeouts"),
			{
				PreConfig: func() {
					if _, err := acctest.VolumeNames(t, acctest.Pool(), func(string) bool { return false }); err != nil { // refreshes the pool
						t.Fatal(err)
					}
				},
				Config:   config(1),
				PlanOnly: true,
			},
			{
				Config:            config(2),
				ConfigPlanChecks:  acctest.Updates(domRes, "definition"),
				ConfigStateChecks: []statecheck.StateCheck{acctest.Same("libvirt_volume.v", "encryption.secret_id", "libvirt_secret.s", "id")},
				Check:             diskEncrypted,
			},
		},
	})
}
