package provider

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// ValidateResourceConfig runs the framework's validation of a resource's configuration
// through tfkit.ConfigValidator, which walks schema and value together instead of looking
// every attribute up from the root (Terraform asks it for every resource instance of every
// plan and apply: ~1 ms of CPU per libvirt_domain the framework's way, a third of a
// no-change plan's provider CPU; ADR 8). With LIBVIRT_PROVIDER_VERIFY_SHORTCUT set (the
// acceptance tests) the framework validates too, and a difference is an error.
func (s shortcutServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	resp, ok := s.validators.validate(ctx, s.providerData(), req)
	if !ok {
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	if os.Getenv(VerifyShortcutEnv) != "" {
		fw, err := s.ProviderServer.ValidateResourceConfig(ctx, req)
		if err != nil {
			return fw, err
		}
		if a, b := diagnosticsKey(fw.Diagnostics), diagnosticsKey(resp.Diagnostics); a != b {
			resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError,
				Summary: req.TypeName + " validation disagrees with the framework's",
				Detail: "The provider's validation walk (tfkit.ConfigValidator) and terraform-plugin-framework's reached different " +
					"diagnostics for the same configuration: a bug of the provider (seen with " + VerifyShortcutEnv + " set).\n\n" +
					"Framework:\n" + a + "\nProvider:\n" + b})
		}
	}
	return resp, nil
}

// providerData is what the framework hands each resource's Configure: the hosts, once the
// provider is configured (validation may come before).
func (s shortcutServer) providerData() any {
	if s.provider == nil || s.provider.hosts == nil {
		return nil
	}
	return s.provider.hosts
}

// configValidators holds a tfkit.ConfigValidator per resource type, built on first use.
type configValidators struct {
	once   sync.Once
	newRes func() []func() resource.Resource
	byType map[string]typeValidator
}

type typeValidator struct {
	newRes func() resource.Resource
	typ    tftypes.Type
	v      *tfkit.ConfigValidator
}

func (c *configValidators) validate(ctx context.Context, providerData any, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, bool) {
	if c == nil {
		return nil, false
	}
	c.once.Do(func() { c.build(ctx) })
	tv, ok := c.byType[req.TypeName]
	if !ok {
		return nil, false
	}
	if req.Config == nil {
		return &tfprotov6.ValidateResourceConfigResponse{}, true // the framework validates nothing either
	}
	cfg, err := req.Config.Unmarshal(tv.typ)
	if err != nil {
		return nil, false // the framework says what is wrong with it
	}
	writeOnly := req.ClientCapabilities != nil && req.ClientCapabilities.WriteOnlyAttributesAllowed
	diags := tv.v.Validate(ctx, tv.newRes(), providerData, cfg, writeOnly)
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: protoDiagnostics(ctx, diags)}, true
}

func (c *configValidators) build(ctx context.Context) {
	c.byType = map[string]typeValidator{}
	eachResource(ctx, c.newRes, func(typeName string, s schema.Schema, newRes func() resource.Resource) {
		v, err := tfkit.NewConfigValidator(s)
		if err != nil {
			tflog.Debug(ctx, "validation of "+typeName+" takes the framework's way: "+err.Error())
			return
		}
		c.byType[typeName] = typeValidator{newRes: newRes, typ: s.Type().TerraformType(ctx), v: v}
	})
}

// protoDiagnostics is the framework's toproto6.Diagnostics for these diagnostics.
func protoDiagnostics(ctx context.Context, diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{Summary: d.Summary(), Detail: d.Detail(), Severity: tfprotov6.DiagnosticSeverityInvalid}
		switch d.Severity() {
		case diag.SeverityError:
			pd.Severity = tfprotov6.DiagnosticSeverityError
		case diag.SeverityWarning:
			pd.Severity = tfprotov6.DiagnosticSeverityWarning
		}
		if dp, ok := d.(diag.DiagnosticWithPath); ok {
			pd.Attribute = tfPath(ctx, dp.Path())
		}
		out = append(out, pd)
	}
	return out
}

// tfPath is p as a Terraform attribute path.
func tfPath(ctx context.Context, p path.Path) *tftypes.AttributePath {
	out := tftypes.NewAttributePath()
	for _, st := range p.Steps() {
		switch s := st.(type) {
		case path.PathStepAttributeName:
			out = out.WithAttributeName(string(s))
		case path.PathStepElementKeyInt:
			out = out.WithElementKeyInt(int(s))
		case path.PathStepElementKeyString:
			out = out.WithElementKeyString(string(s))
		case path.PathStepElementKeyValue:
			v, err := s.ToTerraformValue(ctx)
			if err != nil {
				return out
			}
			out = out.WithElementKeyValue(v)
		}
	}
	return out
}

// diagnosticsKey is a comparable text of diagnostics, in no particular order (the
// framework walks maps).
func diagnosticsKey(ds []*tfprotov6.Diagnostic) string {
	lines := make([]string, 0, len(ds))
	for _, d := range ds {
		at := ""
		if d.Attribute != nil {
			at = d.Attribute.String()
		}
		lines = append(lines, fmt.Sprintf("%s | %s | %s | %q", d.Severity, at, d.Summary, d.Detail))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
