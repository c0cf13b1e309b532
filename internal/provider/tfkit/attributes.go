package tfkit

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// The attributes and blocks that schemas repeat.

// ResourceSchema is a resource's schema: its description, its attributes, its `host`
// (unless it has its own) and a `timeouts` block of the operations t.
func ResourceSchema(ctx context.Context, desc string, t timeouts.Opts, attrs map[string]schema.Attribute) schema.Schema {
	if _, own := attrs["host"]; !own {
		attrs["host"] = HostAttribute("")
	}
	return schema.Schema{MarkdownDescription: desc, Attributes: attrs, Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, t)}}
}

// IDAttribute is a resource's `id`: computed at create, the same for as long as the
// object lives (so plans do not show it as "known after apply").
func IDAttribute(desc string) schema.StringAttribute { return KeptString(desc) }

// KeptString is a computed string that libvirt sets at create and that a later plan
// keeps (a path, a digest, the state right after an action).
func KeptString(desc string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: desc,
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// KeptInt is KeptString for a number (a size written once).
func KeptInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{
		MarkdownDescription: desc,
		Computed:            true,
		PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
	}
}

// ObjectNameAttribute is a required libvirt object name (what: "volume name", "pool
// name"); changing it replaces the resource.
func ObjectNameAttribute(desc, what string) schema.StringAttribute {
	return RequiredReplace(desc, validators.ObjectName(what))
}

// Timeouts blocks: every operation, or every one but update for resources that any
// change replaces.
var (
	AllTimeouts      = timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}
	NoUpdateTimeouts = timeouts.Opts{Create: true, Read: true, Delete: true}
)

// UnsetTimeouts is a timeouts block that is not configured, of a resource whose block has
// the operations of o: what an import stores.
func UnsetTimeouts(o timeouts.Opts) timeouts.Value {
	t := map[string]attr.Type{}
	for op, on := range map[string]bool{"create": o.Create, "read": o.Read, "update": o.Update, "delete": o.Delete} {
		if on {
			t[op] = types.StringType
		}
	}
	return timeouts.Value{Object: types.ObjectNull(t)}
}

// ReplaceString is the plan modifiers of a string whose change replaces the object.
var ReplaceString = []planmodifier.String{stringplanmodifier.RequiresReplace()}

// RequiredReplace is a required string whose change replaces the object.
func RequiredReplace(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Required: true, Validators: validators, PlanModifiers: ReplaceString}
}

// OptionalReplace is an optional string whose change replaces the object.
func OptionalReplace(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Validators: validators, PlanModifiers: ReplaceString}
}

// SecretReplace is OptionalReplace for contents that may carry secrets (sensitive).
func SecretReplace(desc string, validators ...validator.String) schema.StringAttribute {
	a := OptionalReplace(desc, validators...)
	a.Sensitive = true
	return a
}

// DomainNameAttribute is a required libvirt domain name; changing it replaces the object.
func DomainNameAttribute(desc string) schema.StringAttribute {
	return RequiredReplace(desc, stringvalidator.RegexMatches(validators.DomainNameRegexp,
		"must be a libvirt domain name: 1 to 200 characters, starting with a letter, digit or underscore, without '/' or whitespace"))
}

// TriggersAttribute is `triggers`: arbitrary strings whose every change replaces the
// resource, which so does its action again.
func TriggersAttribute(desc string) schema.MapAttribute {
	return schema.MapAttribute{MarkdownDescription: desc, ElementType: types.StringType, Optional: true,
		PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}}
}

// OptionalString is an optional string (an update changes it in place).
func OptionalString(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Validators: validators}
}

// OptionalBool is an optional bool that is def when not set.
func OptionalBool(desc string, def bool) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Default: booldefault.StaticBool(def)}
}

// ComputedString, ComputedInt and ComputedBool are values libvirt reports, read anew on
// every refresh (the resource twins of datasource.go's DataString, DataInt, DataBool).
func ComputedString(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}

func ComputedInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
}

func ComputedBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Computed: true}
}

// DerivedString is an optional string that is worked out when not set (by libvirt, or
// from other attributes) and kept by later plans; any change replaces the object.
func DerivedString(desc string, validators ...validator.String) schema.StringAttribute {
	return OptionalComputed(desc, stringplanmodifier.RequiresReplace(), validators)
}

// DefaultedString is DerivedString for a value libvirt defaults: only a configured
// change replaces the object, dropping it from the configuration keeps the default.
func DefaultedString(desc string, validators ...validator.String) schema.StringAttribute {
	return OptionalComputed(desc, stringplanmodifier.RequiresReplaceIfConfigured(), validators)
}

func OptionalComputed(desc string, replace planmodifier.String, validators []validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Validators: validators,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), replace}}
}

// DefaultedInt is an optional number that defaults to a value libvirt reports (a source's
// size, count, ...), kept by later plans; an update changes it in place.
func DefaultedInt(desc string, validators ...validator.Int64) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Optional: true, Computed: true, Validators: validators,
		PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}}
}

// WriteOnlyString is a write-only twin of a state-kept content attribute: read from the
// configuration only, never kept in plan or state.
func WriteOnlyString(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, WriteOnly: true, Validators: validators}
}

// WriteOnlyVersion is `<contents>_wo_version`: a number whose change replaces the object,
// built again from write-only contents that Terraform cannot compare itself.
func WriteOnlyVersion(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Optional: true,
		PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()}}
}

// Optional attributes with a default, as schemas repeat them (OptionalBool is above).

// DefaultString is an optional string that is def when not set (an update changes it in
// place).
func DefaultString(desc, def string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Default: stringdefault.StaticString(def), Validators: validators}
}

// DefaultReplace is DefaultString for a string whose change replaces the object.
func DefaultReplace(desc, def string, validators ...validator.String) schema.StringAttribute {
	a := DefaultString(desc, def, validators...)
	a.PlanModifiers = ReplaceString
	return a
}

// BoolReplace is OptionalBool for a bool whose change replaces the object. Every default
// is false today; the call sites still say so.
func BoolReplace(desc string, def bool) schema.BoolAttribute {
	a := OptionalBool(desc, def)
	a.PlanModifiers = []planmodifier.Bool{boolplanmodifier.RequiresReplace()}
	return a
}

// AddedBoolReplace is BoolReplace (default false) for an attribute added to a resource
// that states already hold: there the attribute is null, and its default false — what
// the object always was — is stored in place instead of replacing the object (a snapshot
// or an export taken again only because the provider was upgraded).
func AddedBoolReplace(desc string) schema.BoolAttribute {
	a := OptionalBool(desc, false)
	a.PlanModifiers = []planmodifier.Bool{boolplanmodifier.RequiresReplaceIf(
		func(_ context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
			resp.RequiresReplace = !(req.StateValue.IsNull() && !req.PlanValue.ValueBool())
		},
		"If the value of this attribute changes, Terraform will destroy and recreate the resource.",
		"If the value of this attribute changes, Terraform will destroy and recreate the resource.")}
	return a
}

// WithAttributes adds extra to attrs and returns attrs.
func WithAttributes(extra, attrs map[string]schema.Attribute) map[string]schema.Attribute {
	maps.Copy(attrs, extra)
	return attrs
}
