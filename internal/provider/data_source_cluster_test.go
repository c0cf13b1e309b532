package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/kvmforge/terraform-provider-libvirt/internal/acctest"
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
			},
			{
				Config:            clusterConfig(acctest.Network(), acctest.Pool(), "tfacc-no-such-pool"),
				ConfigStateChecks: expectCluster(false, "InfrastructureMissing", `storage pool "tfacc-no-such-pool" does not exist`),
			},
			{
				Config:            clusterConfig("tfacc-no-such-net", acctest.Pool(), acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureMissing", `network "tfacc-no-such-net" does not exist`),
			},
			{
				Config:            clusterConfig(acctest.Network(), inactivePool, acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureInactive", fmt.Sprintf(`storage pool %q is inactive (start it: virsh pool-start %s)`, inactivePool, inactivePool)),
			},
			{
				Config:            clusterConfig(inactiveNet.Name, acctest.Pool(), acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureInactive", fmt.Sprintf(`network %q is inactive`, inactiveNet.Name)),
			},
			{
				// Missing wins the reason; the message names both problems.
				Config:            clusterConfig(inactiveNet.Name, "tfacc-no-such-pool", acctest.Pool()),
				ConfigStateChecks: expectCluster(false, "InfrastructureMissing", fmt.Sprintf(`storage pool "tfacc-no-such-pool" does not exist; network %q is inactive`, inactiveNet.Name)),
			},
		},
	})
}
