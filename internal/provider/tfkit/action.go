package tfkit

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The contract of an action resource (libvirt_domain_power, libvirt_snapshot_revert,
// libvirt_volume_export): something done once, not an object kept.
//
//   - Create performs the action and stores its outcome; `id` says what it was done to.
//   - `triggers` and every attribute that names the target or the action replace the
//     resource, which so performs the action again. Nothing is changed in place: Update
//     stores the plan (new timeouts, or an attribute such as remove_on_destroy that only
//     shapes what comes later). One exception: an incremental libvirt_volume_export,
//     whose triggers add the next link of its chain in place (its own Update).
//   - Delete does nothing on the host: an action cannot be undone. A resource with a
//     cleanup of its own (the exported file) has its own Delete.
//   - Read keeps the state: there is nothing on the host to compare an action with. A
//     resource whose outcome can vanish (the domain acted on, the exported file) has its
//     own Read, which removes it from state then, so that the next apply acts again.
//
// A resource embeds ActionResource (the methods) and ActionModel (the attributes) and
// builds its schema with ActionSchema; it writes only Create and what is its own.

// ActionResource is embedded by an action resource of model M: its Read, Update and
// Delete as the contract says.
type ActionResource[M any] struct {
	ReplacedOnly[M]
}

// Read keeps the state as it is.
func (*ActionResource[M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	KeepState[M](ctx, req, resp)
}

// Delete does nothing on the host.
func (*ActionResource[M]) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// ReplacedOnly is embedded by a resource of model M whose every attribute but
// `timeouts` (and those that only shape what comes later) replaces it: Update stores
// the plan.
type ReplacedOnly[M any] struct {
	ResourceBase
}

func (*ReplacedOnly[M]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	StorePlan[M](ctx, req, resp)
}

// ActionModel is the part of an action resource's model that the contract fixes.
type ActionModel struct {
	WithTimeouts
	OnHost
	ID       types.String `tfsdk:"id"`
	Triggers types.Map    `tfsdk:"triggers"`
}

// ActionSchema is what an action resource's schema says of its own; schema adds the
// contract's `id`, `triggers` and a `timeouts` block of create only.
type ActionSchema struct {
	Description   string                      // the resource's
	ID, Triggers  string                      // the descriptions of `id` and `triggers`
	CreateTimeout string                      // the description of timeouts.create; "" for the framework's
	Attributes    map[string]schema.Attribute // its own
}

func (a ActionSchema) Schema(ctx context.Context) schema.Schema {
	attrs := map[string]schema.Attribute{"id": IDAttribute(a.ID), "triggers": TriggersAttribute(a.Triggers)}
	maps.Copy(attrs, a.Attributes)
	return ResourceSchema(ctx, a.Description, timeouts.Opts{Create: true, CreateDescription: a.CreateTimeout}, attrs)
}
