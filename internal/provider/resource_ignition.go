package provider

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/validators"
)

// maxIgnitionBytes bounds what import downloads: Ignition configs are small.
const maxIgnitionBytes = 16 << 20

// NewIgnitionResource is libvirt_ignition.
func NewIgnitionResource() resource.Resource {
	return &ignitionResource{resourceBase{typeName: "ignition"}}
}

type ignitionResource struct {
	resourceBase
}

type ignitionModel struct {
	ID      types.String `tfsdk:"id"`
	Name    types.String `tfsdk:"name"`
	Pool    types.String `tfsdk:"pool"`
	Content types.String `tfsdk:"content"`
	// ContentWO is only ever non-null in req.Config: the framework nulls it in plan and
	// state (its zero value is null, as import leaves it).
	ContentWO        types.String `tfsdk:"content_wo"`
	ContentWOVersion types.Int64  `tfsdk:"content_wo_version"`
	Path             types.String `tfsdk:"path"`
	SHA256           types.String `tfsdk:"sha256"`
}

func (r *ignitionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An Ignition config for Fedora CoreOS / Flatcar guests, stored byte for byte as a raw volume in a " +
			"pool. Hand it to a domain with `libvirt_domain.ignition_id`: the domain gets it through QEMU's fw_cfg as " +
			"`opt/com.coreos/config`. Any change replaces it. To keep the config out of the state, give it as " +
			"`content_wo` (write-only: Terraform >= 1.11, OpenTofu >= 1.11) and bump `content_wo_version` whenever it changes.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The volume's key (for directory pools, its path on the host).",
				Computed:            true,
				PlanModifiers:       keep,
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Volume name, unique in its pool, e.g. `node-1.ign`.",
				Required:            true,
				PlanModifiers:       replace,
				Validators:          []validator.String{validators.ObjectName("volume name")},
			},
			"pool": schema.StringAttribute{
				MarkdownDescription: "Storage pool to store the config in, e.g. `default`. QEMU reads the file directly, so the " +
					"pool must be a local one (a directory pool).",
				Required:      true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.ObjectName("pool name")},
			},
			"content": schema.StringAttribute{
				MarkdownDescription: "The Ignition config (JSON, e.g. from the `ct` / Butane provider or `jsonencode()`), " +
					"checked to parse as JSON at plan time. Sensitive: Ignition configs carry secrets; kept in the state " +
					"(`content_wo` is not). Exactly one of `content` and `content_wo` is set.",
				Optional:      true,
				Sensitive:     true,
				PlanModifiers: replace,
				Validators:    []validator.String{validators.JSON()},
			},
			"content_wo": schema.StringAttribute{
				MarkdownDescription: "Write-only `content`: stored in the volume, never kept in the plan or the state " +
					"(Terraform >= 1.11, OpenTofu >= 1.11; ephemeral values are welcome). A change of it alone is not seen: " +
					"bump `content_wo_version` to store it again. Import cannot know a config was given write-only: it reads " +
					"the volume into `content` (and the state); with `content_wo` in the configuration the next plan replaces it.",
				Optional:   true,
				WriteOnly:  true,
				Validators: []validator.String{validators.JSON()},
			},
			"content_wo_version": schema.Int64Attribute{
				MarkdownDescription: "Any number, kept in the state: changing it replaces the config, stored again from the " +
					"current `content_wo`, which Terraform cannot compare itself. Bump it whenever `content_wo` changes.",
				Optional:      true,
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			},
			"path": schema.StringAttribute{
				MarkdownDescription: "Path of the volume on the host.",
				Computed:            true,
				PlanModifiers:       keep,
			},
			"sha256": schema.StringAttribute{
				MarkdownDescription: "sha256 of the config (hex); known at plan time for `content`, after the apply for " +
					"`content_wo` (write-only values, ephemeral ones say, may differ between plan and apply).",
				Computed:      true,
				PlanModifiers: keep,
			},
		},
	}
}

// ConfigValidators: the config comes from content or content_wo, not both.
func (r *ignitionResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.ExactlyOneOf(path.MatchRoot("content"), path.MatchRoot("content_wo"))}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ModifyPlan fills sha256 for a new config whose content is known; for content_wo it
// stays unknown (plan has it null; the write-only value may differ at apply).
func (r *ignitionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() {
		return
	}
	var plan ignitionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Content.IsUnknown() || plan.Content.IsNull() {
		return
	}
	plan.SHA256 = types.StringValue(sha256Hex([]byte(plan.Content.ValueString())))
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *ignitionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config ignitionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	spec := libvirt.VolumeSpec{Pool: plan.Pool.ValueString(), Name: plan.Name.ValueString(), Format: "raw"}
	content := []byte(plan.Content.ValueString())
	if plan.Content.IsNull() {
		content = []byte(config.ContentWO.ValueString()) // only the configuration holds it
	}
	info, err := r.client.UploadBytes(ctx, spec, "ignition config", content)
	if err != nil {
		resp.Diagnostics.AddError("Unable to create ignition config "+spec.String(), err.Error())
		return
	}
	tflog.Info(ctx, "stored ignition config", map[string]any{"volume": spec.String(), "bytes": len(content)})
	plan.ID = types.StringValue(info.Key)
	plan.Path = types.StringValue(info.Path)
	plan.Name = types.StringValue(info.Name)
	plan.Pool = types.StringValue(info.Pool)
	plan.SHA256 = types.StringValue(sha256Hex(content))
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *ignitionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state ignitionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// In its pool: a config in a stopped pool is not gone (see volumeModel.ref).
	info, err := r.client.VolumeInfo(ctx, libvirt.VolumeRef{Key: state.ID.ValueString(), Pool: state.Pool.ValueString()})
	if errors.Is(err, libvirt.ErrNotFound) {
		tflog.Warn(ctx, "ignition volume is gone from the host; removing it from state", map[string]any{"id": state.ID.ValueString()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Unable to read ignition config "+state.Pool.ValueString()+"/"+state.Name.ValueString(), err.Error())
		return
	}
	state.ID = types.StringValue(info.Key)
	state.Path = types.StringValue(info.Path)
	state.Name = types.StringValue(info.Name)
	state.Pool = types.StringValue(info.Pool)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update is never called with a change: every attribute replaces the config.
func (r *ignitionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan ignitionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *ignitionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state ignitionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	err := r.client.DeleteVolume(ctx, libvirt.VolumeRef{Key: state.ID.ValueString(), Pool: state.Pool.ValueString()})
	if err != nil && !errors.Is(err, libvirt.ErrNotFound) {
		resp.Diagnostics.AddError("Unable to delete ignition config "+state.Pool.ValueString()+"/"+state.Name.ValueString(), err.Error()+poolStoppedNote(err))
	}
}

// ImportState takes <pool>/<name> or the volume key and downloads the content, so an
// imported config plans clean against the configuration that made it.
func (r *ignitionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx, bound := importContext(ctx, r.client, "libvirt_ignition", req.ID)
	defer bound.end(&resp.Diagnostics)
	ref, err := libvirt.ParseVolumeRef(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import id for libvirt_ignition", err.Error())
		return
	}
	summary := "Unable to import ignition config " + ref.String()
	info, err := r.client.VolumeInfo(ctx, ref)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if info.Capacity > maxIgnitionBytes {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("the volume is %d bytes: too large for an ignition config", info.Capacity))
		return
	}
	var buf bytes.Buffer
	if err := r.client.DownloadVolume(ctx, libvirt.VolumeRef{Key: info.Key}, &buf); err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	if !json.Valid(buf.Bytes()) {
		resp.Diagnostics.AddError(summary, "the volume does not hold JSON: not an ignition config")
		return
	}
	m := ignitionModel{
		ID:      types.StringValue(info.Key),
		Name:    types.StringValue(info.Name),
		Pool:    types.StringValue(info.Pool),
		Path:    types.StringValue(info.Path),
		Content: types.StringValue(buf.String()),
		SHA256:  types.StringValue(sha256Hex(buf.Bytes())),
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
