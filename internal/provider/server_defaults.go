package provider

import (
	"context"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// schemaDefaults knows, per resource type, the attributes with a schema Default: the
// framework sets each of them in every plan where the configuration leaves it null, so a
// proposed state equal to the prior one is the plan only if the prior state already holds
// every such default (a domain stopped outside Terraform has running = false in state and
// no running in its configuration: the plan must bring back the default, true).
type schemaDefaults struct {
	once   sync.Once
	newRes func() []func() resource.Resource
	byType map[string]*defaultsIndex
	types  map[string]tftypes.Type // every resource type's, indexed or not
}

type defaultsIndex struct {
	typ     tftypes.Type
	version int64 // the schema's version (UpgradeResourceState)
	// listBlocks holds the schema paths of list and set blocks: Terraform wants them empty,
	// never null (upgradeCurrent).
	listBlocks map[string]bool
	// values maps a schema path (attribute and block names joined by ".", list and map
	// elements left out) to its default.
	values map[string]tftypes.Value
}

func (s *schemaDefaults) index(ctx context.Context, typeName string) *defaultsIndex {
	s.once.Do(func() {
		s.byType = map[string]*defaultsIndex{}
		s.types = map[string]tftypes.Type{}
		eachResource(ctx, s.newRes, func(typeName string, sch schema.Schema, _ func() resource.Resource) {
			idx := &defaultsIndex{typ: sch.Type().TerraformType(ctx), version: sch.Version,
				values: map[string]tftypes.Value{}, listBlocks: map[string]bool{}}
			s.types[typeName] = idx.typ
			if !idx.addAttributes(ctx, "", sch.Attributes) || !idx.addBlocks(ctx, "", sch.Blocks) {
				return // a default that cannot be read: that type always takes the framework's way
			}
			s.byType[typeName] = idx
		})
	})
	return s.byType[typeName]
}

// eachResource calls f with each resource type's name, schema and constructor.
func eachResource(ctx context.Context, newRes func() []func() resource.Resource, f func(typeName string, s schema.Schema, newRes func() resource.Resource)) {
	for _, nr := range newRes() {
		r := nr()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "libvirt"}, &md)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		f(md.TypeName, sr.Schema, nr)
	}
}

// typeOf is the Terraform type of a resource type's objects, nil for an unknown type.
func (s *schemaDefaults) typeOf(ctx context.Context, typeName string) tftypes.Type {
	s.index(ctx, typeName)
	return s.types[typeName]
}

// holds is true when every attribute with a default that the configuration leaves null
// already has its default in the prior state.
func (s *schemaDefaults) holds(ctx context.Context, typeName string, config, prior *tfprotov6.DynamicValue) bool {
	idx := s.index(ctx, typeName)
	if idx == nil || config == nil {
		return false
	}
	if len(idx.values) == 0 {
		return true
	}
	cfg, err := config.Unmarshal(idx.typ)
	if err != nil {
		return false
	}
	was, err := prior.Unmarshal(idx.typ)
	if err != nil {
		return false
	}
	ok := true
	_ = tftypes.Walk(was, func(p *tftypes.AttributePath, v tftypes.Value) (bool, error) {
		def, has := idx.values[schemaPath(p)]
		if !ok || !has {
			return ok, nil
		}
		if c, _, err := tftypes.WalkAttributePath(cfg, p); err == nil {
			if cv, isValue := c.(tftypes.Value); isValue && !cv.IsNull() {
				return true, nil // configured: no default applies
			}
		}
		ok = v.Equal(def)
		return ok, nil
	})
	return ok
}

// schemaPath is p's attribute and block names joined by ".", without element steps.
func schemaPath(p *tftypes.AttributePath) string {
	var names []string
	for _, st := range p.Steps() {
		if n, isName := st.(tftypes.AttributeName); isName {
			names = append(names, string(n))
		}
	}
	return strings.Join(names, ".")
}

func (idx *defaultsIndex) addAttributes(ctx context.Context, prefix string, attrs map[string]schema.Attribute) bool {
	for name, a := range attrs {
		key := prefix + name
		v, has, ok := defaultOf(ctx, a)
		if !ok {
			return false
		}
		if has {
			idx.values[key] = v
		}
		var nested map[string]schema.Attribute
		switch n := a.(type) {
		case schema.SingleNestedAttribute:
			nested = n.Attributes
		case schema.ListNestedAttribute:
			nested = n.NestedObject.Attributes
		case schema.SetNestedAttribute:
			nested = n.NestedObject.Attributes
		case schema.MapNestedAttribute:
			nested = n.NestedObject.Attributes
		}
		if nested != nil && !idx.addAttributes(ctx, key+".", nested) {
			return false
		}
	}
	return true
}

func (idx *defaultsIndex) addBlocks(ctx context.Context, prefix string, blocks map[string]schema.Block) bool {
	for name, b := range blocks {
		key := prefix + name + "."
		var attrs map[string]schema.Attribute
		var inner map[string]schema.Block
		switch n := b.(type) {
		case schema.SingleNestedBlock:
			attrs, inner = n.Attributes, n.Blocks
		case schema.ListNestedBlock:
			attrs, inner = n.NestedObject.Attributes, n.NestedObject.Blocks
			idx.listBlocks[prefix+name] = true
		case schema.SetNestedBlock:
			attrs, inner = n.NestedObject.Attributes, n.NestedObject.Blocks
			idx.listBlocks[prefix+name] = true
		default:
			return false
		}
		if !idx.addAttributes(ctx, key, attrs) || !idx.addBlocks(ctx, key, inner) {
			return false
		}
	}
	return true
}

// defaultOf is a's static default as a Terraform value (has: it has one; ok: it could be
// read).
func defaultOf(ctx context.Context, a schema.Attribute) (v tftypes.Value, has, ok bool) {
	var val attr.Value
	switch d := a.(type) {
	case interface{ BoolDefaultValue() defaults.Bool }:
		if dv := d.BoolDefaultValue(); dv != nil {
			var r defaults.BoolResponse
			dv.DefaultBool(ctx, defaults.BoolRequest{}, &r)
			val = r.PlanValue
		}
	case interface{ StringDefaultValue() defaults.String }:
		if dv := d.StringDefaultValue(); dv != nil {
			var r defaults.StringResponse
			dv.DefaultString(ctx, defaults.StringRequest{}, &r)
			val = r.PlanValue
		}
	case interface{ Int64DefaultValue() defaults.Int64 }:
		if dv := d.Int64DefaultValue(); dv != nil {
			var r defaults.Int64Response
			dv.DefaultInt64(ctx, defaults.Int64Request{}, &r)
			val = r.PlanValue
		}
	case interface{ ObjectDefaultValue() defaults.Object }:
		if dv := d.ObjectDefaultValue(); dv != nil {
			var r defaults.ObjectResponse
			dv.DefaultObject(ctx, defaults.ObjectRequest{}, &r)
			val = r.PlanValue
		}
	case interface{ ListDefaultValue() defaults.List }:
		if dv := d.ListDefaultValue(); dv != nil {
			var r defaults.ListResponse
			dv.DefaultList(ctx, defaults.ListRequest{}, &r)
			val = r.PlanValue
		}
	case interface{ MapDefaultValue() defaults.Map }:
		if dv := d.MapDefaultValue(); dv != nil {
			var r defaults.MapResponse
			dv.DefaultMap(ctx, defaults.MapRequest{}, &r)
			val = r.PlanValue
		}
	case interface{ SetDefaultValue() defaults.Set }:
		if dv := d.SetDefaultValue(); dv != nil {
			var r defaults.SetResponse
			dv.DefaultSet(ctx, defaults.SetRequest{}, &r)
			val = r.PlanValue
		}
	case interface{ Float64DefaultValue() defaults.Float64 }:
		if dv := d.Float64DefaultValue(); dv != nil {
			return tftypes.Value{}, false, false // none in this provider: take the framework's way
		}
	case interface{ NumberDefaultValue() defaults.Number }:
		if dv := d.NumberDefaultValue(); dv != nil {
			return tftypes.Value{}, false, false
		}
	}
	if val == nil {
		return tftypes.Value{}, false, true
	}
	tv, err := val.ToTerraformValue(ctx)
	return tv, err == nil, err == nil
}
