package provider_test

import "github.com/kvmforge/terraform-provider-libvirt/internal/acctest"

// The domain tests' fixtures live in internal/acctest (fixtures.go): made directly
// through libvirt, so these tests depend on no other resource of the provider. These
// short names are what the tests call them.
var (
	domAccCtx             = acctest.Ctx
	domAccBase            = acctest.BaseImage
	domAccOverlay         = acctest.Overlay
	domAccSeed            = acctest.Seed
	domAccIsolatedNetwork = acctest.IsolatedNetwork
	domAccInspect         = acctest.InspectDomain
	domAccLeases          = acctest.Leases
	domAccDefine          = acctest.DefineDomain
	domAccUndefine        = acctest.UndefineDomain
	domAccForceOff        = acctest.ForceOff
)

type domAccLive = acctest.DomainLive
