package provider

import (
	"bytes"
	"context"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/domain"
)

// ProtocolServer serves the provider over protocol 6 with the no-change plan and the
// current-version state upgrade answered without the framework (shortcutServer). main and the in-process acceptance tests
// both serve this, so the tests cover what users run.
func ProtocolServer(version string) func() tfprotov6.ProviderServer {
	domain.SetBuildVersion(version)
	return func() tfprotov6.ProviderServer {
		p := &libvirtProvider{version: version}
		resources := func() []func() resource.Resource { return New(version)().Resources(context.Background()) }
		return shortcutServer{ProviderServer: providerserver.NewProtocol6(p)(), provider: p,
			schemas: &schemaDefaults{newRes: resources}, validators: &configValidators{newRes: resources}}
	}
}

// shortcutServer answers two calls itself where the framework's way costs most and the
// answer is known: UpgradeResourceState of current-version state (server_upgrade.go), and
// PlanResourceChange when Terraform proposes exactly
// the prior state (the configuration asks for nothing new): the plan is the prior state.
// The framework would reach the same plan, since no plan modifier or ModifyPlan here
// changes a resource whose configuration and state agree, but it gets there by writing
// every top-level attribute back into the plan one at a time, each write copying the
// whole object: quadratic in the schema's size, and 80 ms of CPU per libvirt_domain,
// most of a no-change plan (docs/guides/performance.md). One thing the framework does
// for an unchanged proposal is checked here too: a schema default for a value the
// configuration leaves null (schemaDefaults). Anything else, creates, destroys, any
// changed or unknown value, goes to the framework.
type shortcutServer struct {
	tfprotov6.ProviderServer
	schemas    *schemaDefaults
	validators *configValidators // server_validate.go
	provider   *libvirtProvider  // its client, once configured: server_read.go
}

func (s shortcutServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	ctx = onHost(ctx, req.ProposedNewState, req.PriorState)
	if sameState(req.PriorState, req.ProposedNewState) && s.schemas.holds(ctx, req.TypeName, req.Config, req.PriorState) {
		return &tfprotov6.PlanResourceChangeResponse{
			PlannedState:    req.PriorState,
			PlannedPrivate:  req.PriorPrivate,
			PlannedIdentity: req.PriorIdentity,
		}, nil
	}
	return s.ProviderServer.PlanResourceChange(ctx, req)
}

// msgpackNil is how a null object (no prior state, a destroy) is encoded.
var msgpackNil = []byte{0xc0}

// sameState is true when both values are the same non-null object, byte for byte. The
// CLI encodes both with the same schema type and msgpack's encoding of an object is
// deterministic (attributes in name order), so equal bytes mean equal values; values
// that are equal but encoded apart only take the framework's longer way.
func sameState(prior, proposed *tfprotov6.DynamicValue) bool {
	if prior == nil || proposed == nil {
		return false
	}
	if len(prior.MsgPack) > 0 {
		return !bytes.Equal(prior.MsgPack, msgpackNil) && bytes.Equal(prior.MsgPack, proposed.MsgPack)
	}
	return len(prior.JSON) > 0 && !bytes.Equal(prior.JSON, []byte("null")) && bytes.Equal(prior.JSON, proposed.JSON)
}
