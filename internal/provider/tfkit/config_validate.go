package tfkit

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ConfigValidator validates a resource's configuration as terraform-plugin-framework's
// ValidateResourceConfig does: the resource's Configure, its ConfigValidators and
// ValidateConfig, then every attribute and block of the schema: the definition checks,
// read-only, required and write-only values, each validator with the same request (path,
// path expression, value, whole configuration), nested objects, deprecations, with the
// framework's own messages. What differs is the walk: the framework looks every attribute
// up from the root of the schema, rebuilding each level's attribute map per step, and
// re-reads its value from the root of the configuration; here schema and value are walked
// together, each level once. For libvirt_domain (47 top-level names) that is most of the
// 1 ms of CPU a validation cost per domain (ADR 8). The protocol server checks the two
// agree in every acceptance test (LIBVIRT_PROVIDER_VERIFY_SHORTCUT), and a unit test
// compares them on configurations that trip each kind of check.
type ConfigValidator struct {
	schema schema.Schema
	attrs  []*vnode
	blocks []*vnode
}

// nesting is how a nested attribute or block holds its object(s).
type nesting int

const (
	notNested nesting = iota
	nestedSingle
	nestedList
	nestedSet
	nestedMap
)

// vnode is one attribute or block of the schema, with what the walk needs precomputed.
type vnode struct {
	name   string
	attr   schema.Attribute // nil for a block
	block  schema.Block     // nil for an attribute
	typ    attr.Type
	nest   nesting
	object objectNode // the nested object's, when nest != notNested
}

type objectNode struct {
	validators []validator.Object
	attrs      []*vnode
	blocks     []*vnode
}

// NewConfigValidator indexes s. It fails for a schema using a kind of attribute or block
// the walk does not know (that resource keeps the framework's way).
func NewConfigValidator(s schema.Schema) (*ConfigValidator, error) {
	v := &ConfigValidator{schema: s}
	root, err := indexObject(nil, s.Attributes, s.Blocks)
	if err != nil {
		return nil, err
	}
	v.attrs, v.blocks = root.attrs, root.blocks
	return v, nil
}

// indexObject indexes an object's attributes and blocks, with its validators.
func indexObject(validators []validator.Object, attrs map[string]schema.Attribute, blocks map[string]schema.Block) (objectNode, error) {
	o := objectNode{validators: validators}
	var err error
	if o.attrs, err = indexAttributes(attrs); err != nil {
		return o, err
	}
	o.blocks, err = indexBlocks(blocks)
	return o, err
}

func indexAttributes(attrs map[string]schema.Attribute) ([]*vnode, error) {
	out := make([]*vnode, 0, len(attrs))
	for name, a := range attrs {
		n := &vnode{name: name, attr: a, typ: a.GetType()}
		switch a.(type) {
		case schema.StringAttribute, schema.BoolAttribute, schema.Int64Attribute, schema.Float64Attribute,
			schema.ListAttribute, schema.SetAttribute, schema.MapAttribute, schema.ObjectAttribute:
		case schema.SingleNestedAttribute:
			n.nest = nestedSingle
		case schema.ListNestedAttribute:
			n.nest = nestedList
		case schema.SetNestedAttribute:
			n.nest = nestedSet
		case schema.MapNestedAttribute:
			n.nest = nestedMap
		default:
			return nil, fmt.Errorf("attribute %s: %T is not walked", name, a)
		}
		if n.nest != notNested {
			obj, ok := a.(schema.NestedAttribute).GetNestedObject().(schema.NestedAttributeObject)
			if !ok {
				return nil, fmt.Errorf("attribute %s: nested object of %T", name, a)
			}
			var err error
			if n.object, err = indexObject(obj.Validators, obj.Attributes, nil); err != nil {
				return nil, err
			}
		}
		out = append(out, n)
	}
	return out, nil
}

func indexBlocks(blocks map[string]schema.Block) ([]*vnode, error) {
	out := make([]*vnode, 0, len(blocks))
	for name, b := range blocks {
		n := &vnode{name: name, block: b, typ: b.Type()}
		switch b.(type) {
		case schema.SingleNestedBlock:
			n.nest = nestedSingle
		case schema.ListNestedBlock:
			n.nest = nestedList
		case schema.SetNestedBlock:
			n.nest = nestedSet
		default:
			return nil, fmt.Errorf("block %s: %T is not walked", name, b)
		}
		obj, ok := b.GetNestedObject().(schema.NestedBlockObject)
		if !ok {
			return nil, fmt.Errorf("block %s: nested object of %T", name, b)
		}
		var err error
		if n.object, err = indexObject(obj.Validators, obj.Attributes, obj.Blocks); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// Validate is the framework's ValidateResourceConfig of config (a value of the schema's
// type) for r, configured with providerData as the framework would (nil before the
// provider is configured).
func (v *ConfigValidator) Validate(ctx context.Context, r resource.Resource, providerData any, config tftypes.Value, writeOnlyAllowed bool) diag.Diagnostics {
	var diags diag.Diagnostics
	if rc, ok := r.(resource.ResourceWithConfigure); ok {
		var resp resource.ConfigureResponse
		rc.Configure(ctx, resource.ConfigureRequest{ProviderData: providerData}, &resp)
		diags.Append(resp.Diagnostics...)
		if diags.HasError() {
			return diags
		}
	}
	cfg := tfsdk.Config{Raw: config, Schema: v.schema}
	req := resource.ValidateConfigRequest{Config: cfg,
		ClientCapabilities: resource.ValidateConfigClientCapabilities{WriteOnlyAttributesAllowed: writeOnlyAllowed}}
	if rv, ok := r.(resource.ResourceWithConfigValidators); ok {
		for _, cv := range rv.ConfigValidators(ctx) {
			resp := &resource.ValidateConfigResponse{}
			cv.ValidateResource(ctx, req, resp)
			diags.Append(resp.Diagnostics...)
		}
	}
	if rv, ok := r.(resource.ResourceWithValidateConfig); ok {
		resp := &resource.ValidateConfigResponse{}
		rv.ValidateConfig(ctx, req, resp)
		diags.Append(resp.Diagnostics...)
	}
	w := &walk{ctx: ctx, config: cfg, caps: validator.ValidateSchemaClientCapabilities{WriteOnlyAttributesAllowed: writeOnlyAllowed}}
	for _, n := range v.attrs {
		diags.Append(w.attribute(n, child(config, n.name), path.Root(n.name), path.MatchRoot(n.name))...)
	}
	for _, n := range v.blocks {
		diags.Append(w.block(n, child(config, n.name), path.Root(n.name), path.MatchRoot(n.name))...)
	}
	if msg := v.schema.GetDeprecationMessage(); msg != "" {
		diags.AddWarning("Deprecated", msg)
	}
	return diags
}

// child is the value of attribute name of obj, or the zero value (null, what the
// framework reads under a null or unknown object) when obj holds none.
func child(obj tftypes.Value, name string) tftypes.Value {
	if obj.IsNull() || !obj.IsKnown() {
		return tftypes.Value{}
	}
	var m map[string]tftypes.Value
	if obj.As(&m) != nil {
		return tftypes.Value{}
	}
	return m[name]
}
