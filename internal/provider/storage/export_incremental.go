package storage

import (
	"context"
	"fmt"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/export"
)

// Incremental exports (issue 17): with `incremental = true` libvirt_volume_export keeps a
// chain of files, one per export, each a qcow2 holding what changed since the previous
// one and backed by it. A change of `triggers` then adds a link in place (Update) instead
// of replacing the resource, so that the chain and its checkpoints live as long as the
// resource. This file holds the schema, plan and Update side; the chain itself is in
// export_chain.go.

// withIncremental adds `incremental` and `chain` to the export's schema and makes
// `triggers` replace it only when it is not incremental.
func withIncremental(s schema.Schema) schema.Schema {
	s.Attributes["incremental"] = schema.BoolAttribute{
		MarkdownDescription: "Keep a chain of exports instead of one file (default `false`; changing it replaces the resource). " +
			"The first export is a full copy of the disk written to `path`; each change of `triggers` then adds, in place, " +
			"a link holding only the clusters written since the previous export, as a qcow2 whose backing file is the " +
			"previous link's file (absolute path, format qcow2): `qemu-img convert -O qcow2 <newest link> restored.qcow2` " +
			"restores the disk at the last copy point, `qemu-img info --backing-chain <newest link>` shows the chain. " +
			"Link N (N ≥ 1) is written to `path` with `.N` inserted before a `.qcow2` suffix (`week.qcow2` → `week.1.qcow2`), " +
			"or `.N` appended when `path` has no such suffix.\n\n" +
			"Needs `format = \"qcow2\"`, `compression = \"none\"` (a compressed file cannot be a backing file), a qcow2 volume, " +
			"and a domain that runs (or is paused) with the volume as a disk: the copies are made by libvirt's backup API " +
			"(libvirt ≥ 6.0 with QEMU's blockdev, QEMU ≥ 4.2) through that domain, each with a libvirt checkpoint " +
			"(`tfexport-<hash of path>-<N>`, a dirty bitmap in the volume) marking its copy point. A missing checkpoint " +
			"(deleted by hand, the domain recreated) makes the next export a full copy again, with a warning: that link " +
			"has no backing file and starts a new chain (`chain[*].incremental = false`). Destroying the resource deletes " +
			"its checkpoints (and, with `remove_on_destroy`, every file of the chain). Not importable.",
		// No default: states written before this attribute existed hold null, which must
		// plan as no change (null and false mean the same).
		Optional: true,
		PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplaceIf(
			func(_ context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
				resp.RequiresReplace = req.PlanValue.ValueBool() != req.StateValue.ValueBool()
			}, "If the value of this attribute changes, Terraform will destroy and recreate the resource.",
			"If the value of this attribute changes, Terraform will destroy and recreate the resource.")},
	}
	s.Attributes["chain"] = schema.ListNestedAttribute{
		MarkdownDescription: "The files of an incremental export, oldest first (null when `incremental = false`). " +
			"`id`, `size_bytes` and `sha256` are those of the newest link: the one to restore from.",
		Computed:      true,
		PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()},
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"path":        schema.StringAttribute{Computed: true, MarkdownDescription: "Absolute path of the link's file."},
			"checkpoint":  schema.StringAttribute{Computed: true, MarkdownDescription: "The libvirt checkpoint made at its copy point."},
			"domain_uuid": schema.StringAttribute{Computed: true, MarkdownDescription: "UUID of the domain the copy was made through (which holds the checkpoint)."},
			"incremental": schema.BoolAttribute{Computed: true, MarkdownDescription: "`true`: only the changes since the previous link, which is its backing file; `false`: a full copy without backing file (the first link, or a restart after a missing checkpoint)."},
			"size_bytes":  schema.Int64Attribute{Computed: true, MarkdownDescription: "Bytes of the file."},
			"sha256":      schema.StringAttribute{Computed: true, MarkdownDescription: "SHA-256 of the file as written (hex)."},
			"created":     schema.StringAttribute{Computed: true, MarkdownDescription: "When the copy was taken (RFC 3339, UTC)."},
		}},
	}
	if t, ok := s.Attributes["triggers"].(schema.MapAttribute); ok { // actionSchema's
		t.MarkdownDescription += " With `incremental = true` a change adds the next link of the chain in place instead (update, not replace)."
		t.PlanModifiers = []planmodifier.Map{mapplanmodifier.RequiresReplaceIf(triggersReplace,
			"Unless incremental is true before and after, a change will destroy and recreate the resource.",
			"Unless `incremental` is true before and after, a change will destroy and recreate the resource.")}
		s.Attributes["triggers"] = t
	}
	return s
}

// triggersReplace: a change of triggers replaces an export unless it is incremental now
// and was before (the next link then extends the chain in place).
func triggersReplace(ctx context.Context, req planmodifier.MapRequest, resp *mapplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !(boolAt(ctx, req.Plan.GetAttribute, &resp.Diagnostics) && boolAt(ctx, req.State.GetAttribute, &resp.Diagnostics))
}

// boolAt is `incremental` as get reads it (false when null or unknown).
func boolAt(ctx context.Context, get func(context.Context, path.Path, any) diag.Diagnostics, d *diag.Diagnostics) bool {
	var b types.Bool
	d.Append(get(ctx, path.Root("incremental"), &b)...)
	return b.ValueBool()
}

// incrementalConfig refuses incremental with a format or compression a backing file
// cannot have, at plan time.
type incrementalConfig struct{}

func (incrementalConfig) Description(context.Context) string {
	return "incremental needs format qcow2 and compression none"
}
func (c incrementalConfig) MarkdownDescription(ctx context.Context) string { return c.Description(ctx) }

func (incrementalConfig) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m VolumeExportModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !m.Incremental.ValueBool() {
		return
	}
	if f := m.Format; !f.IsUnknown() && !f.IsNull() && f.ValueString() != "qcow2" {
		resp.Diagnostics.AddAttributeError(path.Root("format"), "Invalid incremental export",
			fmt.Sprintf("incremental = true needs format = \"qcow2\", got %q: each link of the chain is a qcow2 backed by the previous one.", f.ValueString()))
	}
	if c := m.Compression; !c.IsUnknown() && !c.IsNull() && c.ValueString() != export.None {
		resp.Diagnostics.AddAttributeError(path.Root("compression"), "Invalid incremental export",
			fmt.Sprintf("incremental = true needs compression = \"none\", got %q: a compressed file cannot be the backing file of the next link. "+
				"Compress the files afterwards if you must, and decompress them before a restore.", c.ValueString()))
	}
}

func (r *VolumeExportResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{incrementalConfig{}}
}

// ModifyPlan says what an apply will know only afterwards: the chain of a new export is
// null unless it is incremental, and a new link of an incremental one changes the
// newest file (id, size, digest) and the chain. Nothing changes when the configuration
// and the state agree (ADR 8).
func (r *VolumeExportResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan VolumeExportModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Incremental.IsUnknown() {
		return
	}
	if !plan.Incremental.ValueBool() {
		if plan.Chain.IsUnknown() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("chain"), types.ListNull(linkObjectType))...)
		}
		return
	}
	if req.State.Raw.IsNull() {
		return
	}
	var state VolumeExportModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !state.Incremental.ValueBool() || plan.Triggers.Equal(state.Triggers) {
		return
	}
	for name, v := range map[string]attr.Value{"id": types.StringUnknown(), "size_bytes": types.Int64Unknown(),
		"sha256": types.StringUnknown(), "chain": types.ListUnknown(linkObjectType)} {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// Update of libvirt_volume_export: with incremental = true and new triggers, the next
// link (on timeouts.create, the export's one deadline); otherwise the plan is stored
// (remove_on_destroy, timeouts), as for every action resource.
func (r *VolumeExportResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var state VolumeExportModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	tfkit.WithDeadline(ctx, req.Plan.Get, &resp.Diagnostics, timeouts.Value.Create, exportTimeout, func(ctx context.Context, plan *VolumeExportModel) {
		if !plan.Incremental.ValueBool() || plan.Triggers.Equal(state.Triggers) {
			resp.Diagnostics.Append(tfkit.SetState(ctx, &resp.State, plan)...)
			return
		}
		got, err := r.nextLink(ctx, plan, &state, resp.Private, &resp.Diagnostics)
		if got == nil {
			// A failed link leaves the chain as it was: the prior state (the framework
			// would otherwise return none), whose old triggers plan the link again.
			got = &state
		}
		tfkit.Keep(ctx, &resp.State, &resp.Diagnostics, got, "Unable to update "+state.what(), err)
	})
}
