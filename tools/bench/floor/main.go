// Command floor is the schema floor of `make bench` (tools/bench/bench.sh, workload S): a
// protocol-6 provider with exactly the schema of terraform-provider-libvirt, whatever its
// version (GetProviderSchema, GetMetadata, GetResourceIdentitySchemas and GetFunctions are
// the real provider's own answers, asked once per process), that does nothing else:
//
//   - ValidateProviderConfig, ConfigureProvider, ValidateResourceConfig,
//     ValidateDataResourceConfig, ValidateEphemeralResourceConfig: ok, nothing checked.
//   - PlanResourceChange: the proposed new state. When it is the prior state byte for byte
//     (a no-change plan) it is returned undecoded; otherwise write-only attributes are made
//     null and, on a create, a computed top-level `id` the configuration leaves null is
//     planned unknown (so that references to it wait for the apply, as with the provider).
//   - ApplyResourceChange: the planned state with every unknown value replaced by the
//     configuration's value at the same path when that is known, else null; a top-level
//     `id` left null gets a random UUID. A destroy returns null.
//   - ReadResource: the current state. UpgradeResourceState: the stored JSON decoded with
//     the schema's type (attributes it no longer has dropped).
//   - ReadDataSource: the configuration. CallFunction: the real provider's (functions are
//     pure). Import, move, identity upgrade, config generation, ephemeral open: refused.
//
// It serves under the provider's own address, so the bench runs the same .tf files against
// it through a second CLI configuration whose dev_overrides names the directory holding
// this binary built as terraform-provider-libvirt. What a plan costs against it is what the
// schema and the CLI cost with a provider that costs (almost) nothing: the bench reports
// the provider's CLI and provider CPU beside the floor's.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

func main() {
	// The same runtime settings as the provider's main (logging.go, gc.go there): plugin
	// logs at the level the CLI shows (off unless TF_LOG / TF_LOG_PROVIDER ask), GOGC=200.
	level := cliProviderLogLevel()
	for _, k := range []string{"TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		if os.Getenv(k) == "" {
			_ = os.Setenv(k, level)
		}
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(200)
		debug.SetMemoryLimit(128 << 20)
	}
	s := newServer()
	if err := tf6server.Serve(provider.Address, func() tfprotov6.ProviderServer { return s }); err != nil {
		log.Fatal(err)
	}
}

func cliProviderLogLevel() string {
	v := os.Getenv("TF_LOG_PROVIDER")
	if v == "" {
		v = os.Getenv("TF_LOG")
	}
	switch v = strings.ToUpper(strings.TrimSpace(v)); v {
	case "":
		return "OFF"
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF":
		return v
	default:
		return "TRACE"
	}
}

func newServer() *server { return &server{real: provider.ProtocolServer("floor")()} }

// server is the floor. real is the provider's own protocol server, asked for schemas
// (and functions) only.
type server struct {
	real tfprotov6.ProviderServer

	once   sync.Once
	schema *tfprotov6.GetProviderSchemaResponse
	err    error
	types  map[string]*typeInfo // by resource type
}

// typeInfo is what the floor needs of one resource type's schema.
type typeInfo struct {
	typ tftypes.Type
	// writeOnly holds the schema paths (attribute and block names joined by ".") of the
	// write-only attributes: never in plan or state.
	writeOnly map[string]bool
	// computedID: the type has a computed top-level string attribute "id".
	computedID bool
}

func (s *server) load(ctx context.Context) error {
	s.once.Do(func() {
		s.schema, s.err = s.real.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
		if s.err != nil {
			return
		}
		for _, d := range s.schema.Diagnostics {
			if d.Severity == tfprotov6.DiagnosticSeverityError {
				s.err = fmt.Errorf("the provider's schema: %s: %s", d.Summary, d.Detail)
				return
			}
		}
		s.types = map[string]*typeInfo{}
		for name, sc := range s.schema.ResourceSchemas {
			s.types[name] = newTypeInfo(sc)
		}
	})
	return s.err
}

func newTypeInfo(sc *tfprotov6.Schema) *typeInfo {
	t := &typeInfo{typ: sc.ValueType(), writeOnly: map[string]bool{}}
	if sc.Block == nil {
		return t
	}
	for _, a := range sc.Block.Attributes {
		if a.Name == "id" && a.Computed && a.Type != nil && a.Type.Is(tftypes.String) {
			t.computedID = true
		}
	}
	addWriteOnlyBlock(t.writeOnly, "", sc.Block)
	return t
}

func addWriteOnlyBlock(m map[string]bool, prefix string, b *tfprotov6.SchemaBlock) {
	for _, a := range b.Attributes {
		addWriteOnlyAttr(m, prefix, a)
	}
	for _, nb := range b.BlockTypes {
		if nb.Block != nil {
			addWriteOnlyBlock(m, prefix+nb.TypeName+".", nb.Block)
		}
	}
}

func addWriteOnlyAttr(m map[string]bool, prefix string, a *tfprotov6.SchemaAttribute) {
	if a.WriteOnly {
		m[prefix+a.Name] = true
	}
	if a.NestedType != nil {
		for _, n := range a.NestedType.Attributes {
			addWriteOnlyAttr(m, prefix+a.Name+".", n)
		}
	}
}

// schemaPath is p without its element steps: attribute and block names joined by ".".
func schemaPath(p *tftypes.AttributePath) string {
	var b strings.Builder
	for _, st := range p.Steps() {
		if n, ok := st.(tftypes.AttributeName); ok {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(n))
		}
	}
	return b.String()
}

func isTopLevelID(p *tftypes.AttributePath) bool {
	st := p.Steps()
	if len(st) != 1 {
		return false
	}
	n, ok := st[0].(tftypes.AttributeName)
	return ok && n == "id"
}

func errorDiag(summary string, err error) []*tfprotov6.Diagnostic {
	d := &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError, Summary: summary}
	if err != nil {
		d.Detail = err.Error()
	}
	return []*tfprotov6.Diagnostic{d}
}

func (s *server) resource(ctx context.Context, typeName string) (*typeInfo, []*tfprotov6.Diagnostic) {
	if err := s.load(ctx); err != nil {
		return nil, errorDiag("schema floor: cannot load the provider's schema", err)
	}
	t := s.types[typeName]
	if t == nil {
		return nil, errorDiag("schema floor: unknown resource type "+typeName, nil)
	}
	return t, nil
}

// ---------------------------------------------------------------- schemas: the real ones

func (s *server) GetProviderSchema(ctx context.Context, _ *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	return s.schema, nil
}

func (s *server) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return s.real.GetMetadata(ctx, req)
}

func (s *server) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return s.real.GetResourceIdentitySchemas(ctx, req)
}

func (s *server) GetFunctions(ctx context.Context, req *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return s.real.GetFunctions(ctx, req)
}

func (s *server) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return s.real.CallFunction(ctx, req)
}

// ---------------------------------------------------------------- the provider: nothing

func (s *server) ValidateProviderConfig(_ context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return &tfprotov6.ValidateProviderConfigResponse{PreparedConfig: req.Config}, nil
}

func (s *server) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (s *server) StopProvider(context.Context, *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return &tfprotov6.StopProviderResponse{}, nil
}

// ---------------------------------------------------------------- resources

func (s *server) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (s *server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	t, diags := s.resource(ctx, req.TypeName)
	if diags != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: diags}, nil
	}
	if req.RawState == nil || len(req.RawState.JSON) == 0 {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: errorDiag("schema floor: only JSON state can be upgraded", nil)}, nil
	}
	v, err := req.RawState.UnmarshalWithOpts(t.typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: errorDiag("schema floor: cannot decode the state", err)}, nil
	}
	dv, err := tfprotov6.NewDynamicValue(t.typ, v)
	if err != nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: errorDiag("schema floor: cannot encode the state", err)}, nil
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &dv}, nil
}

func (s *server) ReadResource(_ context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}, nil
}

// sameBytes: both values are the same encoding (msgpack, as the CLI sends, or JSON).
func sameBytes(a, b *tfprotov6.DynamicValue) bool {
	if a == nil || b == nil {
		return false
	}
	if len(a.MsgPack) > 0 {
		return string(a.MsgPack) == string(b.MsgPack)
	}
	return len(a.JSON) > 0 && string(a.JSON) == string(b.JSON)
}

func (s *server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedPrivate: req.PriorPrivate, PlannedIdentity: req.PriorIdentity}
	if sameBytes(req.PriorState, req.ProposedNewState) { // nothing changes: the prior state
		resp.PlannedState = req.ProposedNewState
		return resp, nil
	}
	t, diags := s.resource(ctx, req.TypeName)
	if diags != nil {
		resp.Diagnostics = diags
		return resp, nil
	}
	proposed, err := req.ProposedNewState.Unmarshal(t.typ)
	if err != nil {
		resp.Diagnostics = errorDiag("schema floor: cannot decode the proposed state", err)
		return resp, nil
	}
	if proposed.IsNull() { // a destroy
		resp.PlannedState = req.ProposedNewState
		return resp, nil
	}
	create := true
	if req.PriorState != nil {
		prior, err := req.PriorState.Unmarshal(t.typ)
		if err != nil {
			resp.Diagnostics = errorDiag("schema floor: cannot decode the prior state", err)
			return resp, nil
		}
		create = prior.IsNull()
	}
	planned, err := tftypes.Transform(proposed, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		switch {
		case len(t.writeOnly) > 0 && t.writeOnly[schemaPath(p)]:
			return tftypes.NewValue(v.Type(), nil), nil
		case create && t.computedID && v.IsNull() && isTopLevelID(p):
			return tftypes.NewValue(tftypes.String, tftypes.UnknownValue), nil
		}
		return v, nil
	})
	if err != nil {
		resp.Diagnostics = errorDiag("schema floor: cannot plan", err)
		return resp, nil
	}
	dv, err := tfprotov6.NewDynamicValue(t.typ, planned)
	if err != nil {
		resp.Diagnostics = errorDiag("schema floor: cannot encode the plan", err)
		return resp, nil
	}
	resp.PlannedState = &dv
	return resp, nil
}

func (s *server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp := &tfprotov6.ApplyResourceChangeResponse{Private: req.PlannedPrivate, NewIdentity: req.PlannedIdentity}
	t, diags := s.resource(ctx, req.TypeName)
	if diags != nil {
		resp.Diagnostics = diags
		return resp, nil
	}
	planned, err := req.PlannedState.Unmarshal(t.typ)
	if err != nil {
		resp.Diagnostics = errorDiag("schema floor: cannot decode the planned state", err)
		return resp, nil
	}
	if planned.IsNull() || planned.IsFullyKnown() { // a destroy, or nothing left to learn
		resp.NewState = req.PlannedState
		return resp, nil
	}
	config := tftypes.NewValue(t.typ, nil)
	if req.Config != nil {
		if config, err = req.Config.Unmarshal(t.typ); err != nil {
			resp.Diagnostics = errorDiag("schema floor: cannot decode the configuration", err)
			return resp, nil
		}
	}
	applied, err := tftypes.Transform(planned, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() {
			return v, nil
		}
		if t.computedID && isTopLevelID(p) {
			return tftypes.NewValue(tftypes.String, newUUID()), nil
		}
		// An unknown the configuration now knows (a reference to another resource's
		// computed value): the configuration's value; any other unknown: null.
		if c, _, err := tftypes.WalkAttributePath(config, p); err == nil {
			if cv, ok := c.(tftypes.Value); ok && cv.IsFullyKnown() && cv.Type().Equal(v.Type()) {
				return cv, nil
			}
		}
		return tftypes.NewValue(v.Type(), nil), nil
	})
	if err == nil && len(t.writeOnly) > 0 { // a configuration value taken whole may hold some
		applied, err = tftypes.Transform(applied, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
			if t.writeOnly[schemaPath(p)] {
				return tftypes.NewValue(v.Type(), nil), nil
			}
			return v, nil
		})
	}
	if err != nil {
		resp.Diagnostics = errorDiag("schema floor: cannot apply", err)
		return resp, nil
	}
	dv, err := tfprotov6.NewDynamicValue(t.typ, applied)
	if err != nil {
		resp.Diagnostics = errorDiag("schema floor: cannot encode the new state", err)
		return resp, nil
	}
	resp.NewState = &dv
	return resp, nil
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (s *server) ImportResourceState(context.Context, *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return &tfprotov6.ImportResourceStateResponse{Diagnostics: errorDiag("schema floor: import is not supported", nil)}, nil
}

func (s *server) MoveResourceState(context.Context, *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return &tfprotov6.MoveResourceStateResponse{Diagnostics: errorDiag("schema floor: moving state is not supported", nil)}, nil
}

func (s *server) UpgradeResourceIdentity(context.Context, *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return &tfprotov6.UpgradeResourceIdentityResponse{Diagnostics: errorDiag("schema floor: identities are not supported", nil)}, nil
}

func (s *server) GenerateResourceConfig(context.Context, *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return &tfprotov6.GenerateResourceConfigResponse{Diagnostics: errorDiag("schema floor: generating configuration is not supported", nil)}, nil
}

// ---------------------------------------------------------------- data sources, ephemeral

func (s *server) ValidateDataResourceConfig(context.Context, *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return &tfprotov6.ValidateDataResourceConfigResponse{}, nil
}

func (s *server) ReadDataSource(_ context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return &tfprotov6.ReadDataSourceResponse{State: req.Config}, nil
}

func (s *server) ValidateEphemeralResourceConfig(context.Context, *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return &tfprotov6.ValidateEphemeralResourceConfigResponse{}, nil
}

func (s *server) OpenEphemeralResource(context.Context, *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return &tfprotov6.OpenEphemeralResourceResponse{Diagnostics: errorDiag("schema floor: ephemeral resources are not supported", nil)}, nil
}

func (s *server) RenewEphemeralResource(context.Context, *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return &tfprotov6.RenewEphemeralResourceResponse{}, nil
}

func (s *server) CloseEphemeralResource(context.Context, *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return &tfprotov6.CloseEphemeralResourceResponse{}, nil
}
