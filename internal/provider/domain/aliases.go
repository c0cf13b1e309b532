package domain

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// The names the libvirt_domain files (still in this package, being rewritten) use of what
// moved to tfkit, under their old names, so that those files compile unchanged. These go
// when the domain moves into its own package: it then says tfkit.X itself.
//
// Most are aliases; a few are shims, because the domain reads unexported fields and
// methods that tfkit exports under new names (resourceBase.client, actionSchema's
// fields, deadline.end) or calls a generic function (which no alias can name).

// domainNameRegexp and lowerUUIDRegexp (resource_domain.go) lost their last users outside
// the domain to tfkit/validators (DomainNameRegexp, LowerUUIDRegexp): the domain move
// deletes them with the domain's other copies of tfkit's names.
var _, _ = domainNameRegexp, lowerUUIDRegexp

// parseDomain (was values.go, then clone's only) is domainxml.ParseDomain: main's
// resource_domain_plan.go reads a definition with it. Unused here until that merges.
var parseDomain = domainxml.ParseDomain

var _ = parseDomain

// defaultedInt: main's domain no longer uses it; drop it here at that merge.
var _ = defaultedInt

type (
	actionModel  = tfkit.ActionModel
	dataTimeouts = tfkit.DataTimeouts
	withTimeouts = tfkit.WithTimeouts
)

var (
	computedBool        = tfkit.ComputedBool
	computedString      = tfkit.ComputedString
	dataBool            = tfkit.DataBool
	dataInt             = tfkit.DataInt
	dataKey             = tfkit.DataKey
	dataSchema          = tfkit.DataSchema
	dataString          = tfkit.DataString
	dataStrings         = tfkit.DataStrings
	defaultString       = tfkit.DefaultString
	diagsErr            = tfkit.DiagsErr
	defaultedInt        = tfkit.DefaultedInt
	domainNameAttribute = tfkit.DomainNameAttribute
	keptString          = tfkit.KeptString
	known               = tfkit.Known
	knownString         = tfkit.StringOf
	nullIfUnknown       = tfkit.NullIfUnknown
	optString           = tfkit.StringOrNull
	optionalBool        = tfkit.OptionalBool
	optionalString      = tfkit.OptionalString
	requiredReplace     = tfkit.RequiredReplace
	stringList          = tfkit.StringList
	writeOnlyString     = tfkit.WriteOnlyString
)

// resourceBase is tfkit.ResourceBase with the client under the domain's name for it.
type resourceBase struct {
	tfkit.ResourceBase
	client *libvirt.Client
}

func (b *resourceBase) Configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.ResourceBase.Configure(ctx, req, resp)
	b.client = b.Client
}

// dataSourceBase is tfkit.DataSourceBase with the client under the domain's name for it.
type dataSourceBase struct {
	tfkit.DataSourceBase
	client *libvirt.Client
}

func (b *dataSourceBase) Configure(ctx context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.DataSourceBase.Configure(ctx, req, resp)
	b.client = b.Client
}

// actionResource is tfkit.ActionResource over the domain's resourceBase.
type actionResource[M any] struct {
	resourceBase
}

func (*actionResource[M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	tfkit.KeepState[M](ctx, req, resp)
}

func (*actionResource[M]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	tfkit.StorePlan[M](ctx, req, resp)
}

func (*actionResource[M]) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// actionSchema is tfkit.ActionSchema with the domain's field names.
type actionSchema struct {
	description, id, triggers, createTimeout string
	attributes                               map[string]schema.Attribute
}

func (a actionSchema) schema(ctx context.Context) schema.Schema {
	return tfkit.ActionSchema{Description: a.description, ID: a.id, Triggers: a.triggers,
		CreateTimeout: a.createTimeout, Attributes: a.attributes}.Schema(ctx)
}

// deadline is tfkit.Deadline with the domain's name for End.
type deadline struct{ *tfkit.Deadline }

func (d deadline) end(diags *diag.Diagnostics) { d.End(diags) }

func planContext(ctx context.Context, req resource.ModifyPlanRequest, c *libvirt.Client, typ string, attrs ...string) (context.Context, deadline) {
	ctx, d := tfkit.PlanContext(ctx, req, c, typ, attrs...)
	return ctx, deadline{d}
}

func create[M any, P tfkit.Timed[M]](ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, plan P, d *diag.Diagnostics) (P, error)) {
	tfkit.Create(ctx, req, resp, def, what, do)
}

func update[M any, P tfkit.Timed[M]](ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, plan, state P, d *diag.Diagnostics) (P, error)) {
	tfkit.Update(ctx, req, resp, def, what, do)
}

func remove[M any, P tfkit.Timed[M]](ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, state P, d *diag.Diagnostics) error) {
	tfkit.Remove(ctx, req, resp, def, what, do)
}

func refresh[M any, P tfkit.Timed[M]](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse,
	def time.Duration, what func(P) string, look func(context.Context, P) (P, error)) {
	tfkit.Refresh(ctx, req, resp, def, what, look)
}

func lookup[M any, P tfkit.DataTimed[M]](ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse,
	def time.Duration, what func(P) string, do func(ctx context.Context, m P, d *diag.Diagnostics) (P, error)) {
	tfkit.Lookup(ctx, req, resp, def, what, do)
}

func priorState[M any](ctx context.Context, state tfsdk.State) (*M, diag.Diagnostics) {
	return tfkit.PriorState[M](ctx, state)
}

func readBack[P any](ctx context.Context, read func(context.Context) (P, error)) (P, error) {
	return tfkit.ReadBack(ctx, read)
}

// For a merge: the other names that moved, old -> new. A domain file that starts using one
// of them needs a line above (an alias, or a shim for a generic function or a renamed
// field). Names the domain defines itself and still has its own copy of (nameOr, the
// regexps of resource_domain.go and domain_hostdevs.go, withAttributes, uintOf, intOrNull
// and the nic* port models of domain_nic_options.go) moved as tfkit.NameOr,
// validators.*Regexp, tfkit.WithAttributes / UintOf / Int64OrNull and portsettings.*.
//   addedBoolReplace -> tfkit.AddedBoolReplace, allKnown -> tfkit.AllKnown
//   allTimeouts -> tfkit.AllTimeouts, alreadyExistsHint -> tfkit.AlreadyExistsHint
//   appendErrs -> tfkit.AppendErrs, atAttribute -> tfkit.AtAttribute
//   attributeError -> tfkit.AttributeError, boolReplace -> tfkit.BoolReplace
//   clientFrom -> tfkit.ClientFrom, computedInt -> tfkit.ComputedInt, copyInto -> tfkit.CopyInto
//   dataTimed -> tfkit.DataTimed, defaultReplace -> tfkit.DefaultReplace
//   defaultedString -> tfkit.DefaultedString, derivedString -> tfkit.DerivedString
//   diagError -> tfkit.DiagError, elementsOf -> tfkit.ElementsOf, getBoth -> tfkit.GetBoth
//   gone -> tfkit.Gone, idAttribute -> tfkit.IDAttribute, importContext -> tfkit.ImportContext
//   importTimeout -> tfkit.ImportTimeout, keep -> tfkit.Keep, keepState -> tfkit.KeepState
//   keptInt -> tfkit.KeptInt, listOrNull -> tfkit.ListOrNull, listShort -> tfkit.ListShort
//   modelKnown -> tfkit.ModelKnown, modelSource -> tfkit.ModelSource
//   nestedType -> tfkit.NestedType, newDataSource -> tfkit.NewDataSource
//   newResource -> tfkit.NewResource, noUpdateTimeouts -> tfkit.NoUpdateTimeouts
//   nonNilValues -> tfkit.NonNilValues, nonTransport -> tfkit.NonTransport
//   objectNameAttribute -> tfkit.ObjectNameAttribute
//   objectNameRegexp -> validators.ObjectNameRegexp, optionalComputed -> tfkit.OptionalComputed
//   optionalReplace -> tfkit.OptionalReplace, planTimeout -> tfkit.PlanTimeout
//   presenceChanged -> tfkit.PresenceChanged, priorObject -> tfkit.PriorObject
//   refreshWith -> tfkit.RefreshWith, replaceString -> tfkit.ReplaceString
//   replacedOnPresence -> tfkit.ReplacedOnPresence, replacedOnly -> tfkit.ReplacedOnly
//   report -> tfkit.Report, resourceSchema -> tfkit.ResourceSchema
//   sameElements -> tfkit.SameElements, secretReplace -> tfkit.SecretReplace
//   sentence -> tfkit.Sentence, storePlan -> tfkit.StorePlan, timed -> tfkit.Timed
//   timeoutsBlock -> tfkit.TimeoutsBlock, triggersAttribute -> tfkit.TriggersAttribute
//   unknownErr -> tfkit.UnknownErr, unsetTimeouts -> tfkit.UnsetTimeouts
//   validateSpec -> tfkit.ValidateSpec, withDeadline -> tfkit.WithDeadline
//   withTypes -> tfkit.WithTypes, writeOnlyVersion -> tfkit.WriteOnlyVersion
