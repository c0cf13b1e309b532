package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider"
)

// providerSchema asks the provider for its schema in-process, over the same protocol 6
// calls Terraform makes (GetProviderSchema, GetResourceIdentitySchemas), and returns it in
// the shape of `terraform providers schema -json`. No binary is built, no Terraform CLI is
// run and nothing touches the network or a libvirt host: the provider is never configured.
func providerSchema(ctx context.Context, version string) (*tfjson.ProviderSchema, error) {
	server := providerserver.NewProtocol6(provider.New(version)())()

	resp, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, fmt.Errorf("GetProviderSchema: %w", err)
	}
	if err := diagsErr("GetProviderSchema", resp.Diagnostics); err != nil {
		return nil, err
	}
	ids, err := server.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		return nil, fmt.Errorf("GetResourceIdentitySchemas: %w", err)
	}
	if err := diagsErr("GetResourceIdentitySchemas", ids.Diagnostics); err != nil {
		return nil, err
	}

	var c converter
	out := &tfjson.ProviderSchema{
		ConfigSchema:             c.schema(resp.Provider),
		ResourceSchemas:          c.schemas(resp.ResourceSchemas),
		DataSourceSchemas:        c.schemas(resp.DataSourceSchemas),
		EphemeralResourceSchemas: c.schemas(resp.EphemeralResourceSchemas),
		ListResourceSchemas:      c.schemas(resp.ListResourceSchemas),
		StateStoreSchemas:        c.schemas(resp.StateStoreSchemas),
	}
	if len(resp.ActionSchemas) > 0 {
		out.ActionSchemas = map[string]*tfjson.ActionSchema{}
		for name, s := range resp.ActionSchemas {
			if s == nil {
				continue
			}
			var block *tfjson.SchemaBlock
			if s.Schema != nil {
				block = c.block(s.Schema.Block)
			}
			out.ActionSchemas[name] = &tfjson.ActionSchema{Block: block}
		}
	}
	if len(resp.Functions) > 0 {
		out.Functions = map[string]*tfjson.FunctionSignature{}
		for name, f := range resp.Functions {
			out.Functions[name] = c.function(name, f)
		}
	}
	if len(ids.IdentitySchemas) > 0 {
		out.ResourceIdentitySchemas = map[string]*tfjson.IdentitySchema{}
		for name, s := range ids.IdentitySchemas {
			out.ResourceIdentitySchemas[name] = c.identity(name, s)
		}
	}
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return out, nil
}

func diagsErr(call string, diags []*tfprotov6.Diagnostic) error {
	var msgs []string
	for _, d := range diags {
		if d != nil && d.Severity == tfprotov6.DiagnosticSeverityError {
			msgs = append(msgs, d.Summary+": "+d.Detail)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return fmt.Errorf("%s returned errors:\n  %s", call, strings.Join(msgs, "\n  "))
}

// converter turns protocol 6 schemas into terraform-json's, the way Terraform's
// `providers schema -json` does (internal/plugin6/convert + internal/command/jsonprovider):
// attributes and blocks keyed by name, description kinds as "plain" / "markdown", nesting
// modes lower case, zero min/max items omitted. It collects errors instead of stopping.
type converter struct{ errs []error }

func (c *converter) schemas(in map[string]*tfprotov6.Schema) map[string]*tfjson.Schema {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]*tfjson.Schema, len(in))
	for name, s := range in {
		out[name] = c.schema(s)
	}
	return out
}

func (c *converter) schema(s *tfprotov6.Schema) *tfjson.Schema {
	if s == nil {
		return nil
	}
	return &tfjson.Schema{Version: uint64(s.Version), Block: c.block(s.Block)}
}

func (c *converter) block(b *tfprotov6.SchemaBlock) *tfjson.SchemaBlock {
	if b == nil {
		return &tfjson.SchemaBlock{DescriptionKind: tfjson.SchemaDescriptionKindPlain}
	}
	out := &tfjson.SchemaBlock{
		Description:     b.Description,
		DescriptionKind: kind(b.DescriptionKind),
		Deprecated:      b.Deprecated,
	}
	if len(b.Attributes) > 0 {
		out.Attributes = make(map[string]*tfjson.SchemaAttribute, len(b.Attributes))
		for _, a := range b.Attributes {
			if a != nil {
				out.Attributes[a.Name] = c.attribute(a)
			}
		}
	}
	if len(b.BlockTypes) > 0 {
		out.NestedBlocks = make(map[string]*tfjson.SchemaBlockType, len(b.BlockTypes))
		for _, nb := range b.BlockTypes {
			if nb == nil {
				continue
			}
			out.NestedBlocks[nb.TypeName] = &tfjson.SchemaBlockType{
				NestingMode: c.blockNesting(nb.TypeName, nb.Nesting),
				Block:       c.block(nb.Block),
				MinItems:    uint64(max(nb.MinItems, 0)),
				MaxItems:    uint64(max(nb.MaxItems, 0)),
			}
		}
	}
	return out
}

func (c *converter) attribute(a *tfprotov6.SchemaAttribute) *tfjson.SchemaAttribute {
	out := &tfjson.SchemaAttribute{
		Description:     a.Description,
		DescriptionKind: kind(a.DescriptionKind),
		Deprecated:      a.Deprecated,
		Required:        a.Required,
		Optional:        a.Optional,
		Computed:        a.Computed,
		Sensitive:       a.Sensitive,
		WriteOnly:       a.WriteOnly,
	}
	if a.Type != nil {
		out.AttributeType = c.ctyType(a.Name, a.Type)
	}
	if a.NestedType != nil {
		nt := &tfjson.SchemaNestedAttributeType{
			NestingMode: c.objectNesting(a.Name, a.NestedType.Nesting),
			Attributes:  make(map[string]*tfjson.SchemaAttribute, len(a.NestedType.Attributes)),
		}
		for _, na := range a.NestedType.Attributes {
			if na != nil {
				nt.Attributes[na.Name] = c.attribute(na)
			}
		}
		out.AttributeNestedType = nt
	}
	return out
}

func (c *converter) function(name string, f *tfprotov6.Function) *tfjson.FunctionSignature {
	out := &tfjson.FunctionSignature{
		Description:        f.Description,
		Summary:            f.Summary,
		DeprecationMessage: f.DeprecationMessage,
		ReturnType:         cty.DynamicPseudoType,
	}
	if f.Return != nil && f.Return.Type != nil {
		out.ReturnType = c.ctyType(name+" return", f.Return.Type)
	}
	param := func(p *tfprotov6.FunctionParameter) *tfjson.FunctionParameter {
		return &tfjson.FunctionParameter{
			Name:        p.Name,
			Description: p.Description,
			IsNullable:  p.AllowNullValue,
			Type:        c.ctyType(name+" parameter "+p.Name, p.Type),
		}
	}
	for _, p := range f.Parameters {
		if p != nil {
			out.Parameters = append(out.Parameters, param(p))
		}
	}
	if f.VariadicParameter != nil {
		out.VariadicParameter = param(f.VariadicParameter)
	}
	return out
}

func (c *converter) identity(name string, s *tfprotov6.ResourceIdentitySchema) *tfjson.IdentitySchema {
	if s == nil {
		return nil
	}
	out := &tfjson.IdentitySchema{Version: uint64(max(s.Version, 0))}
	if len(s.IdentityAttributes) > 0 {
		out.Attributes = make(map[string]*tfjson.IdentityAttribute, len(s.IdentityAttributes))
		for _, a := range s.IdentityAttributes {
			if a == nil {
				continue
			}
			out.Attributes[a.Name] = &tfjson.IdentityAttribute{
				IdentityType:      c.ctyType(name+" identity "+a.Name, a.Type),
				Description:       a.Description,
				RequiredForImport: a.RequiredForImport,
				OptionalForImport: a.OptionalForImport,
			}
		}
	}
	return out
}

// ctyType converts through the JSON type notation both libraries share
// ("string", ["list","string"], ["object",{...},["optional"]], "dynamic").
func (c *converter) ctyType(where string, t tftypes.Type) cty.Type {
	if t == nil {
		return cty.DynamicPseudoType
	}
	raw, err := json.Marshal(t)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: type %s: %w", where, t, err))
		return cty.NilType
	}
	var out cty.Type
	if err := out.UnmarshalJSON(raw); err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: type %s: %w", where, raw, err))
		return cty.NilType
	}
	return out
}

func kind(k tfprotov6.StringKind) tfjson.SchemaDescriptionKind {
	if k == tfprotov6.StringKindMarkdown {
		return tfjson.SchemaDescriptionKindMarkdown
	}
	return tfjson.SchemaDescriptionKindPlain
}

func (c *converter) blockNesting(name string, m tfprotov6.SchemaNestedBlockNestingMode) tfjson.SchemaNestingMode {
	switch m {
	case tfprotov6.SchemaNestedBlockNestingModeSingle:
		return tfjson.SchemaNestingModeSingle
	case tfprotov6.SchemaNestedBlockNestingModeGroup:
		return tfjson.SchemaNestingModeGroup
	case tfprotov6.SchemaNestedBlockNestingModeList:
		return tfjson.SchemaNestingModeList
	case tfprotov6.SchemaNestedBlockNestingModeSet:
		return tfjson.SchemaNestingModeSet
	case tfprotov6.SchemaNestedBlockNestingModeMap:
		return tfjson.SchemaNestingModeMap
	}
	c.errs = append(c.errs, fmt.Errorf("block %s: invalid nesting mode %s", name, m))
	return "invalid"
}

func (c *converter) objectNesting(name string, m tfprotov6.SchemaObjectNestingMode) tfjson.SchemaNestingMode {
	switch m {
	case tfprotov6.SchemaObjectNestingModeSingle:
		return tfjson.SchemaNestingModeSingle
	case tfprotov6.SchemaObjectNestingModeList:
		return tfjson.SchemaNestingModeList
	case tfprotov6.SchemaObjectNestingModeSet:
		return tfjson.SchemaNestingModeSet
	case tfprotov6.SchemaObjectNestingModeMap:
		return tfjson.SchemaNestingModeMap
	}
	c.errs = append(c.errs, fmt.Errorf("attribute %s: invalid nesting mode %s", name, m))
	return "invalid"
}
