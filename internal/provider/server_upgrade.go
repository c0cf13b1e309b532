package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// UpgradeResourceState answers itself for state written by the schema's own version,
// which is every call until a schema version changes: Terraform asks it for every
// resource in state before each refresh. The framework's answer for that case is the
// stored JSON decoded with the schema (attributes the schema no longer has dropped) and
// re-encoded, but on its way it looks every null value up in the schema through maps it
// rebuilds per path step: about 4 ms of CPU per libvirt_domain, 14 % of a no-change plan's
// provider time (ADR 8). Here the same three steps run without the lookups. Anything
// else (another version, a flatmap state, a type not indexed, an error) goes to the
// framework, which also writes the diagnostics.
func (s shortcutServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if resp, ok := s.schemas.upgradeCurrent(ctx, req); ok {
		return resp, nil
	}
	return s.ProviderServer.UpgradeResourceState(ctx, req)
}

// upgradeCurrent is the framework's passthrough for req.Version == the schema's version:
// decode (IgnoreUndefinedAttributes), make null list and set blocks empty, encode.
func (s *schemaDefaults) upgradeCurrent(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool) {
	if req.RawState == nil || len(req.RawState.JSON) == 0 {
		return nil, false
	}
	idx := s.index(ctx, req.TypeName)
	if idx == nil || req.Version != idx.version {
		return nil, false
	}
	v, err := req.RawState.UnmarshalWithOpts(idx.typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		return nil, false
	}
	v, err = idx.emptyNullBlocks(v)
	if err != nil {
		return nil, false
	}
	dv, err := tfprotov6.NewDynamicValue(idx.typ, v)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &dv}, true
}

// emptyNullBlocks is the framework's ReifyNullCollectionBlocks: a null list or set block
// becomes an empty one (Terraform's blocks are never null).
func (idx *defaultsIndex) emptyNullBlocks(v tftypes.Value) (tftypes.Value, error) {
	if len(idx.listBlocks) == 0 {
		return v, nil
	}
	return tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsNull() || len(p.Steps()) == 0 {
			return v, nil
		}
		switch v.Type().(type) {
		case tftypes.List, tftypes.Set:
			if idx.listBlocks[schemaPath(p)] {
				return tftypes.NewValue(v.Type(), []tftypes.Value{}), nil
			}
		}
		return v, nil
	})
}
