package provider_test

import (
	"context"
	"fmt"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"libvirt.org/go/libvirtxml"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// sharedVolumes are the base (the tiny guest image, uploaded) and its qcow2 overlay in the
// shared pool, both made through the default host: libvirt_volume.base and .root.
func sharedVolumes(name, pool, image string) string {
	return fmt.Sprintf(`
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
`, name, pool, image)
}

// sharedVolumeLookup finds pool/name after a refresh of the pool: a volume made or removed
// through the other host's daemon is not in this daemon's list of the pool until then.
func sharedVolumeLookup(pool, name string) acctest.Lookup {
	return func(l *golibvirt.Libvirt) error {
		p, err := l.StoragePoolLookupByName(pool)
		if err != nil {
			return err
		}
		if err := l.StoragePoolRefresh(p, 0); err != nil {
			return err
		}
		_, err = l.StorageVolLookupByName(p, name)
		return err
	}
}

// diskSources are the source files of domain name's disks as the host c runs it.
func diskSources(c *libvirt.Client, name string) ([]string, error) {
	var out []string
	err := c.Read(context.Background(), "disks of "+name, func(l *golibvirt.Libvirt) error {
		d, err := l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		text, err := l.DomainGetXMLDesc(d, 0)
		if err != nil {
			return err
		}
		var dom libvirtxml.Domain
		if err := dom.Unmarshal(text); err != nil {
			return err
		}
		if dom.Devices == nil {
			return nil
		}
		for _, disk := range dom.Devices.Disks {
			if disk.Source != nil && disk.Source.File != nil {
				out = append(out, disk.Source.File.File)
			}
		}
		return nil
	})
	return out, err
}

// onSharedDisk checks that domain name runs, on the host c talks to, from the volume whose
// key is *key, and that the volume is still there in the shared pool under that key, asked
// of both hosts (each refreshes its view of the pool first).
func onSharedDisk(name, pool, vol string, c *libvirt.Client, key *string, hosts ...*libvirt.Client) resource.TestCheckFunc {
	return func(*terraform.State) error {
		disks, err := diskSources(c, name)
		if err != nil {
			return err
		}
		if len(disks) != 1 || disks[0] != *key {
			return fmt.Errorf("domain %s on %s runs from %v, want the shared volume %s", name, c.URI(), disks, *key)
		}
		for _, h := range hosts {
			if err := h.Read(context.Background(), "refresh pool "+pool, sharedVolumeLookup(pool, vol)); err != nil {
				return fmt.Errorf("volume %s/%s on %s: %w", pool, vol, h.URI(), err)
			}
			info, err := h.VolumeInfo(context.Background(), libvirt.VolumeRef{Pool: pool, Name: vol})
			if err != nil {
				return fmt.Errorf("volume %s/%s on %s: %w", pool, vol, h.URI(), err)
			}
			if info.Key != *key || info.Format != "qcow2" || info.Backing == "" {
				return fmt.Errorf("volume %s/%s on %s: key %s, format %s, backing %q; want key %s, a qcow2 overlay",
					pool, vol, h.URI(), info.Key, info.Format, info.Backing, *key)
			}
		}
		return nil
	}
}

// sameState checks that res's attributes in the state are *want (recorded by the first call,
// when *want is nil): the migration of the domain that uses it leaves it alone. All but
// allocation_bytes, what the host reports as used: the running guest writes to its disk.
func sameState(res string, want *map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		r := s.RootModule().Resources[res]
		if r == nil || r.Primary == nil {
			return fmt.Errorf("%s is not in the state", res)
		}
		if *want == nil {
			*want = r.Primary.Attributes
			return nil
		}
		for k, v := range *want {
			if k != "allocation_bytes" && r.Primary.Attributes[k] != v {
				return fmt.Errorf("%s.%s is %q in the state after the migration, was %q", res, k, r.Primary.Attributes[k], v)
			}
		}
		if len(r.Primary.Attributes) != len(*want) {
			return fmt.Errorf("%s has %d attributes in the state after the migration, had %d", res, len(r.Primary.Attributes), len(*want))
		}
		return nil
	}
}

// The tiny guest boots, on the default host, from a qcow2 overlay in the pool both hosts
// see (LIBVIRT_TEST_SHARED_POOL), made by Terraform, and migrates live to host b without
// copying its disk (copy_storage = "none"): the plan says migrate, the guest runs on b only
// with its uuid and MAC, its uptime goes on counting, it runs from the same volume (same
// key, seen by both hosts), the volumes' state is untouched and the next plan is empty.
// Then back to the default host the same way.
func TestAccDomainMigrate_sharedStorage(t *testing.T) {
	acctest.RequireHostB(t)
	pool := acctest.SharedPool()
	if pool == "" {
		t.Skip("shared-storage migration: no pool both hosts see (LIBVIRT_TEST_SHARED_POOL is unset); " +
			"`tools/testhost.sh up-b` mounts one (bindfs) and `tools/testhost.sh env` prints it")
	}
	name := acctest.RandomName("migsh")
	base, root := name+"-base.qcow2", name+"-root.qcow2"
	a, b := acctest.Client(t), acctest.ClientB(t)
	const shared = `    copy_storage = "none"`
	ready := `  wait_for_ready = { timeout = "3m", command = ["/bin/true"] }` + "\n  disk {\n    volume_id = libvirt_volume.root.id\n  }"
	cfg := func(host string) string {
		return hostsProvider() + sharedVolumes(name, pool, acctest.GuestImage(t)) + migratingDomain(name, host, shared, ready)
	}
	var uuid, mac, key string
	var uptime float64
	var rootState, baseState map[string]string
	unchanged := resource.ComposeTestCheckFunc(sameState("libvirt_volume.root", &rootState), sameState("libvirt_volume.base", &baseState))
	sameIdentity := func(host string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			at := s.RootModule().Resources[domRes].Primary.Attributes
			if at["host"] != host || at["uuid"] != uuid || at["network_interface.0.mac"] != mac {
				return fmt.Errorf("state after the move: host %q uuid %q mac %q (want %s, %s, %s)", at["host"], at["uuid"], at["network_interface.0.mac"], host, uuid, mac)
			}
			return nil
		}
	}
	gone := map[string]acctest.Lookup{
		"domain " + name:              acctest.DomainLookup(name),
		"volume " + pool + "/" + root: sharedVolumeLookup(pool, root),
		"volume " + pool + "/" + base: sharedVolumeLookup(pool, base),
	}
	acctest.Run(t, resource.TestCase{
		CheckDestroy: acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{acctest.URI(): gone, acctest.URIB(): gone}),
		Steps: []resource.TestStep{
			{
				Config: cfg(""),
				Check: resource.ComposeTestCheckFunc(
					func(s *terraform.State) error {
						at := s.RootModule().Resources[domRes].Primary.Attributes
						mac = at["network_interface.0.mac"]
						key = s.RootModule().Resources["libvirt_volume.root"].Primary.Attributes["path"]
						if mac == "" || key == "" {
							return fmt.Errorf("no MAC (%q) or volume path (%q) in the state", mac, key)
						}
						return nil
					},
					runningOnlyOn(name, a, b, &uuid, &uptime), onSharedDisk(name, pool, root, a, &key, a, b), unchanged),
			},
			{
				Config: cfg("b"),
				ConfigPlanChecks: acctest.Updates(domRes, "migrate",
					acctest.Planned("libvirt_volume.root", acctest.Noop), acctest.Planned("libvirt_volume.base", acctest.Noop)),
				Check: resource.ComposeTestCheckFunc(runningOnlyOn(name, b, a, &uuid, &uptime), sameIdentity("b"),
					onSharedDisk(name, pool, root, b, &key, a, b), unchanged),
			},
			{
				// A plan of its own after the move: nothing to do (the refresh reads the
				// domain on b, the volumes on the default host).
				Config:           cfg("b"),
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
			},
			{
				Config: cfg(""),
				ConfigPlanChecks: acctest.Updates(domRes, "migrate",
					acctest.Planned("libvirt_volume.root", acctest.Noop), acctest.Planned("libvirt_volume.base", acctest.Noop)),
				Check: resource.ComposeTestCheckFunc(runningOnlyOn(name, a, b, &uuid, &uptime), sameIdentity(""),
					onSharedDisk(name, pool, root, a, &key, a, b), unchanged),
			},
		},
	})
}
