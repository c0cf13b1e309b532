package provider_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

func clusterConfig(network, base, domain string) string {
	return acctest.ProviderBlock("") + fmt.Sprintf(`
data "libvirt_cluster" "c" {
  network     = %q
  base_pool   = %q
  domain_pool = %q
}
`, network, base, domain)
}

func expectCluster(ready bool, reason string, message string) []statecheck.StateCheck {
	return acctest.State("data.libvirt_cluster.c", "ready", ready, "reason", reason, "message", acctest.ErrorText(message))
}

// clusterAsHostSays is a step check: data.libvirt_cluster.c is ready exactly when libvirt,
// asked directly, has the network and both pools active, and its reason is the one the
// host's objects give (a missing one wins over an inactive one).
func clusterAsHostSays(t *testing.T, network, base, domain string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		c, ctx := acctest.Client(t), acctest.Ctx(t)
		missing, inactive := false, false
		note := func(active bool, err error) error {
			switch {
			case errors.Is(err, libvirt.ErrNotFound):
				missing = true
			case err != nil:
				return err
			case !active:
				inactive = true
			}
			return nil
		}
		if err := note(c.NetworkActive(ctx, network)); err != nil {
			return err
		}
		for _, p := range []string{base, domain} {
			if err := note(c.PoolActive(ctx, p)); err != nil {
				return err
			}
		}
		wantReady, wantReason := "true", ""
		switch {
		case missing:
			wantReady, wantReason = "false", "InfrastructureMissing"
		case inactive:
			wantReady, wantReason = "false", "InfrastructureInactive"
		}
		a, err := stateAttrs(s, "data.libvirt_cluster.c")
		if err != nil {
			return err
		}
		if a["ready"] != wantReady || a["reason"] != wantReason {
			return fmt.Errorf("ready %s, reason %q; the host's network %s and pools %s, %s make it ready %s, reason %q",
				a["ready"], a["reason"], network, base, domain, wantReady, wantReason)
		}
		return nil
	}
}

func TestAccClusterDataSource(t *testing.T) {
	acctest.RequireAcc(t)
	acctest.Parallel(t) // before the inactive pool is defined (acctest.Parallel says why)
	inactivePool := acctest.DefineDirPool(t, false)
	inactiveNet := acctest.CreateNetwork(t, false)
	acctest.Run(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				Config:            clusterConfig(acctest.Network(), acctest.Pool(), acctest.Pool()),
				ConfigStateChecks: expectCluster(true, "", "are active"),
				Check:             clusterAsHostSays(t, acctest.Network(), acctest.Pool(), acctest.Pool()),
			},
			{
				Config:            clusterConfig(acctest.Network(), acctest.Pool(), "tfacc-no-such-pool"),
				ConfigStateChecks: expectCluster(false, "InfrastructureMissing", `storage pool "tfacc-no-such-pool" does not exist`),
				Check:             clusterAsHostSays(t, acctest.Network(), acctest.Pool(), "tfacc-no-such-pool"),
			},
			{
				Config:            clusterConfig("tfacc-no-such-net", acctest.Pool(), acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureMissing", `network "tfacc-no-such-net" does not exist`),
				Check:             clusterAsHostSays(t, "tfacc-no-such-net", acctest.Pool(), acctest.Pool()),
			},
			{
				Config:            clusterConfig(acctest.Network(), inactivePool, acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureInactive", fmt.Sprintf(`storage pool %q is inactive (start it: virsh pool-start %s)`, inactivePool, inactivePool)),
				Check:             clusterAsHostSays(t, acctest.Network(), inactivePool, acctest.Pool()),
			},
			{
				Config:            clusterConfig(inactiveNet.Name, acctest.Pool(), acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureInactive", fmt.Sprintf(`network %q is inactive`, inactiveNet.Name)),
				Check:             clusterAsHostSays(t, inactiveNet.Name, acctest.Pool(), acctest.Pool()),
			},
			{
				// Missing wins the reason; the message names both problems.
				Config:            clusterConfig(inactiveNet.Name, "tfacc-no-such-pool", acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureMissing", fmt.Sprintf(`storage pool "tfacc-no-such-pool" does not exist; network %q is inactive`, inactiveNet.Name)),
				Check:             clusterAsHostSays(t, inactiveNet.Name, "tfacc-no-such-pool", acctest.Pool()),
			},
		},
	})
}
