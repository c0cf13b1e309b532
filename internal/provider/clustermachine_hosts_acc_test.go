package provider_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/workflow"
)

// cmOnB checks machine m, stopped, on host b as b's libvirt has it: the domain (not
// running, no autostart) with its one NIC on network and the machine's MAC, its root disk
// a qcow2 overlay of image in pool and its seed in pool, and the reserved address ip in
// b's network.
func cmOnB(b *libvirt.Client, network, pool, image string, m cmParts, ip *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		st, err := b.GetDomainStatus(ctx, m.domain)
		if err != nil {
			return fmt.Errorf("domain %s on %s: %w", m.domain, b.URI(), err)
		}
		var errs []error
		add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(m.domain+" on b: "+format, a...)) }
		if st.Active || st.Autostart {
			add("active %v autostart %v, want neither (running = false)", st.Active, st.Autostart)
		}
		p, err := domainxml.Parse(st.XML)
		if err != nil {
			return err
		}
		if len(p.Spec.Interfaces) != 1 || p.Spec.Interfaces[0].MAC != m.mac || p.Spec.Interfaces[0].Network != network {
			add("interfaces %+v, want one on %s with MAC %s", p.Spec.Interfaces, network, m.mac)
		}
		root, err := b.VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: m.root})
		if err != nil {
			return fmt.Errorf("root volume %s/%s on b: %w", pool, m.root, err)
		}
		if root.Format != "qcow2" || filepath.Base(root.Backing) != image || root.Capacity != 1<<30 {
			add("root volume format %s backing %s capacity %d, want a 1 GiB qcow2 overlay on %s", root.Format, root.Backing, root.Capacity, image)
		}
		seed, err := b.VolumeInfo(ctx, libvirt.VolumeRef{Pool: pool, Name: m.seed})
		if err != nil {
			return fmt.Errorf("seed volume %s/%s on b: %w", pool, m.seed, err)
		}
		if len(p.Spec.Disks) != 1 || p.Spec.Disks[0].Path != root.Path || p.Spec.CloudInit == nil || p.Spec.CloudInit.Path != seed.Path {
			add("disks %+v cloud-init %+v, want %s and %s", p.Spec.Disks, p.Spec.CloudInit, root.Path, seed.Path)
		}
		h, err := workflow.MachineReservation(ctx, b, network, m.mac)
		if err != nil {
			return err
		}
		if h == nil || h.IP != *ip || *ip == "" {
			add("host entry %+v in network %s, want %s -> %q (the state's ip)", h, network, m.mac, *ip)
		}
		return errors.Join(errs...)
	}
}

// cmNoneOn checks that the host c has nothing of machine m: no domain, no volumes in pool
// and no host entry for its MAC in network (pool and network named as b's are).
func cmNoneOn(c *libvirt.Client, network, pool string, m cmParts) error {
	ctx := context.Background()
	var errs []error
	for what, lookup := range map[string]acctest.Lookup{
		"domain " + m.domain:            acctest.DomainLookup(m.domain),
		"volume " + pool + "/" + m.root: acctest.VolumeLookup(pool, m.root),
		"volume " + pool + "/" + m.seed: acctest.VolumeLookup(pool, m.seed),
	} {
		if err := c.Read(ctx, "look up "+what, lookup); !errors.Is(err, libvirt.ErrNotFound) {
			errs = append(errs, fmt.Errorf("%s: %s is there (or cannot tell: %v)", c.URI(), what, err))
		}
	}
	h, err := workflow.MachineReservation(ctx, c, network, m.mac)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("%s: cannot tell whether network %s has a host entry for %s: %w", c.URI(), network, m.mac, err))
	case h != nil:
		errs = append(errs, fmt.Errorf("%s: network %s has a host entry for %s (%s)", c.URI(), network, m.mac, h.IP))
	}
	return errors.Join(errs...)
}

// A stopped cluster machine placed on host b (host = "b"), on b's network and pool, its
// image uploaded there by the same configuration: b's libvirt has its domain, root overlay,
// seed and address reservation; the default host, which has a pool and a network of the
// same names, has none of them. The next plan is empty, an import by b/<domain> plans
// clean, and the destroy removes everything from b.
func TestAccClusterMachine_onHostB(t *testing.T) {
	acctest.RequireHostB(t)
	namespace := acctest.RandomName("cmb")
	m := cmPartsOf(namespace, "onb")
	network, pool, image := acctest.NetworkB(), acctest.PoolB(), namespace+"-image.qcow2"
	const res = "libvirt_cluster_machine.test"
	cfg := hostsProvider() + fmt.Sprintf(`
resource "libvirt_volume" "image" {
  host        = "b"
  name        = %[1]q
  pool        = %[2]q
  source_file = %[3]q
}
`, image, pool, acctest.GuestImage(t)) + resourceHCL("libvirt_cluster_machine", "test", attr("host", "b"),
		attr("namespace", namespace), attr("name", m.name), attr("network", network), attr("base_pool", pool),
		attr("domain_pool", pool), attr("image", hcl("libvirt_volume.image.name")), attr("memory_mib", 256), attr("disk_gib", 1),
		"  running = false")
	a, b := acctest.Client(t), acctest.ClientB(t)
	var ip string
	onBOnly := resource.ComposeTestCheckFunc(cmOnB(b, network, pool, image, m, &ip),
		acctest.HostCheck(func() error { return cmNoneOn(a, acctest.Network(), acctest.Pool(), m) }))
	acctest.Run(t, resource.TestCase{
		CheckDestroy: func(*terraform.State) error {
			errs := []error{cmNoneOn(b, network, pool, m), cmNoneOn(a, acctest.Network(), acctest.Pool(), m)}
			errs = append(errs, acctest.CheckGoneOn(map[string]map[string]acctest.Lookup{
				acctest.URIB(): {"volume " + pool + "/" + image: acctest.VolumeLookup(pool, image)},
			})(nil))
			return errors.Join(errs...)
		},
		Steps: []resource.TestStep{
			{
				Config:           cfg,
				ConfigPlanChecks: acctest.Plans(),
				ConfigStateChecks: acctest.State(res,
					"host", "b",
					"domain_name", m.domain,
					"mac", m.mac,
					"running", false,
				),
				Check: resource.ComposeTestCheckFunc(func(s *terraform.State) error {
					ip = s.RootModule().Resources[res].Primary.Attributes["ip"]
					return nil
				}, onBOnly),
			},
			{
				Config:           cfg,
				ConfigPlanChecks: acctest.Plans(acctest.NoChange()),
				Check:            onBOnly,
			},
			{
				Config:                  cfg,
				ResourceName:            res,
				ImportState:             true,
				ImportStateId:           "b/" + m.domain,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts", "lease_timeout"},
			},
		},
	})
}
