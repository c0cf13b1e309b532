package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

// The attributes and blocks that schemas repeat.

// resourceSchema is a resource's schema: its description, its attributes and a
// `timeouts` block of the operations t.
func resourceSchema(ctx context.Context, desc string, t timeouts.Opts, attrs map[string]schema.Attribute) schema.Schema {
	return schema.Schema{MarkdownDescription: desc, Attributes: attrs, Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, t)}}
}

// idAttribute is a resource's `id`: computed at create, the same for as long as the
// object lives (so plans do not show it as "known after apply").
func idAttribute(desc string) schema.StringAttribute { return keptString(desc) }

// keptString is a computed string that libvirt sets at create and that a later plan
// keeps (a path, a digest, the state right after an action).
func keptString(desc string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: desc,
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// keptInt is keptString for a number (a size written once).
func keptInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{
		MarkdownDescription: desc,
		Computed:            true,
		PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
	}
}

// objectNameAttribute is a required libvirt object name (what: "volume name", "pool
// name"); changing it replaces the resource.
func objectNameAttribute(desc, what string) schema.StringAttribute {
	return requiredReplace(desc, validators.ObjectName(what))
}

// Timeouts blocks: every operation, or every one but update for resources that any
// change replaces.
var (
	allTimeouts      = timeouts.Opts{Create: true, Read: true, Update: true, Delete: true}
	noUpdateTimeouts = timeouts.Opts{Create: true, Read: true, Delete: true}
)

// unsetTimeouts is a timeouts block that is not configured, of a resource whose block has
// the operations of o: what an import stores.
func unsetTimeouts(o timeouts.Opts) timeouts.Value {
	t := map[string]attr.Type{}
	for op, on := range map[string]bool{"create": o.Create, "read": o.Read, "update": o.Update, "delete": o.Delete} {
		if on {
			t[op] = types.StringType
		}
	}
	return timeouts.Value{Object: types.ObjectNull(t)}
}

// replaceString is the plan modifiers of a string whose change replaces the object.
var replaceString = []planmodifier.String{stringplanmodifier.RequiresReplace()}

// requiredReplace is a required string whose change replaces the object.
func requiredReplace(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Required: true, Validators: validators, PlanModifiers: replaceString}
}

// optionalReplace is an optional string whose change replaces the object.
func optionalReplace(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Validators: validators, PlanModifiers: replaceString}
}

// secretReplace is optionalReplace for contents that may carry secrets (sensitive).
func secretReplace(desc string, validators ...validator.String) schema.StringAttribute {
	a := optionalReplace(desc, validators...)
	a.Sensitive = true
	return a
}

// domainNameAttribute is a required libvirt domain name; changing it replaces the object.
func domainNameAttribute(desc string) schema.StringAttribute {
	return requiredReplace(desc, stringvalidator.RegexMatches(validators.DomainNameRegexp,
		"must be a libvirt domain name: 1 to 200 characters, starting with a letter, digit or underscore, without '/' or whitespace"))
}

// triggersAttribute is `triggers`: arbitrary strings whose every change replaces the
// resource, which so does its action again.
func triggersAttribute(desc string) schema.MapAttribute {
	return schema.MapAttribute{MarkdownDescription: desc, ElementType: types.StringType, Optional: true,
		PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}}
}

// optionalString is an optional string (an update changes it in place).
func optionalString(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Validators: validators}
}

// optionalBool is an optional bool that is def when not set.
func optionalBool(desc string, def bool) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Default: booldefault.StaticBool(def)}
}

// computedString, computedInt and computedBool are values libvirt reports, read anew on
// every refresh (the resource twins of datasource_read.go's dataString, dataInt, dataBool).
func computedString(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}

func computedInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
}

func computedBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Computed: true}
}

// derivedString is an optional string that is worked out when not set (by libvirt, or
// from other attributes) and kept by later plans; any change replaces the object.
func derivedString(desc string, validators ...validator.String) schema.StringAttribute {
	return optionalComputed(desc, stringplanmodifier.RequiresReplace(), validators)
}

// defaultedString is derivedString for a value libvirt defaults: only a configured
// change replaces the object, dropping it from the configuration keeps the default.
func defaultedString(desc string, validators ...validator.String) schema.StringAttribute {
	return optionalComputed(desc, stringplanmodifier.RequiresReplaceIfConfigured(), validators)
}

func optionalComputed(desc string, replace planmodifier.String, validators []validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Computed: true, Validators: validators,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown(), replace}}
}

// defaultedInt is an optional number that defaults to a value libvirt reports (a source's
// size, count, ...), kept by later plans; an update changes it in place.
func defaultedInt(desc string, validators ...validator.Int64) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Optional: true, Computed: true, Validators: validators,
		PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}}
}

// writeOnlyString is a write-only twin of a state-kept content attribute: read from the
// configuration only, never kept in plan or state.
func writeOnlyString(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, WriteOnly: true, Validators: validators}
}

// writeOnlyVersion is `<contents>_wo_version`: a number whose change replaces the object,
// built again from write-only contents that Terraform cannot compare itself.
func writeOnlyVersion(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Optional: true,
		PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()}}
}
